/* test_reader_cli.c -- `cucore inspect`, run in-process (the verb is compiled into this test
 * until the command's verb table lists it): text for people, one JSON object for programs
 * (checked with Python's json module when python3 is present, and against the API), exit
 * codes and messages. */
#include "reader_support.h"

#include <fcntl.h>

/* The verb and the JSON writer, compiled in. */
#include "../tools/cmd_inspect.c"
#include "../tools/json_write.c"
#include "../tools/files.c"
#include "../tools/source.c"
#include "../tools/compile_log.c"
#include "../tools/outfile.c"
#include "../tools/cache_warn.c"
#include "../tools/nvcc.c"
#include "../tools/messages.c"
#include "../tools/text.c"
#include "../tools/opt.c"
#include "../tools/number.c"
#include "../tools/grow.c"
#include "../tools/phases.c"

typedef struct run_result {
  int rc;
  char *out, *err;
} run_result;

/* Runs `cucore inspect ARGS...` with stdout and stderr captured. */
static run_result inspect(int argc, const char **args) {
  char *outp = rs_printf("%s/cli_out.%ld", rs_cache_dir(), (long)getpid());
  char *errp = rs_printf("%s/cli_err.%ld", rs_cache_dir(), (long)getpid());
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644),
      fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fo, 1);
  dup2(fe, 2);
  char *argv[16];
  argv[0] = (char *)"inspect";
  for (int i = 0; i < argc && i < 14; i++) argv[i + 1] = (char *)args[i];
  argv[argc + 1] = NULL;
  run_result r;
  r.rc = cmd_inspect(argc + 1, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(fo);
  close(fe);
  r.out = cucore_test_read_file(outp, NULL);
  r.err = cucore_test_read_file(errp, NULL);
  remove(outp);
  remove(errp);
  free(outp);
  free(errp);
  return r;
}

static void done(run_result *r) {
  free(r->out);
  free(r->err);
}

