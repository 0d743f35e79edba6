/* args_data.c -- the data files of the value specs: inputs read from .npy (over npy.c; checked
 * against the spec's type and count, naming both on a mismatch) or raw .bin files, results
 * written as .npy (with the input's shape when the buffer came from one) or raw bytes. Its
 * messages say "cucore run" as they always did, whichever verb reads the file. */
#include "args_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The dtype NumPy writes for each element type ("" for bf16, which NumPy lacks). */
static const char *const descr_of[ARGS_ELEM_COUNT] = {"|i1", "|u1", "<i2", "<u2", "<i4", "<u4",
                                                      "<i8", "<u8", "<f2", "",    "<f4", "<f8"};

static int is_npy(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

/* 1 when a file's dtype is the spec's type: same kind and size ('<', '|' and '=' are all
 * little-endian here). */
static int same_dtype(const npy_array *a, args_elem t) {
  const char *d = descr_of[t];
  return d[0] && a->kind == d[1] && a->itemsize == (size_t)args_elem_sizes[t];
}

/* The array of a .npy file already read: dtype and count checked against the spec. */
static int npy_take(const char *what, const char *path, const unsigned char *bytes, size_t len,
                    args_elem type, size_t *count, unsigned char **data, int *ndim,
                    uint64_t *shape) {
  if (type == ARGS_BF16) {
    fprintf(stderr,
            "cucore run: %s: `%s`: NumPy has no bfloat16 dtype, so a .npy file cannot "
            "hold bf16 values; give raw little-endian bf16 bytes in a .bin file\n",
            what, path);
    return CLI_EXIT_FAILURE;
  }
  npy_array a;
  char err[512];
  if (npy_parse(bytes, len, &a, err, sizeof err)) {
    fprintf(stderr, "cucore run: %s: `%s`: %s\n", what, path, err);
    return CLI_EXIT_FAILURE;
  }
  if (!same_dtype(&a, type)) {
    fprintf(stderr,
            "cucore run: %s: `%s` holds dtype '%s'; the spec says %s, which is '%s' "
            "(convert it with a.astype('%s'), or change the spec's type)\n",
            what, path, a.descr, args_elem_names[type], descr_of[type], descr_of[type]);
    npy_free(&a);
    return CLI_EXIT_FAILURE;
  }
  if (*count && a.count != *count) {
    fprintf(stderr,
            "cucore run: %s: `%s` holds %llu elements; the spec says [%zu] (write "
            "[] to take the file's count)\n",
            what, path, (unsigned long long)a.count, *count);
    npy_free(&a);
    return CLI_EXIT_FAILURE;
  }
  if (a.count == 0) {
    fprintf(stderr, "cucore run: %s: `%s` holds no elements\n", what, path);
    npy_free(&a);
    return CLI_EXIT_FAILURE;
  }
  *count = (size_t)a.count;
  *data = a.data;
  if (a.ndim >= 1 && a.ndim <= ARGS_MAX_DIMS) {
    *ndim = a.ndim;
    memcpy(shape, a.shape, (size_t)a.ndim * sizeof *shape);
  } else {
    *ndim = 1;
    shape[0] = a.count;
  }
  return 0;
}

/* Raw bytes: a whole number of elements, and [N]'s count when the spec gives one. */
static int raw_take(const char *what, const char *path, unsigned char *bytes, size_t len,
                    args_elem type, size_t *count, unsigned char **data, int *ndim,
                    uint64_t *shape) {
  size_t esz = (size_t)args_elem_sizes[type];
  if (len == 0) {
    fprintf(stderr, "cucore run: %s: `%s` is empty\n", what, path);
    return CLI_EXIT_FAILURE;
  }
  if (len % esz || (*count && len != *count * esz)) {
    fprintf(stderr, "cucore run: %s: `%s` is %zu bytes; %s%zu elements of %s are %zu bytes\n", what,
            path, len, *count ? "" : "a whole number of ", *count ? *count : (size_t)1,
            args_elem_names[type], (*count ? *count : 1) * esz);
    return CLI_EXIT_FAILURE;
  }
  *data = bytes;
  *count = len / esz;
  *ndim = 1;
  shape[0] = *count;
  return 0;
}

/* 1 (after saying why) when bf16 values are to go to a .npy file, which cannot hold them. */
static int bf16_npy(const char *what, const char *path, args_elem type) {
  if (type != ARGS_BF16 || !is_npy(path)) return 0;
  fprintf(stderr,
          "cucore run: %s: `%s`: NumPy has no bfloat16 dtype; write bf16 results to a "
          ".bin file\n",
          what, path);
  return 1;
}

int args_data_check_output(const char *what, const char *path, args_elem type) {
  if (bf16_npy(what, path, type)) return CLI_EXIT_USAGE;
  return cli_output_check("run", what, path);
}

int args_data_read(const char *what, const char *path, args_elem type, size_t *count,
                   unsigned char **data, int *ndim, uint64_t *shape) {
  *data = NULL;
  char verb[256];
  snprintf(verb, sizeof verb, "run: %s", what);
  char *bytes = NULL;
  size_t len = 0;
  if (cli_read_file(verb, path, &bytes, &len)) return CLI_EXIT_FAILURE;
  unsigned char *b = (unsigned char *)bytes;
  int rc = is_npy(path) ? npy_take(what, path, b, len, type, count, data, ndim, shape)
                        : raw_take(what, path, b, len, type, count, data, ndim, shape);
  if (is_npy(path) || rc) free(bytes); /* the raw bytes are the data itself */
  return rc;
}

int args_data_write(const char *what, const char *path, args_elem type, size_t count,
                    const void *data, int ndim, const uint64_t *shape) {
  size_t bytes = count * (size_t)args_elem_sizes[type];
  if (!is_npy(path)) return cli_write_file("run", what, path, data, bytes);
  if (bf16_npy(what, path, type)) return CLI_EXIT_FAILURE;
  uint64_t one[1] = {count};
  uint64_t product = 1;
  for (int i = 0; i < ndim; i++) product *= shape[i];
  if (ndim < 1 || product != count) { /* a shape that no longer fits: write it flat */
    ndim = 1;
    shape = one;
  }
  cli_outfile out;
  int rc = cli_out_open(&out, "run", what, path);
  if (rc) return rc;
  char err[512];
  if (npy_write_to(out.f, descr_of[type], ndim, shape, data, bytes, err, sizeof err)) {
    fprintf(stderr, "cucore run: %s: `%s`: %s\n", what, path, err);
    return cli_out_close(&out, 0);
  }
  return cli_out_close(&out, 1);
}
