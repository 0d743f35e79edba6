/* test_fault_driver.c -- every driver and toolkit call of the public operation sequences fails
 * in turn. The driver is the scripted fake of tests/fake/fake_driver.c,
 * NVRTC and nvJitLink the real ones behind the counting shim of tests/fake/fake_toolkit.c.
 * Each sequence runs once clean in a child process to count its calls K; then, for each N in
 * 1..K, a fresh child runs it with call N failing (out of memory, not supported, illegal
 * address, launch failure, invalid value in turn) and checks:
 *   - the public call fails with the injected code kept as its native code and a message that
 *     names the failing entry point, or succeeds with a correct result (a failure it absorbs);
 *   - every handle is destroyed cleanly, and the same sequence run again in the same process
 *     succeeds (handles and state were not left broken), unless the failure was a sticky kernel
 *     fault, after which the message must say the context is unusable;
 *   - nothing crashes (the child exits normally) and nothing leaks (the ASan build's children
 *     exit non-zero on a leak).
 * The fault points covered are printed. Each child is a new process: what the driver loader
 * does once per process (load, cuInit) is covered too. */
#include "support.h"

#include <cuda.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

#define WRONG_RESULT ((cucore_status)0x7fffff00)

static const char *const kernel_src =
    "extern \"C\" __global__ void scale(float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n";

static cucore_status compile(cucore_code_type target, cucore_object **out) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  if (st == CUCORE_OK)
    st = cucore_program_create(CUCORE_CODE_CUDA_CPP, kernel_src, 0, "f.cu", o, &p);
  if (st == CUCORE_OK) st = cucore_program_compile(p, target, out);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return st;
}

/* The first failure of a sequence is kept (later steps are skipped, cleanup still runs). */
#define STEP(call)                                                               \
  do {                                                                           \
    if (st == CUCORE_OK) {                                                       \
      st = (call);                                                               \
      if (st != CUCORE_OK) snprintf(msg, sizeof msg, "%s", cucore_last_error()); \
    }                                                                            \
  } while (0)

static char msg[1024];

/* Devices, streams, events, memory and copies (bytes really move in the fake). */
static cucore_status seq_memory(void) {
  cucore_status st = CUCORE_OK;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cucore_event *ev = NULL;
  cucore_devptr p = 0, q = 0;
  unsigned char in[4096], out[4096];
  for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 7 + 1);
  memset(out, 0, sizeof out);
  STEP(cucore_device_open(0, &dev));
  STEP(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  STEP(cucore_event_create(dev, 0, &ev));
  STEP(cucore_mem_alloc(dev, sizeof in, &p));
  STEP(cucore_memcpy_htod(dev, p, in, sizeof in, s));
  STEP(cucore_memset_d8(dev, p, 0xab, 16, s));
  STEP(cucore_mem_alloc_async(s, sizeof in, &q));
  STEP(cucore_memcpy_dtod(dev, q, p, sizeof in, s));
  STEP(cucore_memcpy_dtoh(dev, out, q, sizeof out, s));
  STEP(cucore_event_record(ev, s));
  STEP(cucore_event_synchronize(ev));
  STEP(cucore_stream_synchronize(s));
  if (st == CUCORE_OK) {
    for (int i = 0; i < 16; i++) in[i] = 0xab;
    if (memcmp(in, out, sizeof in) != 0) st = WRONG_RESULT;
  }
  if (q) STEP(cucore_mem_free_async(s, q));
  if (p) STEP(cucore_mem_free(dev, p));
  cucore_event_destroy(ev);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return st;
}

/* Compile, load, kernel, bind, launch, occupancy, attributes. */
static cucore_status seq_launch(void) {
  cucore_status st = CUCORE_OK;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  cucore_devptr x = 0;
  STEP(cucore_device_open(0, &dev));
  STEP(cucore_stream_create(dev, 0, 0, &s));
  STEP(compile(CUCORE_CODE_CUBIN, &obj));
  STEP(cucore_object_get_kernel(obj, "scale", &k));
  STEP(cucore_mem_alloc(dev, 1024 * sizeof(float), &x));
  STEP(cucore_args_create(k, &a));
  STEP(cucore_args_push_ptr(a, x));
  STEP(cucore_args_push_f32(a, 2.0f));
  STEP(cucore_args_push_i32(a, 1024));
  cucore_launch_config c = {{4, 1, 1}, {256, 1, 1}, 0, s, 0, {{0}}};
  STEP(cucore_launch(k, &c, a));
  STEP(cucore_stream_synchronize(s));
  int blocks = 0, grid = 0, block = 0, regs = -1;
  STEP(cucore_occupancy_max_active_blocks(k, &c, 0, &blocks));
  STEP(cucore_occupancy_best_block_size(k, dev, 0, NULL, NULL, 0, 0, &grid, &block));
  STEP(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_NUM_REGS, &regs));
  if (st == CUCORE_OK && (blocks != 8 || block != 1024 || regs != 16)) st = WRONG_RESULT;
  if (x) cucore_mem_free(dev, x);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return st;
}