static void text_output(void **state) {
  (void)state;
  char *path = rs_all_kernels_cubin("sm_90");
  const char *args[] = {path};
  run_result r = inspect(1, args);
  assert_int_equal(r.rc, 0);
  cucore_binary *bin;
  assert_ok(cucore_binary_open_file(path, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_contains(r.out, "sm_90");
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    char *line = rs_printf("kernel %s\n", k->name);
    assert_contains(r.out, line);
    free(line);
    if (k->demangled) assert_contains(r.out, k->demangled);
  }
  assert_contains(r.out, "registers");
  assert_contains(r.out, "cooperative groups");
  assert_contains(r.out, "cluster dims");
  cucore_binary_destroy(bin);
  done(&r);
  free(path);
}

static void json_output(void **state) {
  (void)state;
  char *path = rs_all_kernels_cubin("sm_90");
  const char *args[] = {path, "--json"};
  run_result r = inspect(2, args);
  assert_int_equal(r.rc, 0);
  assert_true(r.out[0] == '{');
  cucore_binary *bin;
  assert_ok(cucore_binary_open_file(path, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  const cucore_kernel_info *k;
  assert_ok(cucore_binary_find_kernel(bin, "p_structs", &k));
  /* Python's json module reads it, and finds what the API reports. */
  char *out = NULL;
  if (cucore_test_run("python3 -c 'import json'", &out) == 0) {
    char *file = rs_printf("%s/cli.json", rs_cache_dir());
    FILE *f = fopen(file, "w");
    fputs(r.out, f);
    fclose(f);
    char *cmd = rs_printf(
        "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
        "k=[x for x in d[\"kernels\"] if x[\"name\"]==\"p_structs\"][0]; "
        "print(len(d[\"kernels\"]), d[\"arch\"], k[\"registers\"], k[\"const_bytes\"], "
        "\" \".join(\"%%d:%%d\" %% (p[\"offset\"], p[\"size\"]) for p in k[\"params\"]))' '%s'",
        file);
    char *got = NULL;
    assert_int_equal(cucore_test_run(cmd, &got), 0);
    char want[1024];
    int w = snprintf(want, sizeof want, "%u %s %d %d", info.kernel_count, info.arch_name,
                     k->registers, k->const_bytes);
    for (uint32_t p = 0; p < k->param_count; p++)
      w += snprintf(want + w, sizeof want - (size_t)w, "%s%u:%u", p ? " " : " ",
                    k->params[p].offset, k->params[p].size);
    assert_contains(got, want);
    free(got);
    free(cmd);
    free(file);
  } else {
    printf("python3 not found: JSON validity not checked by a JSON parser\n");
  }
  free(out);
  done(&r);
  /* --kernel: one kernel only */
  const char *one[] = {path, "--json", "--kernel", "p_structs"};
  r = inspect(4, one);
  assert_int_equal(r.rc, 0);
  assert_contains(r.out, "\"name\": \"p_structs\"");
  assert_null(strstr(r.out, "\"name\": \"p_pointers\""));
  done(&r);
  cucore_binary_destroy(bin);
  free(path);
}

static void fatbin_and_ptx(void **state) {
  (void)state;
  char *fat = rs_build("params_cli.fatbin",
                       "nvcc -fatbin -gencode arch=compute_80,code=[sm_80,compute_80] "
                       "--compress-mode=speed -o \"$OUT\" params.cu");
  const char *args[] = {fat, "--arch", "sm_86"};
  run_result r = inspect(3, args);
  assert_int_equal(r.rc, 0);
  assert_contains(r.out, "entries");
  assert_contains(r.out, "compute_80");
  assert_contains(r.out, "lz4");
  done(&r);
  const char *json[] = {fat, "--json", "--arch", "8.6"};
  r = inspect(4, json);
  assert_int_equal(r.rc, 0);
  assert_contains(r.out, "\"entries\"");
  assert_contains(r.out, "\"compression\": \"lz4\"");
  assert_contains(r.out, "\"type\": \"float\"");
  done(&r);
  char *ptx = rs_build("params_compute_80.ptx", "nvcc -ptx -arch=compute_80 -o \"$OUT\" params.cu");
  const char *p[] = {ptx, "--kernel", "p_scalars"};
  r = inspect(3, p);
  assert_int_equal(r.rc, 0);
  assert_contains(r.out, "(ptx)");
  assert_contains(r.out, "f32");
  /* PTX's .u64 may be a pointer or a 64-bit integer: the table says so. */
  assert_contains(r.out, "u64 (pointer or 64-bit integer)");
  assert_contains(r.out, "?");
  done(&r);
  free(ptx);
  free(fat);
}

static void errors_and_usage(void **state) {
  (void)state;
  char *path = rs_all_kernels_cubin("sm_90");
  struct {
    int argc;
    const char *args[4];
    int rc;
    const char *says; /* on stderr */
  } cases[] = {
      {0, {NULL}, 2, "no FILE"},
      {2, {path, "--bogus"}, 2, "unknown option `--bogus`"},
      {3, {path, "--arch", "junk"}, 2, "--arch `junk`"},
      {2, {path, "--arch"}, 2, "needs a value"},
      {2, {path, path}, 2, "one FILE only"},
      {1, {"/nonexistent/x.cubin"}, 1, "cannot open `/nonexistent/x.cubin`"},
      {3, {path, "--kernel", "p_structz"}, 1, "p_structs"},
      {3, {path, "--arch", "sm_80"}, 1, "cannot run on sm_80"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_result r = inspect(cases[i].argc, cases[i].args);
    if (r.rc != cases[i].rc)
      fail_msg("case %zu: exit %d, expected %d: %s", i, r.rc, cases[i].rc, r.err);
    assert_contains(r.err, cases[i].says);
    assert_contains(r.err, "cucore inspect");
    assert_string_equal(r.out, "");
    done(&r);
  }
  assert_contains(cmd_inspect_help, "--arch");
  assert_contains(cmd_inspect_help, "--kernel");
  assert_contains(cmd_inspect_help, "--json");
  assert_contains(cmd_inspect_help, "usage: cucore inspect FILE");
  assert_true(strlen(cmd_inspect_summary) < 80);
  free(path);
}

int main(void) {
  rs_require_tools();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_output),
      cmocka_unit_test(json_output),
      cmocka_unit_test(fatbin_and_ptx),
      cmocka_unit_test(errors_and_usage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
