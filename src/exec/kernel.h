/* kernel.h -- kernel internals shared by kernel.c, kernel_foreign.c, args.c and launch.c, and
 * the internal interface graphs (graph/) build on: kernel references, argument copies, and the
 * launch pre-flight a kernel node shares with cucore_launch. */
#ifndef CUCORE_KERNEL_H
#define CUCORE_KERNEL_H

#include "object/object.h"

#include <string.h>

#define CC_KERNEL_MAX_DEVICES 16

/* What a launch on one device needs to know, read once per kernel and device. */
typedef struct cc_kernel_dev {
  CUcontext ctx;  /* the key */
  int ordinal;    /* the device's, for messages (values: a device handle may be closed and */
  CUdevice cudev; /* another opened on the same primary context) */
  CUfunction fn;
  int max_threads, static_smem, max_dyn_smem, regs, local_bytes;
  int req_cluster[3], cluster_must_be_set, non_portable_cluster;
  int dev_max_block[3], dev_max_grid[3], dev_max_threads, smem_optin, sm_count;
  int cluster_launch, coop_launch, regs_per_block, regs_per_sm, arch;
} cc_kernel_dev;

struct cucore_kernel {
  cc_handle hdr;           /* first: the magic word of base/handle.h */
  _Atomic uint64_t serial; /* unique in the process (a freed kernel's address may be reused);
                              renewed when a setting changes what a launch may do, which
                              forgets the launch checks remembered under the old one */
  atomic_int refs;         /* the user's (cucore_kernel_destroy drops it), one per graph using it */
  cucore_object *obj;      /* a reference is held */
  char *name;              /* symbol */
  char *asked;             /* what the caller asked for (a name expression, or the symbol) */
  int param_count;
  cucore_param_info *params;
  uint32_t param_bytes;
  const char *layout_source;
  CUkernel ckernel;      /* NULL until loaded */
  CUfunction foreign_fn; /* a wrapped CUfunction (cucore_kernel_from_cufunction), else NULL */
  CUcontext foreign_ctx; /* its context: the one device it runs on */
  pthread_mutex_t lock;
  atomic_int dev_count;
  cc_kernel_dev devs[CC_KERNEL_MAX_DEVICES];
};

/* The per-device facts for `dev`, read on first use (thread-safe). */
cucore_status cc_kernel_dev_get(cucore_kernel *k, cucore_device *dev, cc_kernel_dev **out);
/* Checks that `smem` dynamic bytes fit beside the static ones on the device and raises the
 * kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES when needed (never lowers it). */
cucore_status cc_kernel_fit_dynamic_smem(cucore_kernel *k, cc_kernel_dev *d, unsigned smem);
/* A kernel handle named `name` (asked for as `asked`), with no layout yet. */
cucore_status cc_kernel_new(const char *name, const char *asked, cucore_kernel **out);
/* Lays the parameters out from the driver (cuKernelGetParamInfo, or cuFuncGetParamInfo for a
 * wrapped CUfunction) and sums their bytes. */
cucore_status cc_kernel_driver_layout(cucore_kernel *k);
/* Adds / drops a reference to a kernel (graphs hold one per kernel they use); the last drop
 * frees it and releases its object. void* to fit reference sets. */
void cc_kernel_retain(void *k);
void cc_kernel_release(void *k);

/* ---- arguments (args.c) -------------------------------------------------------------------- */

/* An argument list (args.c owns it; defined here so the launch paths read it inline). */
struct cucore_args {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  const cucore_kernel *k;
  unsigned char *buf; /* the packed parameter buffer, laid out at the kernel's offsets */
  void **ptrs;        /* kernelParams: ptrs[i] = buf + offset[i] */
  unsigned char *set; /* set[i]: parameter i has a value */
  uint32_t *accept;   /* accept[i] bit g: a value of the setters' type g (args.c) fits
                         parameter i with no message to make (size, kind; alignment 1) */
  int set_count;
  int next;            /* the index of the next push */
  cucore_status error; /* the first error, kept until reset */
  char error_message[512];
  cucore_device *check_dev; /* strict pointer checks against this device, or NULL */
};

