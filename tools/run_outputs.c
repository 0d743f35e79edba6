/* run_outputs.c -- the output files of `cucore run`: every `>FILE` of a buffer or a
 * --read-global, and --json-out, checked before any work (run_outputs_check) and written after
 * the launch (run_outputs_save) through args_data.c's writers. */
#include "cmd_run.h"

#include <stdio.h>

/* What output i is called in messages: "argument 2 (out:f32[4]>y.npy)", "--read-global NAME". */
static const char *output_what(const run_opts *o, int i, char *buf, size_t len) {
  if (i < o->specs.nbufs)
    snprintf(buf, len, "argument %s (%s)", o->specs.bufs[i].label, o->specs.bufs[i].spec);
  else
    snprintf(buf, len, "--read-global %s", o->specs.reads[i - o->specs.nbufs].text);
  return buf;
}

/* Output i's file (NULL when it has none) and element type. */
static const char *output_file(const run_opts *o, int i, args_elem *type) {
  if (i < o->specs.nbufs) {
    *type = o->specs.bufs[i].type;
    return o->specs.bufs[i].save;
  }
  *type = o->specs.reads[i - o->specs.nbufs].type;
  return o->specs.reads[i - o->specs.nbufs].save;
}

int run_outputs_check(const run_opts *o) {
  if (o->json_out) {
    int rc = cli_output_check("run", "--json-out", o->json_out);
    if (rc) return rc;
  }
  for (int i = 0; i < o->specs.nbufs + o->specs.nreads; i++) {
    args_elem type;
    const char *path = output_file(o, i, &type);
    char what[300];
    int rc = path ? args_data_check_output(output_what(o, i, what, sizeof what), path, type) : 0;
    if (rc) return rc;
  }
  return 0;
}

int run_outputs_save(run_opts *o) {
  int failed = 0;
  for (int i = 0; i < o->specs.nbufs + o->specs.nreads; i++) {
    args_elem type;
    const char *path = output_file(o, i, &type);
    if (!path) continue;
    char what[300];
    output_what(o, i, what, sizeof what);
    int rc;
    if (i < o->specs.nbufs) {
      args_buf *b = &o->specs.bufs[i];
      rc = args_data_write(what, path, type, b->count, b->host, b->ndim, b->shape);
      b->save_failed = rc != 0;
    } else {
      args_global_read *r = &o->specs.reads[i - o->specs.nbufs];
      uint64_t shape[1] = {r->count};
      rc = args_data_write(what, path, type, r->count, r->host, 1, shape);
      r->save_failed = rc != 0;
    }
    if (rc && !failed) failed = rc; /* the others are still written */
  }
  return failed;
}
