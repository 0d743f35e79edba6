/* object/object.h -- ObjectCode internals shared with the floors above: Program and Linker
 * (compile/) make objects, Kernel (exec/) takes its functions from their libraries. */
#ifndef CUCORE_OBJECT_H
#define CUCORE_OBJECT_H

#include "runtime/runtime.h"

#include <pthread.h>
#include <stdatomic.h>

struct cucore_object {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  atomic_int refs;
  cucore_code_type type;
  unsigned char *code; /* NUL-terminated copy (PTX needs it) */
  size_t size;         /* without the NUL */
  char *name;          /* for messages */
  char *path;          /* set when made from a file: loaded with cuLibraryLoadFromFile */
  int arch;            /* 0 when not tied to one */
  char arch_suffix[4];
  /* name expressions given at compile time and their lowered names */
  int expr_count;
  char **exprs;
  char **lowered;
  /* the PTX the code was made from, when cucore compiled it (parameter types) */
  char *ptx;
  size_t ptx_size;
  int producer_version; /* NVRTC/libNVVM version that made LTO-IR, 0 when unknown */
  /* loading */
  cucore_load_options load_opts;      /* cucore_object_set_load_options, or the defaults */
  char *jit_info_log, *jit_error_log; /* of the last load (NULL: none) */
  pthread_mutex_t lock;
  int loaded;
  CUlibrary library;
  int kernel_count; /* -1 until enumerated */
  char **kernel_names;
  /* symbols of the module variables handed out (cucore_global.name points here) */
  int global_name_count;
  size_t global_name_cap;
  char **global_names;
};

/* Makes an object that takes ownership of `code` (malloc'd, size+1 bytes, NUL at [size]). */
cucore_status cc_object_new(cucore_code_type type, unsigned char *code, size_t size,
                            const char *name, cucore_object **out);
/* Adds / drops a reference (kernels hold one each). */
void cc_object_retain(cucore_object *obj);
void cc_object_release(cucore_object *obj);
/* The object's kernel names ("`a`, `b`") into buf, for "not found" messages ("" when they
 * cannot be listed). Calls cc_begin: the caller's failure that follows is the one kept. */
void cc_object_names_for_message(cucore_object *obj, char *buf, size_t n);
/* Loads the library with the object's load options (load_options.c); the caller holds the
 * object's lock and has checked it is not loaded. */
cucore_status cc_object_load_library(cucore_object *o);
/* Loads the object's code once (the public cucore_object_load without cc_begin). */
cucore_status cc_object_load(cucore_object *obj);
/* The symbol a name stands for: the lowered name of a registered name expression, else the
 * name itself. */
const char *cc_object_symbol(const cucore_object *obj, const char *name);
#endif
