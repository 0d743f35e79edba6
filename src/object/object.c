/*
 * object.c -- ObjectCode: compiled code that is only loaded (cuLibraryLoadData from memory,
 * cuLibraryLoadFromFile from disk), lazily, and lists its kernels (exec/kernel.c hands them
 * out). Reference counted: every kernel handed out holds a reference, so the library stays
 * loaded while a kernel lives.
 */
#include "object/object.h"
#include "binary/binary.h"
#include "toolchain/jitlink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cc_object_new(cucore_code_type type, unsigned char *code, size_t size,
                            const char *name, cucore_object **out) {
  *out = NULL;
  cucore_object *o = cc_calloc(1, sizeof *o, "an object");
  if (!o) {
    free(code);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  cc_handle_init(o, CC_KIND_OBJECT);
  o->name = cc_strdup(name ? name : "code", "an object name");
  if (!o->name) {
    free(code);
    free(o);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  atomic_init(&o->refs, 1);
  o->load_opts = (cucore_load_options)CUCORE_LOAD_OPTIONS_INIT;
  o->type = type;
  o->code = code;
  o->size = size;
  o->kernel_count = -1;
  pthread_mutex_init(&o->lock, NULL);
  *out = o;
  return CUCORE_OK;
}

void cc_object_retain(cucore_object *obj) { atomic_fetch_add(&obj->refs, 1); }

void cc_object_release(cucore_object *o) {
  if (!o || atomic_fetch_sub(&o->refs, 1) != 1) return;
  if (o->loaded && DRV(cuLibraryUnload)) (void)DRV(cuLibraryUnload)(o->library);
  for (int i = 0; i < o->expr_count; i++) {
    free(o->exprs[i]);
    free(o->lowered[i]);
  }
  for (int i = 0; i < o->kernel_count; i++) free(o->kernel_names[i]);
  free(o->kernel_names);
  for (int i = 0; i < o->global_name_count; i++) free(o->global_names[i]);
  free(o->global_names);
  free(o->exprs);
  free(o->lowered);
  free(o->ptx);
  free(o->jit_info_log);
  free(o->jit_error_log);
  free(o->code);
  free(o->name);
  free(o->path);
  pthread_mutex_destroy(&o->lock);
  cc_handle_retire(o, CC_KIND_OBJECT);
}

static cucore_status check_loadable_type(cucore_code_type t, const uint8_t *d, size_t n,
                                         const char *fn, const char *name) {
  char buf[200];
  switch (t) {
  case CUCORE_CODE_CUBIN:
  case CUCORE_CODE_PTX:
  case CUCORE_CODE_FATBIN:
  case CUCORE_CODE_LTOIR: return CUCORE_OK;
  case CUCORE_CODE_AUTO:
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: `%s` is not cubin (ELF), fatbin, PTX text or LTO-IR: its bytes are %s", fn,
                   name, cc_code_describe(d, n, buf, sizeof buf));
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `%s` is %s, which is not loadable code; an object takes cubin, PTX, "
                   "fatbin or LTO-IR (compile %s with cucore_program_* or link it first)",
                   fn, name, cucore_code_type_name(t), cucore_code_type_name(t));
  }
}

/* Loadable code whose bytes are of the type declared (*type AUTO: the type they show). */
static cucore_status check_code(const void *data, size_t size, cucore_code_type *type,
                                const char *fn, const char *name) {
  if (size == 0) return cc_fail(CUCORE_INVALID_BINARY, "%s: `%s` is empty (0 bytes)", fn, name);
  cucore_status st = cc_check_code_size(size, fn, "the code");
  if (st != CUCORE_OK) return st;
  if (*type == CUCORE_CODE_AUTO) *type = cc_code_type_guess(data, size);
  st = check_loadable_type(*type, data, size, fn, name);
  return st == CUCORE_OK ? cc_code_type_check(data, size, *type, fn, name) : st;
}

cucore_status cucore_object_from_memory(const void *data, size_t size, cucore_code_type type,
                                        const char *name, cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_object_from_memory", "out");
  *out = NULL;
  CC_CHECK_ARG(data, "cucore_object_from_memory", "data");
  if (!name) name = "code in memory";
  cucore_status st = check_code(data, size, &type, "cucore_object_from_memory", name);
  if (st != CUCORE_OK) return st;
  unsigned char *copy = cc_copy_code(data, size);
  if (!copy) return CUCORE_HOST_OUT_OF_MEMORY;
  return cc_object_new(type, copy, size, name, out);
}

