/* ipc_pool.c -- two processes share device memory through a stream-ordered pool.
 *
 * The producer creates a pool that can be shared (CUCORE_POOL_IPC), allocates from it and fills
 * the allocation, then starts a consumer process (this program again, `--consumer FD`) and
 * hands it three things over a Unix socket: the pool, as a file descriptor (SCM_RIGHTS, through
 * cucore_ipc_send_fd), the allocation, as a cucore_ipc_pointer (plain bytes), and an event
 * shared between processes, as a cucore_ipc_event_handle (plain bytes). The producer runs its
 * own kernel on the data (x += 3) and records the event after it, without waiting; the
 * consumer imports all three, makes its stream wait on the event (so its kernel runs after the
 * producer's, with no host round trip), runs a kernel on the memory in place, frees its import
 * and says so. The producer checks the result against the CPU.
 *
 * The order the driver asks for: the allocation is complete before the consumer uses it (the
 * producer synchronises its stream once the allocation and its copy are queued, before its
 * kernel), the producer's kernel before the consumer's (the event), and the consumer's free of
 * its import is complete before the producer frees the allocation (the consumer answers only
 * after synchronising). */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define N (1 << 20)

static const char *source = "extern \"C\" __global__ void scale(float *x, float a, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) x[i] = a * x[i] + 1.0f;\n"
                            "}\n"
                            "extern \"C\" __global__ void add(float *x, float b, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) x[i] += b;\n"
                            "}\n";

/* What the producer sends besides the pool's descriptor. */
typedef struct shared_items {
  cucore_ipc_pointer alloc;
  cucore_ipc_event_handle ready; /* recorded after the producer's kernel */
} shared_items;

/* Launches kernel `name`(x, a, N) of `obj` on `s`. */
static void launch(cucore_object *obj, const char *name, cucore_devptr x, float a,
                   cucore_stream *s) {
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, name, &k));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  int n = N;
  CHECK(CUCORE_ARGS(args, x, a, n));
  cucore_launch_config cfg = {.grid = {(N + 255) / 256}, .block = {256}, .stream = s};
  CHECK(cucore_launch(k, &cfg, args));
  cucore_args_destroy(args); /* the launch copied the arguments */
  cucore_kernel_destroy(k);
}

/* The consumer: imports the pool, the allocation and the event, scales the memory in place
 * after the producer's kernel, answers 'y'. */
static int consumer(int sock) {
  cucore_device *dev = NULL;
  CHECK(cucore_device_open(0, &dev));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  int fd = -1;
  shared_items items;
  CHECK(cucore_ipc_recv_fd(sock, &fd, &items, sizeof items));
  cucore_ipc_pointer shared = items.alloc;
  cucore_mem_pool *pool = NULL;
  CHECK(cucore_mem_pool_import_fd(dev, fd, &pool));
  close(fd); /* the imported pool does not need the descriptor any more */
  cucore_devptr x = 0;
  CHECK(cucore_mem_pool_import_pointer(pool, &shared, &x));
  printf("consumer (pid %d): imported %llu bytes at 0x%llx\n", (int)getpid(),
         (unsigned long long)shared.bytes, (unsigned long long)x);

  cucore_event *ready = NULL;
  CHECK(cucore_event_import_ipc(dev, &items.ready, &ready));
  CHECK(cucore_stream_wait_event(s, ready)); /* after the producer's kernel, on the GPU */

  cucore_object *obj = compile_cuda(source, NULL);
  launch(obj, "scale", x, 2.0f, s);
  /* Free the import on the stream after the kernel, and wait: only then may the producer free
   * the allocation. */
  CHECK(cucore_mem_pool_free_async(pool, s, x));
  CHECK(cucore_stream_synchronize(s));
  CHECK(cucore_mem_pool_destroy(pool));
  char done = 'y';
  if (write(sock, &done, 1) != 1) return 1;
  cucore_event_destroy(ready);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return 0;
}

/* Starts the consumer, a fresh process (fork, then exec at once: CUDA does not survive a
 * fork), with a socket pair: ours is sv[0]. -1 on failure. */
static pid_t start_consumer(const char *argv0, int sv[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("socketpair");
    return -1;
  }
  char sock_arg[16];
  snprintf(sock_arg, sizeof sock_arg, "%d", sv[1]);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) perror("fork");
  if (pid == 0) {
    close(sv[0]);
    execl("/proc/self/exe", argv0, "--consumer", sock_arg, (char *)NULL);
    perror("execl");
    _exit(127);
  }
  close(sv[1]);
  return pid;
}

/* Starts the consumer, hands it the pool's descriptor and the items, and waits for its
 * answer and its exit; 1 when it succeeded. */
static int run_consumer(const char *argv0, int fd, const shared_items *items) {
  int sv[2];
  pid_t pid = start_consumer(argv0, sv);
  if (pid < 0) return 0;
  CHECK(cucore_ipc_send_fd(sv[0], fd, items, sizeof *items));
  close(fd);
  char done = 0;
  ssize_t got = read(sv[0], &done, 1);
  int status = 0;
  waitpid(pid, &status, 0);
  close(sv[0]);
  if (got != 1 || done != 'y' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "ipc_pool: the consumer failed (exit status 0x%x)\n", status);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--consumer") == 0) return consumer(atoi(argv[2]));

  cucore_device *dev = open_gpu_or_exit("ipc_pool");
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_IPC};
  cucore_mem_pool *pool = NULL;
  cucore_status st = cucore_mem_pool_create(dev, &props, &pool);
  if (CUCORE_CODE(st) == CUCORE_NOT_SUPPORTED) {
    printf("ipc_pool: %s; nothing to run\n", cucore_last_error());
    return 0;
  }
  CHECK(st);

  float *host = malloc(N * sizeof *host), *back = malloc(N * sizeof *back);
  for (int i = 0; i < N; i++) host[i] = (float)(i % 1000) * 0.5f;
  cucore_devptr x = 0;
  CHECK(cucore_mem_pool_alloc_async(pool, s, N * sizeof(float), &x));
  CHECK(cucore_memcpy_htod(dev, x, host, N * sizeof(float), s));
  CHECK(cucore_stream_synchronize(s)); /* complete before another process uses it */

  /* The producer's own kernel, and an event after it: the consumer waits on the event. */
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_event *ready = NULL;
  CHECK(cucore_event_create(dev, CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING, &ready));
  launch(obj, "add", x, 3.0f, s);
  CHECK(cucore_event_record(ready, s)); /* no synchronisation: the event orders the consumer */

  int fd = -1;
  shared_items items;
  CHECK(cucore_mem_pool_export_fd(pool, &fd));
  CHECK(cucore_mem_pool_export_pointer(pool, x, &items.alloc));
  CHECK(cucore_event_export_ipc(ready, &items.ready));

  if (!run_consumer(argv[0], fd, &items)) return 1;

  CHECK(cucore_memcpy_dtoh(dev, back, x, N * sizeof(float), s));
  CHECK(cucore_stream_synchronize(s));
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (fabsf(back[i] - (2.0f * (host[i] + 3.0f) + 1.0f)) > 1e-6f) bad++;
  printf("ipc_pool: the consumer scaled %d floats in the producer's pool after the producer's "
         "kernel (an IPC event), %d differ from the CPU\n",
         N, bad);

  CHECK(cucore_mem_pool_free_async(pool, s, x));
  CHECK(cucore_stream_synchronize(s));
  CHECK(cucore_mem_pool_destroy(pool));
  cucore_event_destroy(ready);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  free(host);
  free(back);
  return bad ? 1 : 0;
}
