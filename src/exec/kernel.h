/* kernel.h -- kernel internals shared by kernel.c, kernel_foreign.c, args.c and launch.c. */
#ifndef CUCORE_KERNEL_H
#define CUCORE_KERNEL_H

#include "object/object.h"

#define CC_KERNEL_MAX_DEVICES 16

/* What a launch on one device needs to know, read once per kernel and device. */
typedef struct cc_kernel_dev {
  CUcontext ctx; /* the key */
  int ordinal;   /* the device's, for messages (values: a device handle may be closed and */
  CUdevice cudev; /* another opened on the same primary context) */
  CUfunction fn;
  int max_threads, static_smem, max_dyn_smem, regs, local_bytes;
  int req_cluster[3], cluster_must_be_set, non_portable_cluster;
  int dev_max_block[3], dev_max_grid[3], dev_max_threads, smem_optin, sm_count;
  int cluster_launch, coop_launch, regs_per_block, regs_per_sm, arch;
} cc_kernel_dev;

struct cucore_kernel {
  cucore_object *obj; /* a reference is held */
  char *name;         /* symbol */
  char *asked;        /* what the caller asked for (a name expression, or the symbol) */
  int param_count;
  cucore_param_info *params;
  uint32_t param_bytes;
  const char *layout_source;
  CUkernel ckernel; /* NULL until loaded */
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
/* 1 when the driver loads functions lazily (CUDA_MODULE_LOADING; asked once per process). */
int cc_lazy_loading(void);
/* The list of kernel names of an object, for "not found" messages ("" when unknown). */
void cc_object_names_for_message(cucore_object *obj, char *buf, size_t n);

#endif