/* A graph of two kernel nodes: build, instantiate, upload, launch. */
static cucore_status seq_graph(void) {
  cucore_status st = CUCORE_OK;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  cucore_graph_node *n1 = NULL, *n2 = NULL;
  cucore_devptr x = 0;
  STEP(cucore_device_open(0, &dev));
  STEP(cucore_stream_create(dev, 0, 0, &s));
  STEP(compile(CUCORE_CODE_CUBIN, &obj));
  STEP(cucore_object_get_kernel(obj, "scale", &k));
  STEP(cucore_mem_alloc(dev, 1024 * sizeof(float), &x));
  STEP(cucore_args_create(k, &a));
  STEP(cucore_args_push_ptr(a, x));
  STEP(cucore_args_push_f32(a, 2.0f));
  STEP(cucore_args_push_i32(a, 1024));
  cucore_launch_config c = {{4, 1, 1}, {256, 1, 1}, 0, s, 0, {{0}}};
  STEP(cucore_graph_create(dev, &g));
  STEP(cucore_graph_add_kernel_node(g, NULL, 0, k, &c, a, &n1));
  STEP(cucore_graph_add_kernel_node(g, &n1, 1, k, &c, a, &n2));
  STEP(cucore_graph_instantiate(g, 0, NULL, &e));
  STEP(cucore_graph_upload(e, s));
  STEP(cucore_graph_launch(e, s));
  STEP(cucore_stream_synchronize(s));
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  if (x) cucore_mem_free(dev, x);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return st;
}

