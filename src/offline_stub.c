/* offline_stub.c -- placeholders until the offline reader lands: layouts without a GPU. */
#include "object.h"

cucore_status cc_offline_layout(cucore_object *obj, const char *symbol, cucore_param_info **params,
                                int *count, const char **source);
void cc_ptx_apply_kinds(const cucore_object *obj, const char *symbol, cucore_param_info *params,
                        int count);

cucore_status cc_offline_layout(cucore_object *obj, const char *symbol, cucore_param_info **params,
                                int *count, const char **source) {
  (void)params;
  (void)count;
  (void)source;
  return cc_fail(CUCORE_NO_DEVICE,
                 "kernel `%s` of `%s`: reading its layout without a GPU needs the offline reader",
                 symbol, obj->name);
}

void cc_ptx_apply_kinds(const cucore_object *obj, const char *symbol, cucore_param_info *params,
                        int count) {
  (void)obj;
  (void)symbol;
  (void)params;
  (void)count;
}
