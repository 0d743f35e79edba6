/* t4.c -- TuningSchema T4 JSON, one writer for `cucore tune --t4` and `cucore cache tune export
 * --t4`: {"schema_version": "1.0.0", "results": [{configuration, objectives, times
 * {compilation_time, runtimes}, invalidity, correctness, measurements}]}, times in seconds
 * but the measurement's, in ms as its unit says. */
#include <string.h>

#include "t4.h"

void t4_row_result(const cucore_tune_row *r, t4_result *out) {
  if (r->error[0])
    out->invalidity = r->compile_timed_out ? "timeout" : "compile";
  else if (r->config.verdict != CUCORE_TUNE_RUNNABLE)
    out->invalidity = "constraints";
  else if (r->status == CUCORE_TUNE_NOT_MEASURED || r->status == CUCORE_TUNE_OK)
    out->invalidity = "correct";
  else
    out->invalidity = r->status == CUCORE_TUNE_WRONG_ANSWER ? "correctness" : "runtime";
  out->timed = strcmp(out->invalidity, "correct") == 0 && r->status != CUCORE_TUNE_NOT_MEASURED;
  out->median_ms = r->stats.median;
  out->compile_ms = r->compile_ms;
}

static void write_result(json_out *j, const t4_source *src, size_t i) {
  t4_result r = {"correct", 0, 0, 0};
  src->result(src->user, i, &r);
  json_begin_object(j, NULL);
  src->config(src->user, i, j, "configuration");
  json_begin_array(j, "objectives");
  json_str(j, NULL, "time");
  json_end_array(j);
  json_begin_object(j, "times");
  json_num(j, "compilation_time", r.compile_ms / 1000);
  json_begin_array(j, "runtimes");
  if (r.timed) json_num(j, NULL, r.median_ms / 1000);
  json_end_array(j);
  json_end_object(j);
  json_str(j, "invalidity", r.invalidity);
  json_int(j, "correctness", r.timed);
  json_begin_array(j, "measurements");
  if (r.timed) {
    json_begin_object(j, NULL);
    json_str(j, "name", "time");
    json_num(j, "value", r.median_ms);
    json_str(j, "unit", "ms");
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

int t4_write(const char *verb, const char *what, const char *path, const t4_source *src) {
  cli_outfile o;
  if (cli_out_open(&o, verb, what, path)) return CLI_EXIT_FAILURE;
  json_out j;
  memset(&j, 0, sizeof j);
  j.f = o.f;
  j.pretty = 1;
  json_begin_object(&j, NULL);
  json_str(&j, "schema_version", "1.0.0");
  json_begin_array(&j, "results");
  for (size_t i = 0; i < src->n; i++) write_result(&j, src, i);
  json_end_array(&j);
  json_end_object(&j);
  fputc('\n', o.f);
  return cli_out_close(&o, 1);
}
