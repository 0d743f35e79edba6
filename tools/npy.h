/* npy.h -- NumPy .npy files read and written exactly (npy.c): format versions 1.0, 2.0 and
 * 3.0, a little-endian (or byte-order-free) scalar dtype, C order, any shape. Hostile input
 * (truncated, oversized header, a dict that does not parse, sizes that do not add up) is an
 * error with a reason, never a crash. */
#ifndef CUCORE_NPY_H
#define CUCORE_NPY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define NPY_MAX_DIMS 32
/* The largest header accepted when reading (NumPy's own reader stops at 10000 bytes unless
 * told otherwise). */
#define NPY_MAX_HEADER (1u << 20)

typedef struct npy_array {
  char descr[16];  /* as written in the file, e.g. "<f4", "|u1" */
  char kind;       /* 'f', 'i', 'u', 'b' ... */
  size_t itemsize; /* bytes per element */
  int ndim;
  uint64_t shape[NPY_MAX_DIMS];
  uint64_t count;      /* product of the shape (1 for a 0-d array) */
  unsigned char *data; /* count * itemsize bytes, malloc'd */
  int version;         /* 1, 2 or 3 */
} npy_array;

/* Parses a whole .npy file held in memory. Returns 0, or -1 with the reason in err. */
int npy_parse(const unsigned char *buf, size_t len, npy_array *out, char *err, size_t errlen);
void npy_free(npy_array *a);
/* The exact bytes numpy.save writes for a C-order array of `descr` and `shape` (its header:
 * version 1.0, or 2.0 when the header needs it; sorted keys, room to grow the first axis,
 * padded to 64 bytes): malloc'd header in *out, its length in *len. Returns 0 or -1. */
int npy_header(const char *descr, int ndim, const uint64_t *shape, unsigned char **out,
               size_t *len);
/* Writes header and data to `f` (the caller opens it, and sees errors of the last buffered
 * bytes when it closes it). Returns 0, or -1 with the reason in err. */
int npy_write_to(FILE *f, const char *descr, int ndim, const uint64_t *shape, const void *data,
                 size_t bytes, char *err, size_t errlen);

#endif
