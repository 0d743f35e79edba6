/* npy.c -- NumPy .npy files read and written exactly.
 *
 * The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and minor version byte,
 * the header length (2 bytes little-endian in 1.0; 4 bytes in 2.0 and 3.0), then the header:
 * a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded
 * with spaces and ended by '\n' so the data starts on a multiple of 64 bytes, then the data.
 * The reader takes the dict's keys in any order, either quote, and the spacing Python's repr
 * may produce; it refuses Fortran order, big-endian and structured dtypes, and data whose size
 * is not the shape's. The writer produces numpy 2's bytes: sorted keys, 21 - digits(shape[0])
 * spaces of room to grow the first axis, 64-byte padding (a whole 64 when already aligned). */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- the header dict ---------------------------------------------------------------------- */

typedef struct lit {
  const char *p, *end;
} lit;

static void ws(lit *l) {
  while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r')) l->p++;
}

static int accept(lit *l, char c) {
  ws(l);
  if (l->p < l->end && *l->p == c) {
    l->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes into buf. */
static int string(lit *l, char *buf, size_t n) {
  ws(l);
  if (l->p >= l->end || (*l->p != '\'' && *l->p != '"')) return -1;
  char q = *l->p++;
  size_t len = 0;
  while (l->p < l->end && *l->p != q) {
    if (*l->p == '\\' || len + 1 >= n) return -1;
    buf[len++] = *l->p++;
  }
  if (l->p >= l->end) return -1;
  l->p++;
  buf[len] = '\0';
  return 0;
}

static int word(lit *l, const char *w) {
  ws(l);
  size_t n = strlen(w);
  if ((size_t)(l->end - l->p) >= n && memcmp(l->p, w, n) == 0) {
    l->p += n;
    return 1;
  }
  return 0;
}

/* A non-negative integer (Python may write a trailing L in old files). */
static int integer(lit *l, uint64_t *v) {
  ws(l);
  if (l->p >= l->end || *l->p < '0' || *l->p > '9') return -1;
  uint64_t x = 0;
  while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
    if (x > (UINT64_MAX - 9) / 10) return -1;
    x = x * 10 + (uint64_t)(*l->p++ - '0');
  }
  if (l->p < l->end && *l->p == 'L') l->p++;
  *v = x;
  return 0;
}

/* "(3, 4)", "(3,)", "()" */
static int shape(lit *l, npy_array *a, char *err, size_t errlen) {
  if (!accept(l, '(')) return fail(err, errlen, "'shape' is not a tuple");
  a->ndim = 0;
  if (accept(l, ')')) return 0;
  for (;;) {
    uint64_t v;
    if (integer(l, &v)) return fail(err, errlen, "'shape' holds something other than integers");
    if (a->ndim == NPY_MAX_DIMS)
      return fail(err, errlen, "'shape' has more than %d dimensions", NPY_MAX_DIMS);
    a->shape[a->ndim++] = v;
    if (accept(l, ')')) return 0;
    if (!accept(l, ',')) return fail(err, errlen, "'shape' is not a tuple of integers");
    if (accept(l, ')')) return 0;
  }
}

static int parse_dict(const char *h, size_t n, npy_array *a, char *err, size_t errlen) {
  lit l = {h, h + n};
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!accept(&l, '{')) return fail(err, errlen, "the header is not a dict (no `{`)");
  for (;;) {
    if (accept(&l, '}')) break;
    char key[32];
    if (string(&l, key, sizeof key))
      return fail(err, errlen, "a key of the header dict is not a string");
    if (!accept(&l, ':')) return fail(err, errlen, "no `:` after the key '%s'", key);
    if (strcmp(key, "descr") == 0) {
      ws(&l);
      if (l.p < l.end && *l.p == '[')
        return fail(err, errlen,
                    "the dtype is structured (a list of fields); only plain "
                    "numeric dtypes are read");
      if (string(&l, a->descr, sizeof a->descr))
        return fail(err, errlen, "'descr' is not a dtype string such as '<f4'");
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      int fortran;
      if (word(&l, "True"))
        fortran = 1;
      else if (word(&l, "False"))
        fortran = 0;
      else
        return fail(err, errlen, "'fortran_order' is not True or False");
      if (fortran)
        return fail(err, errlen,
                    "the array is in Fortran order; save it in C order "
                    "(np.save(path, np.ascontiguousarray(a)))");
      have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      if (shape(&l, a, err, errlen)) return -1;
      have_shape = 1;
    } else {
      return fail(err, errlen,
                  "the header has an unknown key '%s' (expected descr, "
                  "fortran_order, shape)",
                  key);
    }
    if (accept(&l, '}')) break;
    if (!accept(&l, ',')) return fail(err, errlen, "the header dict lacks a `,` between entries");
  }
  ws(&l);
  if (l.p != l.end) return fail(err, errlen, "bytes follow the header dict");
  if (!have_descr || !have_order || !have_shape)
    return fail(err, errlen, "the header lacks '%s'",
                !have_descr   ? "descr"
                : !have_order ? "fortran_order"
                              : "shape");
  return 0;
}

/* Checks the dtype string: byte order, kind, size. */
static int dtype(npy_array *a, char *err, size_t errlen) {
  const char *d = a->descr;
  size_t n = strlen(d);
  if (n < 3) return fail(err, errlen, "dtype '%s' is not of the form '<f4'", d);
  char order = d[0];
  if (order == '>')
    return fail(err, errlen,
                "dtype '%s' is big-endian; GPUs are little-endian: convert it "
                "(a.astype(a.dtype.newbyteorder('<')))",
                d);
  if (order != '<' && order != '|' && order != '=')
    return fail(err, errlen, "dtype '%s' has no byte order '<', '|' or '='", d);
  a->kind = d[1];
  if (!strchr("biuf", a->kind))
    return fail(err, errlen, "dtype '%s' is not a boolean, integer or floating-point type", d);
  char *end = NULL;
  unsigned long size = strtoul(d + 2, &end, 10);
  if (*end || size == 0 || size > 16)
    return fail(err, errlen, "dtype '%s' has no size in bytes", d);
  a->itemsize = size;
  return 0;
}

