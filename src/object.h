/* object.h -- ObjectCode internals shared by program.c, linker.c and the kernel code. */
#ifndef CUCORE_OBJECT_H
#define CUCORE_OBJECT_H

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>

struct cucore_object {
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
  pthread_mutex_t lock;
  int loaded;
  CUlibrary library;
  int kernel_count; /* -1 until enumerated */
  char **kernel_names;
};

/* Makes an object that takes ownership of `code` (malloc'd, size+1 bytes, NUL at [size]). */
cucore_status cc_object_new(cucore_code_type type, unsigned char *code, size_t size,
                            const char *name, cucore_object **out);
/* Copies bytes into a NUL-terminated malloc'd buffer. */
unsigned char *cc_copy_code(const void *data, size_t size);
/* Adds / drops a reference (kernels hold one each). */
void cc_object_retain(cucore_object *obj);
void cc_object_release(cucore_object *obj);
/* Detects the code type from the bytes (CUCORE_CODE_AUTO when unknown). */
cucore_code_type cc_sniff_code_type(const void *data, size_t size);
/* Reads a whole file (NUL-terminated); names the path and errno on failure. */
cucore_status cc_read_file(const char *path, unsigned char **data, size_t *size);
/* One nvJitLink input. */
typedef struct cc_link_input {
  cucore_code_type type;
  unsigned char *data;
  size_t size; /* without a PTX's NUL */
  char *name;
  int producer_version;
} cc_link_input;

/* Runs nvJitLink over `inputs` for sm_<arch><suffix> with `opts` (lto adds -lto), giving a
 * cubin (or PTX with want_ptx) and the logs (malloc'd, NULL when empty; either may be NULL). */
cucore_status cc_jitlink(const cucore_options *opts, int arch, const char *suffix, int lto,
                         const cc_link_input *inputs, int count, int want_ptx,
                         unsigned char **out, size_t *out_size, char **info_log,
                         char **error_log);
/* Links `inputs` with nvJitLink into a cubin for sm_<arch><suffix> (used to load LTO-IR). */
cucore_status cc_link_single(const cucore_object *obj, int arch, const char *suffix,
                             unsigned char **cubin, size_t *cubin_size);

#endif