cucore_status cucore_object_from_file(const char *path, cucore_code_type type,
                                      cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_object_from_file", "out");
  *out = NULL;
  CC_CHECK_ARG(path, "cucore_object_from_file", "path");
  unsigned char *data;
  size_t size;
  cucore_status st = cc_read_file(path, &data, &size);
  if (st != CUCORE_OK) return st;
  st = check_code(data, size, &type, "cucore_object_from_file", path);
  if (st != CUCORE_OK) {
    free(data);
    return st;
  }
  st = cc_object_new(type, data, size, path, out);
  if (st != CUCORE_OK) return st;
  (*out)->path = cc_strdup(path, "a path");
  if (!(*out)->path) {
    cc_object_release(*out);
    *out = NULL;
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  return CUCORE_OK;
}

cucore_status cucore_object_destroy(cucore_object *obj) {
  cc_begin();
  if (!obj) return CUCORE_OK;
  /* Shared (kernels, the compile cache and each handle received hold references): it is dead
   * to this check once the last reference is dropped. */
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_destroy", "obj");
  cc_object_release(obj);
  return CUCORE_OK;
}

cucore_status cucore_object_get_code(const cucore_object *obj, cucore_code_type *type,
                                     const void **data, size_t *size) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_code", "obj");
  if (type) *type = obj->type;
  if (data) *data = obj->code;
  if (size) *size = obj->size;
  return CUCORE_OK;
}

cucore_status cucore_object_get_arch(const cucore_object *obj, int *arch) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_arch", "obj");
  CC_CHECK_ARG(arch, "cucore_object_get_arch", "arch");
  *arch = obj->arch;
  return CUCORE_OK;
}

cucore_status cucore_object_get_lowered_name(const cucore_object *obj, const char *expr,
                                             const char **lowered) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_lowered_name", "obj");
  CC_CHECK_ARG(expr, "cucore_object_get_lowered_name", "expr");
  CC_CHECK_ARG(lowered, "cucore_object_get_lowered_name", "lowered");
  *lowered = NULL;
  for (int i = 0; i < obj->expr_count; i++)
    if (strcmp(obj->exprs[i], expr) == 0) {
      *lowered = obj->lowered[i];
      return CUCORE_OK;
    }
  char list[1024] = "";
  size_t len = 0;
  for (int i = 0; i < obj->expr_count && len < sizeof list - 4; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s`%s`", i ? ", " : "", obj->exprs[i]);
  return cc_fail(CUCORE_NOT_FOUND,
                 "name expression `%s` was not registered when `%s` was compiled; %s%s", expr,
                 obj->name, obj->expr_count ? "registered: " : "none were registered",
                 obj->expr_count ? list : "");
}

static cucore_status load_locked(cucore_object *o) {
  if (o->loaded) return CUCORE_OK;
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryLoadData);
  if (st == CUCORE_OK) st = cc_object_load_library(o);
  if (st == CUCORE_OK) o->loaded = 1;
  return st;
}

cucore_status cc_object_load(cucore_object *obj) {
  pthread_mutex_lock(&obj->lock);
  cucore_status st = load_locked(obj);
  pthread_mutex_unlock(&obj->lock);
  return st;
}

cucore_status cucore_object_load(cucore_object *obj) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_load", "obj");
  return cc_object_load(obj);
}

const char *cc_object_symbol(const cucore_object *obj, const char *name) {
  for (int i = 0; i < obj->expr_count; i++)
    if (strcmp(obj->exprs[i], name) == 0) return obj->lowered[i];
  return name;
}

cucore_status cucore_object_get_native(cucore_object *obj, void **culibrary) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_native", "obj");
  CC_CHECK_ARG(culibrary, "cucore_object_get_native", "culibrary");
  pthread_mutex_lock(&obj->lock);
  cucore_status st = load_locked(obj);
  pthread_mutex_unlock(&obj->lock);
  *culibrary = st == CUCORE_OK ? (void *)obj->library : NULL;
  return st;
}

/* Fills the kernel-name list from the offline reader (no GPU, or code not loaded). */
static cucore_status enumerate_offline_locked(cucore_object *o) {
  cucore_binary *bin = NULL;
  cucore_status st = cc_binary_open(o->code, o->size, o->type, o->arch, &bin);
  if (st != CUCORE_OK) return st;
  uint32_t n = bin->info.kernel_count;
  char **names = cc_calloc(n ? n : 1, sizeof *names, "kernel names");
  for (uint32_t i = 0; names && i < n; i++) {
    names[i] = cc_strdup(bin->kernels.items[i].name, "a kernel name");
    if (!names[i]) {
      for (uint32_t j = 0; j < i; j++) free(names[j]);
      free(names);
      names = NULL;
    }
  }
  cucore_binary_destroy(bin);
  if (!names) return CUCORE_HOST_OUT_OF_MEMORY;
  o->kernel_names = names;
  o->kernel_count = (int)n;
  return CUCORE_OK;
}

/* Fills the kernel-name list: from the driver when the code is loaded or a GPU is here (it
 * loads the code), from the offline reader otherwise. */