void npy_free(npy_array *a) {
  free(a->data);
  memset(a, 0, sizeof *a);
}

int npy_parse(const unsigned char *buf, size_t len, npy_array *a, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
    return fail(err, errlen, "not a .npy file (it does not start with \\x93NUMPY)");
  int major = buf[6], minor = buf[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail(err, errlen, ".npy format version %d.%d; versions 1.0, 2.0 and 3.0 are read", major,
                minor);
  size_t hstart = major == 1 ? 10 : 12;
  if (len < hstart) return fail(err, errlen, "the file ends inside its preamble (%zu bytes)", len);
  uint64_t hlen = major == 1 ? (uint64_t)(buf[8] | buf[9] << 8)
                             : (uint64_t)buf[8] | (uint64_t)buf[9] << 8 | (uint64_t)buf[10] << 16 |
                                   (uint64_t)buf[11] << 24;
  if (hlen > NPY_MAX_HEADER)
    return fail(err, errlen, "the header claims %llu bytes; at most %u are read",
                (unsigned long long)hlen, NPY_MAX_HEADER);
  if (hlen > len - hstart)
    return fail(err, errlen,
                "the header claims %llu bytes but only %zu follow: the file is "
                "truncated",
                (unsigned long long)hlen, len - hstart);
  const char *h = (const char *)buf + hstart;
  for (uint64_t i = 0; i < hlen; i++)
    if (h[i] == '\0' || ((unsigned char)h[i] >= 0x80 && major < 3))
      return fail(err, errlen, "the header holds a byte (0x%02x at %llu) that is not text",
                  (unsigned char)h[i], (unsigned long long)i);
  if (parse_dict(h, (size_t)hlen, a, err, errlen) || dtype(a, err, errlen)) return -1;
  a->version = major;
  uint64_t count = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] && count > UINT64_MAX / a->shape[i])
      return fail(err, errlen, "the shape's element count overflows");
    count *= a->shape[i];
  }
  size_t data_at = hstart + (size_t)hlen, have = len - data_at;
  if (count > UINT64_MAX / a->itemsize || count * a->itemsize != have)
    return fail(err, errlen,
                "the shape holds %llu elements of %zu bytes = %llu bytes, but %zu bytes of data "
                "follow the header (%s)",
                (unsigned long long)count, a->itemsize,
                count > UINT64_MAX / a->itemsize ? 0ull : (unsigned long long)(count * a->itemsize),
                have,
                count <= UINT64_MAX / a->itemsize && count * a->itemsize > have ? "truncated"
                                                                                : "extra bytes");
  a->count = count;
  a->data = malloc(have ? have : 1);
  if (!a->data) return fail(err, errlen, "out of memory for %zu bytes", have);
  if (have) memcpy(a->data, buf + data_at, have);
  return 0;
}

int npy_header(const char *descr, int ndim, const uint64_t *shape, unsigned char **out,
               size_t *len) {
  *out = NULL;
  *len = 0;
  char dims[NPY_MAX_DIMS * 24 + 8];
  size_t d = 0;
  dims[d++] = '(';
  for (int i = 0; i < ndim; i++)
    d += (size_t)snprintf(dims + d, sizeof dims - d, "%s%llu", i ? ", " : "",
                          (unsigned long long)shape[i]);
  if (ndim == 1) dims[d++] = ',';
  dims[d++] = ')';
  dims[d] = '\0';
  char dict[sizeof dims + 128];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   descr, dims);
  if (n < 0) return -1;
  size_t hl = (size_t)n;
  if (ndim > 0) { /* room to grow the first axis in place */
    char first[24];
    int digits = snprintf(first, sizeof first, "%llu", (unsigned long long)shape[0]);
    for (int i = digits; i < 21; i++) dict[hl++] = ' ';
  }
  /* Version 1.0 when the length fits 2 bytes, else 2.0. */
  for (int version = 1; version <= 2; version++) {
    size_t prefix = version == 1 ? 10 : 12;
    size_t body = hl + 1; /* and the final '\n' */
    size_t pad = 64 - (prefix + body) % 64;
    size_t total = body + pad;
    if (version == 1 && total > 65535) continue;
    unsigned char *h = malloc(prefix + total);
    if (!h) return -1;
    memcpy(h, "\x93NUMPY", 6);
    h[6] = (unsigned char)version;
    h[7] = 0;
    for (size_t b = 0; b < prefix - 8; b++) h[8 + b] = (unsigned char)(total >> (8 * b));
    memcpy(h + prefix, dict, hl);
    memset(h + prefix + hl, ' ', pad);
    h[prefix + total - 1] = '\n';
    *out = h;
    *len = prefix + total;
    return 0;
  }
  return -1;
}

int npy_write_to(FILE *f, const char *descr, int ndim, const uint64_t *shape, const void *data,
                 size_t bytes, char *err, size_t errlen) {
  unsigned char *h = NULL;
  size_t hlen = 0;
  if (ndim < 0 || ndim > NPY_MAX_DIMS || npy_header(descr, ndim, shape, &h, &hlen))
    return fail(err, errlen, "cannot make a header for %d dimensions", ndim);
  errno = 0;
  int ok = fwrite(h, 1, hlen, f) == hlen && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  free(h);
  if (!ok) return fail(err, errlen, "cannot write: %s", strerror(errno ? errno : EIO));
  return 0;
}
