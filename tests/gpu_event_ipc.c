/* gpu_event_ipc.c -- an event orders work across processes (label gpu).
 *
 * The parent maps shareable device memory (cucore_vmm_*), zeroes it, queues a kernel that
 * waits for a gate word in that memory and then writes x[i] = 7i + 3, records an interprocess
 * event after it, and at once (no synchronisation) sends a child process (fork + exec) the
 * memory as a file descriptor and the event as a cucore_ipc_event_handle. The child imports
 * both, makes its stream wait on the event, launches y[i] = 2 x[i] + 1 in the same memory and
 * says so; only then does the parent open the gate (a copy on another stream). Every y must
 * see the parent's x, which only the event ordered. The producer gives up after ~10 s and then
 * writes 0xffffffff, so a broken gate fails instead of hanging.
 *
 * The child compiles and loads its kernel (cucore_kernel_load) and says it is ready before the
 * parent launches the producer: under lazy loading (the driver's default) the consumer's first
 * launch would load it then, and a load may wait for the context's work, here the stream
 * waiting on the gated producer -- the launch would return only when the producer gave up. */
#include "gpu_child.h"
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 20)

static const char *src =
    "extern \"C\" __global__ void produce(unsigned *x, volatile unsigned *gate, int n,\n"
    "                                      long long limit) {\n"
    "  long long t0 = clock64(); int open = 0;\n"
    "  while (!(open = *gate) && clock64() - t0 < limit) {}\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = open ? 7u * i + 3u : 0xffffffffu; }\n"
    "extern \"C\" __global__ void consume(const unsigned *x, unsigned *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2u * x[i] + 1u; }\n";

typedef struct message {
  size_t bytes;
  cucore_ipc_event_handle ev;
} message;

/* Compiles and returns kernel `name` (NULL with the reason in `why`). */
static cucore_kernel *kernel(const char *name, cucore_object **obj, char *why, size_t n) {
  cucore_program *p = NULL;
  cucore_kernel *k = NULL;
  cucore_status st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "ipc.cu", NULL, &p);
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, obj);
  if (st == CUCORE_OK) st = cucore_object_get_kernel(*obj, name, &k);
  if (st != CUCORE_OK) snprintf(why, n, "kernel %s: %s", name, cucore_last_error());
  cucore_program_destroy(p);
  return k;
}

static int child_main(int sock) {
  char msg[512] = "";
  cucore_device *d = NULL;
  cucore_stream *s = NULL;
  cucore_event *ev = NULL;
  cucore_vmm_memory *m = NULL;
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  cucore_devptr p = 0;
  message in;
  int fd = -1, n = N;
  cucore_status st = cucore_device_open(0, &d);
  if (st == CUCORE_OK) st = cucore_stream_create(d, CUCORE_STREAM_NON_BLOCKING, 0, &s);
  if (st == CUCORE_OK && !(k = kernel("consume", &obj, msg, sizeof msg))) st = CUCORE_NOT_FOUND;
  if (st == CUCORE_OK) st = cucore_kernel_load(k, d); /* not lazily behind the gated producer */
  char ready = st == CUCORE_OK ? 'R' : 'E';
  (void)!write(sock, &ready, 1); /* the parent launches the producer now */
  if (st == CUCORE_OK) st = cucore_ipc_recv_fd(sock, &fd, &in, sizeof in);
  if (st == CUCORE_OK) st = cucore_event_import_ipc(d, &in.ev, &ev);
  if (st == CUCORE_OK) st = cucore_vmm_import_fd(d, fd, in.bytes, &m);
  if (st == CUCORE_OK) st = cucore_vmm_reserve(d, in.bytes, 0, 0, &p);
  if (st == CUCORE_OK) st = cucore_vmm_map(p, m, 0, in.bytes);
  if (st == CUCORE_OK) st = cucore_vmm_set_access(p, in.bytes, &d, 1, CUCORE_VMM_ACCESS_READWRITE);
  if (st == CUCORE_OK) st = cucore_stream_wait_event(s, ev); /* no host round trip */
  cucore_devptr x = p, y = p + (cucore_devptr)N * 4;
  if (st == CUCORE_OK) st = cucore_args_create(k, &a);
  if (st == CUCORE_OK) st = CUCORE_ARGS(a, x, y, n);
  cucore_launch_config cfg = {.grid = {N / 256, 1, 1}, .block = {256, 1, 1}, .stream = s};
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, a);
  char launched = st == CUCORE_OK ? 'L' : 'E';
  (void)!write(sock, &launched, 1); /* the parent opens the gate now */
  unsigned *h = malloc((size_t)N * 4);
  if (st == CUCORE_OK) st = cucore_memcpy_dtoh(d, h, y, (size_t)N * 4, s);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  if (st != CUCORE_OK && !msg[0]) snprintf(msg, sizeof msg, "child: %s", cucore_last_error());
  for (int i = 0; st == CUCORE_OK && i < N && !msg[0]; i++)
    if (h[i] != 2u * (7u * (unsigned)i + 3u) + 1u)
      snprintf(msg, sizeof msg,
               "child: y[%d] = %u, expected %u: the consumer ran before the "
               "producer's kernel finished",
               i, h[i], 2u * (7u * (unsigned)i + 3u) + 1u);
  free(h);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  if (p) (void)cucore_vmm_unmap(p, in.bytes);
  if (p) (void)cucore_vmm_unreserve(d, p, in.bytes);
  cucore_vmm_release(m);
  cucore_event_destroy(ev);
  cucore_stream_destroy(s);
  cucore_device_close(d);
  (void)!write(sock, msg, sizeof msg);
  return msg[0] != '\0';
}

