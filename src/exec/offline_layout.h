/* offline_layout.h -- what kernels learn from the offline reader (offline_layout.c). */
#ifndef CUCORE_OFFLINE_LAYOUT_H
#define CUCORE_OFFLINE_LAYOUT_H

#include "object/object.h"

/* Opens the object's code with the reader (the entry for `arch`, 0 = the object's), PTX kinds
 * attached, and finds `symbol`; the caller destroys *bin. */
cucore_status cc_offline_kernel_info(cucore_object *obj, const char *symbol, int arch,
                                     cucore_binary **bin, const cucore_kernel_info **info);
/* A kernel's parameter layout without a GPU (malloc'd *params); *source is "cubin" or "ptx". */
cucore_status cc_offline_layout(cucore_object *obj, const char *symbol, cucore_param_info **params,
                                int *count, const char **source);
/* Adds the PTX-declared kinds and alignments to a layout, when the object has PTX. */
void cc_ptx_apply_kinds(const cucore_object *obj, const char *symbol, cucore_param_info *params,
                        int count);

#endif
