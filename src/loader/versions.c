/* versions.c -- what was loaded, from where, which versions. */
#include "loader/loader.h"

#include <string.h>

cucore_status cucore_versions(cucore_versions_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_versions", "out");
  memset(out, 0, sizeof *out);
  out->cucore = CUCORE_VERSION_STRING;
  out->toolkit_headers = CUDA_VERSION;
  cc_driver_describe(&out->driver);
  cc_nvrtc_describe(&out->nvrtc);
  cc_nvjitlink_describe(&out->nvjitlink);
  cc_nvvm_describe(&out->nvvm);
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