/* Shareable memory for x, y and the gate, mapped at *p and zeroed; its size. */
static size_t shared_memory(cucore_device *dev, cucore_vmm_memory **m, cucore_devptr *p) {
  size_t g = 0;
  assert_ok(cucore_vmm_get_granularity(dev, CUCORE_VMM_SHAREABLE_FD, &g, NULL));
  size_t bytes = ((size_t)N * 8 + 4 + g - 1) / g * g;
  assert_ok(cucore_vmm_create(dev, bytes, CUCORE_VMM_SHAREABLE_FD, m));
  assert_ok(cucore_vmm_reserve(dev, bytes, 0, 0, p));
  assert_ok(cucore_vmm_map(*p, *m, 0, bytes));
  assert_ok(cucore_vmm_set_access(*p, bytes, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  assert_ok(cucore_memset_d8(dev, *p, 0, bytes, NULL)); /* synchronous: zero before anything */
  return bytes;
}

/* Starts the child and waits until its kernel is compiled and loaded; fails the test with the
 * child's reason when it could not get there. */
static pid_t start_ready_child(int *sock) {
  pid_t pid = gpu_child_start("gpu_event_ipc", sock);
  char ready = 0;
  assert_int_equal(read(*sock, &ready, 1), 1);
  if (ready != 'R') { /* it failed: its `launched` byte ('E'), then what failed */
    char msg[512];
    assert_int_equal(read(*sock, &ready, 1), 1);
    gpu_child_finish(pid, *sock, msg, sizeof msg);
  }
  return pid;
}

static void an_event_orders_two_processes(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL, *s2 = NULL;
  cucore_event *ev = NULL;
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s2));
  size_t bytes = shared_memory(dev, &m, &p);
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING, &ev));
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "produce");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  int n = N;
  long long limit = 20000000000LL; /* ~10 s at 2 GHz */
  cucore_devptr gate = p + (cucore_devptr)N * 8;
  assert_ok(CUCORE_ARGS(a, p, gate, n, limit));
  int fd = -1, sock = -1;
  pid_t pid = start_ready_child(&sock);
  cucore_launch_config cfg = {.grid = {N / 256, 1, 1}, .block = {256, 1, 1}, .stream = s};
  assert_ok(cucore_launch(k, &cfg, a));
  assert_ok(cucore_event_record(ev, s));
  message out = {.bytes = bytes};
  assert_ok(cucore_event_export_ipc(ev, &out.ev));
  /* The gate is closed: not complete (queries keep no message). */
  assert_int_equal(CUCORE_CODE(cucore_event_query(ev)), CUCORE_NOT_READY);
  assert_ok(cucore_vmm_export_fd(m, &fd));
  assert_ok(cucore_ipc_send_fd(sock, fd, &out, sizeof out));
  close(fd);
  char launched = 0;
  assert_int_equal(read(sock, &launched, 1), 1);
  if (CUCORE_CODE(cucore_event_query(ev)) != CUCORE_NOT_READY)
    print_message("warning: the producer finished before the child launched\n");
  unsigned one = 1;
  assert_ok(cucore_memcpy_htod(dev, gate, &one, 4, s2)); /* open the gate */
  assert_ok(cucore_stream_synchronize(s2));
  char msg[512];
  gpu_child_finish(pid, sock, msg, sizeof msg);
  print_message("the child's kernel waited for the parent's through an IPC event\n");
  assert_ok(cucore_stream_synchronize(s));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  assert_ok(cucore_event_destroy(ev));
  assert_ok(cucore_vmm_unmap(p, bytes));
  assert_ok(cucore_vmm_unreserve(dev, p, bytes));
  assert_ok(cucore_vmm_release(m));
  assert_ok(cucore_stream_destroy(s2));
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_device_close(dev));
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(atoi(argv[2]));
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(an_event_orders_two_processes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
