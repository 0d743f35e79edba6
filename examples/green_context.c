/* green_context.c -- split a GPU's SMs between two workloads with green contexts: each gets
 * its own share of SMs and its own stream, and a kernel launched there (through the usual
 * checked launch) counts the distinct SMs it ran on. */
#include <string.h>

#include "common.h"

static const char *source = "extern \"C\" __global__ void mark(unsigned *seen, int nslots) {\n"
                            "  unsigned id; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(id));\n"
                            "  if (threadIdx.x == 0 && id < (unsigned)nslots) seen[id] = 1;\n"
                            "}\n";

enum { SLOTS = 1024 };

/* Launches `mark` with many blocks on `s` and returns how many distinct SMs ran it. */
static int sms_used(cucore_device *dev, cucore_kernel *k, cucore_stream *s, unsigned blocks) {
  cucore_devptr seen = 0;
  CHECK(cucore_mem_alloc(dev, SLOTS * sizeof(unsigned), &seen));
  CHECK(cucore_memset_d8(dev, seen, 0, SLOTS * sizeof(unsigned), NULL));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  int slots = SLOTS;
  CHECK(CUCORE_ARGS(args, seen, slots));
  cucore_launch_config cfg = {.grid = {blocks}, .block = {128}, .stream = s};
  CHECK(cucore_launch(k, &cfg, args));
  CHECK(cucore_stream_synchronize(s));
  static unsigned host[SLOTS];
  CHECK(cucore_memcpy_dtoh(dev, host, seen, sizeof host, NULL));
  int n = 0;
  for (int i = 0; i < SLOTS; i++) n += host[i] != 0;
  cucore_args_destroy(args);
  cucore_mem_free(dev, seen);
  return n;
}

int main(void) {
  cucore_device *dev = open_gpu_or_exit("green_context");
  cucore_green_sm_info info;
  cucore_status st = cucore_green_get_sm_info(dev, &info);
  if (st != CUCORE_OK) {
    printf("green_context: green contexts not available: %s\n", cucore_last_error());
    cucore_device_close(dev);
    return 0;
  }
  printf("device 0: %u SMs; a group is at least %u SMs, a multiple of %u\n", info.sm_count,
         info.min_partition_sms, info.alignment_sms);
  /* two groups of a quarter of the SMs each (rounded by the driver), the rest left over */
  unsigned want = info.sm_count / 4;
  cucore_green *part[2] = {NULL, NULL}, *rest = NULL;
  CHECK(cucore_green_split(dev, 2, want, 0, part, &rest));

  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *mark = NULL;
  CHECK(cucore_object_get_kernel(obj, "mark", &mark));
  int bad = 0;
  for (int i = 0; i < 2; i++) {
    unsigned sms = 0;
    CHECK(cucore_green_get_sm_count(part[i], &sms));
    cucore_stream *s = NULL;
    CHECK(cucore_green_stream_create(part[i], 0, &s));
    int used = sms_used(dev, mark, s, 4 * info.sm_count);
    printf("partition %d: %u SMs; a kernel of %u blocks ran on %d distinct SMs\n", i, sms,
           4 * info.sm_count, used);
    CHECK(cucore_stream_destroy(s));
    bad += used < 1 || used > (int)sms; /* it ran only on its share */
  }
  unsigned left = 0;
  if (rest) CHECK(cucore_green_get_sm_count(rest, &left));
  printf("left over: %u SMs\n", left);

  cucore_kernel_destroy(mark);
  cucore_object_destroy(obj);
  cucore_green_destroy(part[0]);
  cucore_green_destroy(part[1]);
  cucore_green_destroy(rest);
  cucore_device_close(dev);
  return bad ? 1 : 0;
}