/* Stream capture: three launches captured, the graph instantiated and launched. */
static cucore_status seq_capture(void) {
  cucore_status st = CUCORE_OK;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  cucore_devptr x = 0;
  STEP(cucore_device_open(0, &dev));
  STEP(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  STEP(compile(CUCORE_CODE_CUBIN, &obj));
  STEP(cucore_object_get_kernel(obj, "scale", &k));
  STEP(cucore_mem_alloc(dev, 1024 * sizeof(float), &x));
  STEP(cucore_args_create(k, &a));
  STEP(cucore_args_push_ptr(a, x));
  STEP(cucore_args_push_f32(a, 2.0f));
  STEP(cucore_args_push_i32(a, 1024));
  cucore_launch_config c = {{4, 1, 1}, {256, 1, 1}, 0, s, 0, {{0}}};
  int capturing = 0;
  STEP(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  if (st == CUCORE_OK) capturing = 1;
  for (int i = 0; i < 3; i++) STEP(cucore_launch(k, &c, a));
  if (capturing) {
    /* Ended whatever happened, so the stream is usable again. */
    cucore_status end = cucore_stream_end_capture(s, &g);
    if (st == CUCORE_OK && end != CUCORE_OK) {
      st = end;
      snprintf(msg, sizeof msg, "%s", cucore_last_error());
    }
  }
  size_t nodes = 0;
  STEP(cucore_graph_get_node_count(g, &nodes));
  if (st == CUCORE_OK && nodes != 3) st = WRONG_RESULT;
  STEP(cucore_graph_instantiate(g, 0, NULL, &e));
  STEP(cucore_graph_launch(e, s));
  STEP(cucore_stream_synchronize(s));
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  if (x) cucore_mem_free(dev, x);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return st;
}

/* NVRTC and nvJitLink alone (no driver): C++ to PTX and cubin, PTX linked to a cubin. */
static cucore_status seq_toolkit(void) {
  cucore_status st = CUCORE_OK;
  cucore_object *ptx = NULL, *cubin = NULL, *linked = NULL;
  cucore_linker *lk = NULL;
  cucore_options *o = NULL;
  STEP(compile(CUCORE_CODE_PTX, &ptx));
  STEP(compile(CUCORE_CODE_CUBIN, &cubin));
  STEP(cucore_options_create(&o));
  STEP(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  STEP(cucore_linker_create(o, &lk));
  STEP(cucore_linker_add_object(lk, ptx));
  STEP(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &linked));
  int n = 0;
  STEP(cucore_object_get_kernel_count(linked, &n));
  if (st == CUCORE_OK && n != 1) st = WRONG_RESULT;
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
  cucore_object_destroy(linked);
  cucore_object_destroy(cubin);
  cucore_object_destroy(ptx);
  return st;
}

typedef struct report {
  cucore_status first, retry;
  long calls;
  char failed[128];
  char message[1024];
  char retry_message[1024];
} report;

typedef struct sequence {
  const char *name;
  cucore_status (*run)(void);
  int toolkit; /* faults go to NVRTC/nvJitLink, not the driver */
} sequence;

static char shim_path[1024], real_nvrtc[1024], real_jitlink[1024];

/* Runs `seq` in a child with call `fail_at` (-1: none) failing with `code`. */
static int run_child(const sequence *seq, long fail_at, int code, report *r, int *signaled) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    char n[32], c[32];
    snprintf(n, sizeof n, "%ld", fail_at);
    snprintf(c, sizeof c, "%d", code);
    setenv("CUCORE_CACHE_DISABLE", "1", 1);
    if (seq->toolkit) {
      setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
      setenv("CUCORE_NVRTC", shim_path, 1);
      setenv("CUCORE_NVJITLINK", shim_path, 1);
      setenv("CUCORE_FAKE_REAL_NVRTC", real_nvrtc, 1);
      setenv("CUCORE_FAKE_REAL_NVJITLINK", real_jitlink, 1);
      setenv("CUCORE_FAKE_TK_FAIL_AT", n, 1);
    } else {
      setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
      setenv("CUCORE_FAKE_FAIL_AT", n, 1);
      setenv("CUCORE_FAKE_FAIL_CODE", c, 1);
    }
    report out;
    memset(&out, 0, sizeof out);
    msg[0] = '\0';
    out.first = seq->run();
    snprintf(out.message, sizeof out.message, "%s", msg);
    void *lib = dlopen(seq->toolkit ? shim_path : CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
      long (*calls)(void) = (long (*)(void))(uintptr_t)dlsym(lib, seq->toolkit ? "fake_tk_calls"
                                                                               : "fake_calls");
      const char *(*failed)(void) = (const char *(*)(void))(
          uintptr_t)dlsym(lib, seq->toolkit ? "fake_tk_failed_call" : "fake_failed_call");
      if (calls) out.calls = calls();
      if (failed) snprintf(out.failed, sizeof out.failed, "%s", failed());
      dlclose(lib);
    }
    msg[0] = '\0';
    out.retry = seq->run();
    snprintf(out.retry_message, sizeof out.retry_message, "%s", msg);
    ssize_t w = write(fd[1], &out, sizeof out);
    close(fd[1]);
    exit(w == (ssize_t)sizeof out ? 0 : 3);
  }
  close(fd[1]);
  ssize_t got = 0, k;
  while (got < (ssize_t)sizeof *r &&
         (k = read(fd[0], (char *)r + got, sizeof *r - (size_t)got)) > 0)
    got += k;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *signaled = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (*signaled || got != (ssize_t)sizeof *r) return -1;
  return WEXITSTATUS(status);
}

static const int codes[] = {CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_SUPPORTED,
                            CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED,
                            CUDA_ERROR_INVALID_VALUE};

static long total_points, total_reported, total_absorbed;