static cucore_status enumerate_locked(cucore_object *o) {
  if (o->kernel_count >= 0) return CUCORE_OK;
  if (!o->loaded && o->type != CUCORE_CODE_LTOIR) {
    int gpu = cc_driver_load() == CUCORE_OK && cc_drv.device_count > 0;
    cc_begin();
    if (!gpu) return enumerate_offline_locked(o);
  }
  cucore_status st = load_locked(o);
  if (st != CUCORE_OK) return st;
  /* A driver before 12.4 cannot list a library's kernels: the offline reader can (not LTO-IR,
   * whose kernels exist only once linked). */
  if ((!DRV(cuLibraryGetKernelCount) || !DRV(cuLibraryEnumerateKernels) || !DRV(cuKernelGetName)) &&
      o->type != CUCORE_CODE_LTOIR)
    return enumerate_offline_locked(o);
  st = CC_DRV_REQUIRE(cuLibraryGetKernelCount);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryEnumerateKernels);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuKernelGetName);
  if (st != CUCORE_OK) return st;
  unsigned count = 0;
  CUresult r = DRV(cuLibraryGetKernelCount)(&count, o->library);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuLibraryGetKernelCount", "`%s`", o->name);
  CUkernel *ks = cc_calloc(count, sizeof *ks, "kernel handles");
  char **names = cc_calloc(count, sizeof *names, "kernel names");
  if (!ks || !names) {
    free(ks);
    free(names);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  r = count ? DRV(cuLibraryEnumerateKernels)(ks, count, o->library) : CUDA_SUCCESS;
  const char *call = "cuLibraryEnumerateKernels";
  int oom = 0;
  for (unsigned i = 0; r == CUDA_SUCCESS && !oom && i < count; i++) {
    const char *n = NULL;
    r = DRV(cuKernelGetName)(&n, ks[i]);
    if (r != CUDA_SUCCESS)
      call = "cuKernelGetName";
    else if (!(names[i] = cc_strdup(n ? n : "", "a kernel name")))
      oom = 1;
  }
  free(ks);
  if (r != CUDA_SUCCESS || oom) {
    for (unsigned i = 0; i < count; i++) free(names[i]);
    free(names);
    return oom ? CUCORE_HOST_OUT_OF_MEMORY : cc_fail_cu(r, call, "`%s`", o->name);
  }
  o->kernel_names = names;
  o->kernel_count = (int)count;
  return CUCORE_OK;
}

cucore_status cucore_object_get_kernel_count(cucore_object *obj, int *count) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_kernel_count", "obj");
  CC_CHECK_ARG(count, "cucore_object_get_kernel_count", "count");
  *count = 0;
  pthread_mutex_lock(&obj->lock);
  cucore_status st = enumerate_locked(obj);
  if (st == CUCORE_OK) *count = obj->kernel_count;
  pthread_mutex_unlock(&obj->lock);
  return st;
}

cucore_status cucore_object_get_kernel_name(cucore_object *obj, int index, const char **name) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_kernel_name", "obj");
  CC_CHECK_ARG(name, "cucore_object_get_kernel_name", "name");
  *name = NULL;
  pthread_mutex_lock(&obj->lock);
  cucore_status st = enumerate_locked(obj);
  if (st == CUCORE_OK && (index < 0 || index >= obj->kernel_count))
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_object_get_kernel_name: index %d is out of range; `%s` has %d kernels",
                 index, obj->name, obj->kernel_count);
  if (st == CUCORE_OK) *name = obj->kernel_names[index];
  pthread_mutex_unlock(&obj->lock);
  return st;
}

void cc_object_names_for_message(cucore_object *obj, char *buf, size_t n) {
  buf[0] = '\0';
  int count = 0;
  cucore_status st = cucore_object_get_kernel_count(obj, &count);
  cc_begin();
  if (st != CUCORE_OK) return;
  size_t len = 0;
  for (int i = 0; i < count && len + 8 < n; i++) {
    const char *name = NULL;
    if (cucore_object_get_kernel_name(obj, i, &name) != CUCORE_OK) break;
    len += (size_t)snprintf(buf + len, n - len, "%s`%s`", i ? ", " : "", name);
  }
  cc_begin();
}

cucore_status cucore_object_get_ptx(const cucore_object *obj, const char **ptx, size_t *size) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_ptx", "obj");
  CC_CHECK_ARG(ptx, "cucore_object_get_ptx", "ptx");
  *ptx = obj->ptx ? obj->ptx : obj->type == CUCORE_CODE_PTX ? (const char *)obj->code : NULL;
  if (size) *size = obj->ptx ? obj->ptx_size : obj->type == CUCORE_CODE_PTX ? obj->size : 0;
  return CUCORE_OK;
}
