/*
 * offline_layout.c -- what kernels learn from the offline reader: their parameter layout
 * without a GPU (from the cubin, fatbin entry or PTX), and the parameter kinds the PTX
 * declares (for code cucore compiled, or PTX it loaded) whatever gave the layout.
 */
#include "binary/binary.h"
#include "exec/offline_layout.h"

#include <stdlib.h>
#include <string.h>

/* Opens the object's code with the reader, PTX kinds attached, and finds `symbol`. */
cucore_status cc_offline_kernel_info(cucore_object *obj, const char *symbol, int arch,
                                     cucore_binary **bin, const cucore_kernel_info **info) {
  *bin = NULL;
  *info = NULL;
  if (obj->type == CUCORE_CODE_LTOIR)
    return cc_fail(CUCORE_NO_DEVICE,
                   "kernel `%s` of `%s`: LTO-IR must be linked before its layout can be read, "
                   "and linking for a GPU needs one; link it with cucore_linker_* for an arch "
                   "(or compile to cubin) to read it without a GPU",
                   symbol, obj->name);
  cucore_status st = cc_binary_open(obj->code, obj->size, obj->type, arch ? arch : obj->arch, bin);
  if (st != CUCORE_OK) return st;
  if (obj->ptx) (void)cc_binary_attach_ptx(*bin, obj->ptx, obj->ptx_size, NULL);
  *info = cc_binary_lookup(*bin, symbol);
  if (!*info) {
    st = cc_binary_fail_not_found(*bin, symbol);
    cucore_binary_destroy(*bin);
    *bin = NULL;
    return st;
  }
  return CUCORE_OK;
}

cucore_status cc_offline_layout(cucore_object *obj, const char *symbol, cucore_param_info **params,
                                int *count, const char **source) {
  cucore_binary *bin = NULL;
  const cucore_kernel_info *k = NULL;
  cucore_status st = cc_offline_kernel_info(obj, symbol, 0, &bin, &k);
  if (st != CUCORE_OK) return st;
  cucore_param_info *ps = cc_calloc(k->param_count ? k->param_count : 1, sizeof *ps, "a layout");
  if (!ps) {
    cucore_binary_destroy(bin);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  if (k->param_count) memcpy(ps, k->params, k->param_count * sizeof *ps);
  *params = ps;
  *count = (int)k->param_count;
  *source = bin->info.code_type == CUCORE_CODE_PTX ? "ptx" : "cubin";
  cucore_binary_destroy(bin);
  return CUCORE_OK;
}

void cc_ptx_apply_kinds(const cucore_object *obj, const char *symbol, cucore_param_info *params,
                        int count) {
  const char *text = obj->ptx;
  size_t len = obj->ptx_size;
  if (!text && obj->type == CUCORE_CODE_PTX) {
    text = (const char *)obj->code;
    len = obj->size;
  }
  if (!text) return;
  cc_ptx ptx;
  if (cc_ptx_parse_quiet(text, len, 0, &ptx) != CUCORE_OK) return;
  for (uint32_t i = 0; i < ptx.kernels.count; i++) {
    const cucore_kernel_info *k = &ptx.kernels.items[i];
    if (strcmp(k->name, symbol) != 0 || (int)k->param_count != count) continue;
    int same = 1;
    for (int p = 0; p < count; p++) same &= k->params[p].size == params[p].size;
    if (!same) break;
    for (int p = 0; p < count; p++) {
      if (params[p].kind != CUCORE_PARAM_POINTER || k->params[p].kind != CUCORE_PARAM_UNKNOWN)
        params[p].kind = k->params[p].kind;
      if (!params[p].align) params[p].align = k->params[p].align;
    }
    break;
  }
  cc_ptx_free(&ptx);
}