static void every_fault_point(const sequence *seq) {
  report clean;
  int sig = 0;
  int rc = run_child(seq, -1, 0, &clean, &sig);
  if (rc != 0)
    fail_msg("%s: the clean run's child failed (exit %d, signal %d)", seq->name, rc, sig);
  if (clean.first != CUCORE_OK) fail_msg("%s: the clean run failed: %s", seq->name, clean.message);
  long k = clean.calls;
  assert_true(k > 0);
  long reported = 0, absorbed = 0, problems = 0;
  for (long n = 1; n <= k; n++) {
    int code = seq->toolkit ? 0 : codes[n % 5];
    report r;
    memset(&r, 0, sizeof r);
    rc = run_child(seq, n, code, &r, &sig);
    const char *what = seq->toolkit ? "toolkit call" : "driver call";
    if (rc != 0) {
      print_message("%s: %s %ld of %ld (%s) : the child %s %d\n", seq->name, what, n, k, r.failed,
                    sig ? "died of signal" : "exited", sig ? sig : rc);
      problems++;
      continue;
    }
    if (r.first == WRONG_RESULT || r.retry == WRONG_RESULT) {
      print_message("%s: %s %ld (%s) failing gave a wrong result\n", seq->name, what, n, r.failed);
      problems++;
      continue;
    }
    if (r.first == CUCORE_OK) {
      absorbed++;
      if (getenv("CUCORE_FAULT_VERBOSE"))
        print_message("%s: %s %ld (%s) failed and was absorbed\n", seq->name, what, n, r.failed);
    } else {
      reported++;
      int native_ok = seq->toolkit ? cucore_status_native(r.first) != 0
                                   : cucore_status_native(r.first) == code;
      if (!r.failed[0] || !strstr(r.message, r.failed) || !native_ok) {
        print_message("%s: %s %ld failed (%s, CUresult %d) and the status is %s (native %d): %s\n",
                      seq->name, what, n, r.failed, code, cucore_status_name(r.first),
                      cucore_status_native(r.first), r.message);
        problems++;
      }
    }
    int sticky = code == CUDA_ERROR_ILLEGAL_ADDRESS || code == CUDA_ERROR_LAUNCH_FAILED;
    /* Loading the driver or a toolkit library happens once per process: a failure there
     * leaves it cleanly unusable, the same message naming the call on every later use. */
    static const char *const once[] = {
        "cuInit",           "cuDriverGetVersion",        "cuDeviceGetCount",      "nvrtcVersion",
        "nvJitLinkVersion", "nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs"};
    int load_time = 0;
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++)
      load_time |= strcmp(r.failed, once[i]) == 0;
    if (r.retry != CUCORE_OK && load_time && strstr(r.retry_message, r.failed)) {
      /* cleanly unusable */
    } else if (r.retry != CUCORE_OK && !(sticky && strstr(r.retry_message, "unusable"))) {
      print_message("%s: after %s %ld (%s) failed, the sequence run again fails: %s\n", seq->name,
                    what, n, r.failed, r.retry_message);
      problems++;
    }
  }
  print_message("fault points, %s: %ld %ss, %ld reported with the failing call named, %ld "
                "absorbed with a right result, %ld problems\n",
                seq->name, k, seq->toolkit ? "toolkit call" : "driver call", reported, absorbed,
                problems);
  total_points += k;
  total_reported += reported;
  total_absorbed += absorbed;
  assert_int_equal(problems, 0);
}

static const sequence memory = {"device, streams, events, memory, copies", seq_memory, 0};
static const sequence launch = {"compile, load, kernel, bind, launch, occupancy", seq_launch, 0};
static const sequence graph = {"graph of kernel nodes", seq_graph, 0};
static const sequence toolkit = {"NVRTC and nvJitLink", seq_toolkit, 1};
static const sequence capture = {"stream capture", seq_capture, 0};

static void memory_sequence(void **state) {
  (void)state;
  every_fault_point(&memory);
}
static void launch_sequence(void **state) {
  (void)state;
  every_fault_point(&launch);
}
static void graph_sequence(void **state) {
  (void)state;
  every_fault_point(&graph);
}
static void toolkit_sequence(void **state) {
  (void)state;
  every_fault_point(&toolkit);
}
static void capture_sequence(void **state) {
  (void)state;
  every_fault_point(&capture);
}

static int find_real(const char *file, char *out, size_t cap) {
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = 0; i < 3; i++) {
    if (!roots[i] || !roots[i][0]) continue;
    snprintf(out, cap, "%s/lib64/%s", roots[i], file);
    if (access(out, R_OK) == 0) return 1;
  }
  return 0;
}

int main(void) {
  snprintf(shim_path, sizeof shim_path, "%s", CUCORE_FAKE_TOOLKIT_PATH);
  if (!find_real("libnvrtc.so", real_nvrtc, sizeof real_nvrtc) ||
      !find_real("libnvJitLink.so", real_jitlink, sizeof real_jitlink)) {
    fprintf(stderr, "test_fault_driver: the CUDA toolkit's NVRTC and nvJitLink are needed\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(memory_sequence),
                                     cmocka_unit_test(launch_sequence),
                                     cmocka_unit_test(graph_sequence),
                                     cmocka_unit_test(capture_sequence),
                                     cmocka_unit_test(toolkit_sequence)};
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  printf("fault points covered: %ld (%ld reported, %ld absorbed)\n", total_points, total_reported,
         total_absorbed);
  return rc;
}
