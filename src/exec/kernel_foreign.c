/*
 * kernel_foreign.c -- kernels made elsewhere, taken in: a CUkernel (context-independent, from
 * any cuLibrary) or a CUfunction (of one context, from cuModuleGetFunction or the runtime's
 * cudaGetFuncBySymbol). The parameter layout comes from the driver; the types are unknown
 * unless a signature is declared (cucore_kernel_declare_signature). The handle is borrowed:
 * its library or module must stay loaded while the cucore kernel lives.
 */
#include "exec/kernel.h"

#include <stdio.h>
#include <stdlib.h>

/* The kernel's name from the driver, or a placeholder naming the handle. */
static const char *name_of(const char *driver_name, const void *handle, char *buf, size_t n) {
  if (driver_name && driver_name[0]) return driver_name;
  snprintf(buf, n, "kernel@%p", handle);
  return buf;
}

/* A kernel named by the driver (`driver_name`, may be NULL) or after `handle`; in *k. */
static cucore_status new_named(const char *driver_name, const void *handle, cucore_kernel **k) {
  char buf[64];
  const char *name = name_of(driver_name, handle, buf, sizeof buf);
  return cc_kernel_new(name, name, k);
}

static cucore_status finish(cucore_kernel *k, cucore_kernel **out) {
  cucore_status st = cc_kernel_driver_layout(k);
  if (st != CUCORE_OK) {
    cucore_kernel_destroy(k);
    return st;
  }
  *out = k;
  return CUCORE_OK;
}

cucore_status cucore_kernel_from_cukernel(void *cukernel, cucore_kernel **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_kernel_from_cukernel", "out");
  *out = NULL;
  CC_CHECK_ARG(cukernel, "cucore_kernel_from_cukernel", "cukernel");
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuKernelGetParamInfo);
  if (st != CUCORE_OK) return st;
  const char *driver_name = NULL;
  if (DRV(cuKernelGetName)) (void)DRV(cuKernelGetName)(&driver_name, (CUkernel)cukernel);
  cucore_kernel *k = NULL;
  st = new_named(driver_name, cukernel, &k);
  if (st != CUCORE_OK) return st;
  k->ckernel = (CUkernel)cukernel;
  return finish(k, out);
}

cucore_status cucore_kernel_from_cufunction(cucore_device *dev, void *cufunction,
                                            cucore_kernel **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_kernel_from_cufunction", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_kernel_from_cufunction", "dev");
  CC_CHECK_ARG(cufunction, "cucore_kernel_from_cufunction", "cufunction");
  cucore_status st = CC_DRV_REQUIRE(cuFuncGetParamInfo);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  /* A usable function of this context answers an attribute query. */
  int regs = 0;
  CUresult r = DRV(cuFuncGetAttribute)(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)cufunction);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_FUNCTION_NOT_LOADED)
    return cc_fail_cu(r, "cuFuncGetAttribute",
                      "cucore_kernel_from_cufunction: %p is not a usable CUfunction of device "
                      "%d's context",
                      cufunction, dev->ordinal);
  const char *driver_name = NULL;
  if (DRV(cuFuncGetName)) (void)DRV(cuFuncGetName)(&driver_name, (CUfunction)cufunction);
  cucore_kernel *k = NULL;
  st = new_named(driver_name, cufunction, &k);
  if (st != CUCORE_OK) return st;
  k->foreign_fn = (CUfunction)cufunction;
  k->foreign_ctx = dev->ctx;
  return finish(k, out);
}
