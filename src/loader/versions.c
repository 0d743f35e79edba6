/* versions.c -- what was loaded, from where, which versions.
 *
 * The toolkit libraries are loaded on a second thread while this one loads the driver and
 * runs cuInit (~100 ms on an H100 host, mostly in the kernel driver): `cucore devices` and
 * `cucore version` then wait for the longer of the two, not their sum. Each library's load is
 * its own pthread_once, so the two threads share no state but *out's separate fields. */
#include "loader/loader.h"

#include <pthread.h>
#include <string.h>

static void *describe_toolkit(void *arg) {
  cucore_versions_info *out = arg;
  cc_nvrtc_describe(&out->nvrtc);
  cc_nvjitlink_describe(&out->nvjitlink);
  cc_nvvm_describe(&out->nvvm);
  return NULL;
}

cucore_status cucore_versions(cucore_versions_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_versions", "out");
  memset(out, 0, sizeof *out);
  out->cucore = CUCORE_VERSION_STRING;
  out->toolkit_headers = CUDA_VERSION;
  pthread_t helper;
  int threaded = pthread_create(&helper, NULL, describe_toolkit, out) == 0;
  cc_driver_describe(&out->driver);
  if (threaded)
    pthread_join(helper, NULL);
  else
    describe_toolkit(out); /* no thread to be had: one after the other */
  /* PTX becomes a cubin through nvJitLink, or else through the driver's own linker (which
   * needs a GPU), or not at all. */
  if (out->nvjitlink.loaded)
    out->ptx_linker = "nvJitLink";
  else if (out->driver.loaded && DRV(cuLinkCreate) && cc_drv.device_count > 0)
    out->ptx_linker = "driver (cuLinkCreate/cuLinkAddData/cuLinkComplete; no LTO)";
  else
    out->ptx_linker = NULL;
  cc_begin();
  return CUCORE_OK;
}