/* 1 when `a` passes cc_args_check for `k` (the hot paths' inline test; 0: call it for the
 * message). */
static inline int cc_args_ready(const cucore_args *a, const cucore_kernel *k) {
  return a->k == k && a->error == CUCORE_OK && a->set_count == k->param_count;
}
/* The full-list check of cucore_launch: made for `k`, no error kept, every parameter set. */
cucore_status cc_args_check(const cucore_args *a, const cucore_kernel *k);
/* The kernelParams array (one pointer per parameter into the packed buffer). */
static inline void **cc_args_params(cucore_args *a) { return a->ptrs; }
/* An argument list of `k` holding the values a driver gave back for a kernel node: one
 * pointer per parameter (`params`), or else the packed `buffer` of `buffer_size` bytes (a
 * parameter past its end stays unset). */
cucore_status cc_args_from_driver(const cucore_kernel *k, void *const *params,
                                  const unsigned char *buffer, size_t buffer_size,
                                  cucore_args **out);
/* A copy of `a` (values, which are set, the kept error), for the same kernel. */
cucore_status cc_args_clone(const cucore_args *a, cucore_args **out);
/* Frees an argument list without touching the thread's error state (cucore_args_destroy). */
void cc_args_free(cucore_args *a);
/* Copies the values of `src` into `dst`, made for the same kernel; allocates nothing. */
void cc_args_copy_values(cucore_args *dst, const cucore_args *src);
/* The same when both are complete and without errors (the node-update path): the values
 * alone. */
/* A parameter buffer copied in place: up to 64 bytes (most kernels) word by word, inline,
 * without the call to the C library's memcpy a run-time size costs (the node-update path). */
static inline void cc_args_copy_bytes(unsigned char *dst, const unsigned char *src, size_t n) {
  if (n > 64) {
    memcpy(dst, src, n);
    return;
  }
  for (; n >= 8; n -= 8, dst += 8, src += 8) memcpy(dst, src, 8);
  if (n >= 4) memcpy(dst, src, 4), n -= 4, dst += 4, src += 4;
  if (n >= 2) memcpy(dst, src, 2), n -= 2, dst += 2, src += 2;
  if (n) *dst = *src;
}
static inline void cc_args_copy_ready_values(cucore_args *dst, const cucore_args *src) {
  if (CC_LIKELY(dst->error == CUCORE_OK && dst->set_count == src->set_count)) {
    cc_args_copy_bytes(dst->buf, src->buf, src->k->param_bytes);
    dst->next = src->next;
  } else {
    cc_args_copy_values(dst, src);
  }
}

/* ---- launch pre-flight (launch.c) ---------------------------------------------------------- */

/* A launch's shape once checked: grid and block with unused dimensions 1, their products, and
 * the attributes that changed what was legal. */
typedef struct cc_launch_shape {
  unsigned grid[3], block[3];
  unsigned long long blocks, threads;
  int cooperative;
  const unsigned *cluster; /* the cluster dimension attribute's, or NULL */
} cc_launch_shape;

/* What a launch configuration is for: a launch on a stream, or a kernel node of a graph (which
 * takes the device-updatable attribute a launch refuses). */
enum { CC_LAUNCH_ON_STREAM = 0, CC_LAUNCH_IN_GRAPH = 1 };

/* The pre-flight of a launch of `k` on `dev`, as cucore_launch makes it after the arguments:
 * attribute count, the kernel's facts on the device, block, grid, dynamic shared memory (raised
 * when needed), clusters, attributes, cooperative grids (also when `cooperative_api`). The
 * device's context must be current. Fills *d and *shape. */
cucore_status cc_launch_check(cucore_kernel *k, cucore_device *dev, const cucore_launch_config *cfg,
                              int purpose, int cooperative_api, const char *fn, cc_kernel_dev **d,
                              cc_launch_shape *shape);
/* Explains a launch or kernel node the driver refused (`call` failed with `r`). */
cucore_status cc_launch_explain(cucore_kernel *k, const cc_kernel_dev *d, const cc_launch_shape *s,
                                const cucore_launch_config *cfg, CUresult r, const char *call);

#endif
