/* args_fill.c -- the leaves of the value specs (`cucore run`, `cucore tune`): buffers and arrays
 * (TYPE[N]=INIT) and their fills (a number, iota, random, {list} or @file), with the random
 * numbers of `random`. One value (args_item_parse) and structs are read by args_item.c, the
 * whole --arg, --global, --read-global and --expect options by args_set.c. A malformed spec is
 * a usage error (exit 2) that quotes it and says what was expected; a file that cannot be used
 * is a failure (exit 1) naming the file. */
#define _DEFAULT_SOURCE /* madvise */
#include "args_spec.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- random numbers ------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

void args_fill_random_seed(unsigned long long seed) {
  rng_state = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t args_fill_random_next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* ---- fills: INIT of buffers and arrays ---------------------------------------------------- */

/* A value args_value_parse refused (r: -1 not a number, -2 out of range): the message says which,
 * with the type's range. */
int args_fill_bad_value(args_cursor *c, int r, const char *what, const char *text, args_elem t,
                        const char *alternatives) {
  if (r == -2)
    return args_cursor_usage(c, "%s`%s` is out of range for %s (%s)", what, text,
                             args_elem_names[t], args_value_range(t));
  return args_cursor_usage(c, "%s`%s` is not a %s value%s", what, text, args_elem_names[t],
                           alternatives);
}

/* 1 (after saying so) when `bytes` are more than half the host's memory: such a fill would
 * be allocated lazily and then killed for memory while being written, not refused. */
static int host_bytes_too_many(const args_cursor *c, size_t bytes) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  unsigned long long host = (unsigned long long)pages * (unsigned long long)page;
  if (bytes <= host / 2) return 0;
  fprintf(stderr,
          "cucore %s: %s `%s`: %zu bytes need more host memory than half of this "
          "machine's %llu bytes (the data is kept on the host too)\n",
          cli_verb_name, c->flag, c->all, bytes, host);
  return 1;
}

/* INIT `@FILE`: the values of a .npy or raw file (which may set *count and the shape). */
static int fill_from_file(args_cursor *c, const char *init, size_t len, args_elem type,
                          size_t *count, unsigned char **data, int *ndim, uint64_t *shape) {
  char *path = args_cursor_dup(init + 1, init + len);
  cli_input_add(path); /* no output may be this file */
  char what[300];
  snprintf(what, sizeof what, "%s `%s`", c->flag, c->all);
  int ndim_local = 1;
  uint64_t shape_local[ARGS_MAX_DIMS];
  int rc = args_data_read(what, path, type, count, data, ndim ? ndim : &ndim_local,
                          shape ? shape : shape_local);
  free(path);
  return rc;
}

/* Parses the n values of the list body [p, end) into data. */
static int parse_list(args_cursor *c, const char *p, const char *end, args_elem type, size_t n,
                      unsigned char *data) {
  size_t esz = (size_t)args_elem_sizes[type];
  for (size_t i = 0; i < n; i++) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    if (!comma) comma = end;
    char *text = args_cursor_dup(p, comma);
    int r = args_value_parse(type, text, data + i * esz);
    int rc = 0;
    if (r) {
      char what[64];
      snprintf(what, sizeof what, "value %zu of the list, ", i);
      rc = args_fill_bad_value(c, r, what, text, type, "");
    }
    free(text);
    if (rc) return rc;
    p = comma + 1;
  }
  return 0;
}

/* INIT `{v,v,...}`: as many values as the list has (which must match a declared count). */
static int fill_list(args_cursor *c, const char *init, size_t len, args_elem type, size_t *count,
                     unsigned char **data, uint64_t *shape) {
  if (init[len - 1] != '}') return args_cursor_usage(c, "a list of values must end with `}`");
  const char *p = init + 1, *end = init + len - 1;
  size_t n = 0;
  for (const char *q = p; q <= end; q++)
    if (q == end || *q == ',') n++;
  if (end == p) n = 0;
  if (n == 0) return args_cursor_usage(c, "the list `{}` is empty");
  if (*count && n != *count)
    return args_cursor_usage(c, "the list has %zu values; [%zu] were declared", n, *count);
  *count = n;
  *data = calloc(n, (size_t)args_elem_sizes[type]);
  if (!*data) return args_cursor_usage(c, "out of memory for %zu values", n);
  int rc = parse_list(c, p, end, type, n, *data);
  if (rc) {
    free(*data);
    *data = NULL;
    return rc;
  }
  if (shape) shape[0] = n;
  return 0;
}

/* Every element of data[0..count) set to the one value INIT names. */
static int fill_value(args_cursor *c, const char *init, size_t len, args_elem type, size_t count,
                      unsigned char *data) {
  size_t esz = (size_t)args_elem_sizes[type];
  char *text = args_cursor_dup(init, init + len);
  unsigned char one[8];
  int r = args_value_parse(type, text, one);
  int rc = r ? args_fill_bad_value(c, r, "", text, type, ", iota, random, {list} or @file") : 0;
  free(text);
  if (rc) return rc;
  /* The first element, then the filled part copied onto the rest, doubling (log2(count)
   * copies, not one call per element). */
  size_t total = count * esz, filled = esz;
  memcpy(data, one, esz);
  while (filled < total) {
    size_t n = filled < total - filled ? filled : total - filled;
    memcpy(data + filled, data, n);
    filled += n;
  }
  return 0;
}

/* `random`: floats uniform in [0, 1) from the top 53 bits of each draw, integers 0..99. The
 * float types of 4 and 8 bytes are written directly (a tune's inputs are often 10^7 floats:
 * through args_value_store they took ~100 ms of an H200 host's rerun of a finished tune);
 * the same values as args_value_store gives. */
static void fill_random(unsigned char *data, args_elem type, size_t n) {
  const double scale = 1.0 / 9007199254740992.0; /* 2^-53 */
  if (type == ARGS_F32) {
    for (size_t i = 0; i < n; i++) {
      float x = (float)((double)(args_fill_random_next() >> 11) * scale);
      memcpy(data + i * sizeof x, &x, sizeof x);
    }
  } else if (type == ARGS_F64) {
    for (size_t i = 0; i < n; i++) {
      double x = (double)(args_fill_random_next() >> 11) * scale;
      memcpy(data + i * sizeof x, &x, sizeof x);
    }
  } else {
    int is_float = args_elem_is_float(type);
    for (size_t i = 0; i < n; i++) {
      uint64_t r = args_fill_random_next();
      args_value_store(data, type, i, is_float ? (double)(r >> 11) * scale : (double)(r % 100));
    }
  }
}

/* `bytes` for values (zeroed when `zero`, else every byte is written next). From 16 MiB on, 2
 * MiB-aligned and marked for transparent huge pages: a tune's 2 x 64 MB of random inputs took
 * 32 768 page faults (~0.1 s of an H200 host's rerun of a finished tune) on 4 KiB pages. */
static unsigned char *alloc_values(size_t bytes, int zero) {
  if (bytes < ((size_t)16 << 20)) return calloc(bytes ? bytes : 1, 1);
  void *p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return NULL;
  (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without THP, 4 KiB pages as before */
  if (zero) memset(p, 0, bytes);
  return p;
}

/* INIT empty (zeroes), `iota`, `random` or one value, for the *count elements declared. */
static int fill_generated(args_cursor *c, const char *init, size_t len, args_elem type,
                          size_t *count, unsigned char **data, uint64_t *shape) {
  size_t esz = (size_t)args_elem_sizes[type];
  if (*count == 0)
    return args_cursor_usage(c, "give the element count in [N] (only a list or a file can set it)");
  if ((unsigned long long)*count > (1ull << 40) / esz)
    return args_cursor_usage(c, "%zu elements of %s are more than 1 TiB", *count,
                             args_elem_names[type]);
  if (host_bytes_too_many(c, *count * esz)) return CLI_EXIT_FAILURE;
  *data = alloc_values(*count * esz, len == 0);
  if (!*data) {
    fprintf(stderr, "cucore %s: %s `%s`: out of host memory for %zu elements\n", cli_verb_name,
            c->flag, c->all, *count);
    return CLI_EXIT_FAILURE;
  }
  if (shape) shape[0] = *count;
  if (len == 4 && memcmp(init, "iota", 4) == 0) {
    for (size_t i = 0; i < *count; i++) args_value_store(*data, type, i, (double)i);
  } else if (len == 6 && memcmp(init, "random", 6) == 0) {
    fill_random(*data, type, *count);
  } else if (len > 0) {
    int rc = fill_value(c, init, len, type, *count, *data);
    if (rc) {
      free(*data);
      *data = NULL;
      return rc;
    }
  }
  return 0;
}

int args_fill_values(args_cursor *c, const char *init, size_t len, args_elem type, size_t *count,
                     unsigned char **data, int *ndim, uint64_t *shape) {
  *data = NULL;
  if (ndim) *ndim = 1;
  if (len > 0 && init[0] == '@')
    return fill_from_file(c, init, len, type, count, data, ndim, shape);
  if (len > 0 && init[0] == '{') return fill_list(c, init, len, type, count, data, shape);
  return fill_generated(c, init, len, type, count, data, shape);
}

/* ---- buffers ----------------------------------------------------------------------------- */

/* `TYPE[N]` at p: the type and count (0 for `[]`); p moves past `]`. */
int args_fill_type_count(args_cursor *c, const char **pp, const char *end, args_elem *type,
                         size_t *count, int allow_empty) {
  const char *p = *pp, *br = memchr(p, '[', (size_t)(end - p));
  int t = br ? args_elem_parse(p, (size_t)(br - p)) : -1;
  if (t < 0)
    return args_cursor_usage(c, "expected TYPE[N] with TYPE one of %s, found `%.*s`",
                             args_elem_list(), (int)((br ? br : end) - p), p);
  const char *close = memchr(br, ']', (size_t)(end - br));
  if (!close) return args_cursor_usage(c, "`[` without `]`");
  *type = (args_elem)t;
  *count = 0;
  if (close == br + 1) {
    if (!allow_empty)
      return args_cursor_usage(c, "give the element count: %s[N]", args_elem_names[t]);
  } else {
    char *text = args_cursor_dup(br + 1, close), *e = NULL;
    unsigned long long n = strtoull(text, &e, 10);
    int bad = text[0] < '0' || text[0] > '9' || *e || n == 0 || n > (1ull << 34);
    free(text);
    if (bad) return args_cursor_usage(c, "the element count in [N] must be 1..2^34");
    *count = (size_t)n;
  }
  *pp = close + 1;
  return 0;
}

/* The type, count and data of buffer b from [p, item_end): `TYPE[N]` for an out buffer
 * (zeroed), `TYPE[N]=INIT` for the others. */
static int buffer_data(args_cursor *c, const char *p, const char *item_end, args_buf *b) {
  int rc = args_fill_type_count(c, &p, item_end, &b->type, &b->count, 1);
  if (rc) return rc;
  if (b->role == ARGS_OUT) {
    if (p != item_end)
      return args_cursor_usage(c, "an out buffer takes no initial value (it starts zeroed); use "
                                  "inout:TYPE[N]=INIT for one that is read and written");
    if (!b->count)
      return args_cursor_usage(c, "give the element count: out:%s[N]", args_elem_names[b->type]);
    return args_fill_values(c, "", 0, b->type, &b->count, &b->host, &b->ndim, b->shape);
  }
  if (p >= item_end || *p != '=')
    return args_cursor_usage(c, "expected =INIT after [N] (a number, random, iota, {list} or "
                                "@file.npy / @file.bin)");
  p++;
  return args_fill_values(c, p, (size_t)(item_end - p), b->type, &b->count, &b->host, &b->ndim,
                          b->shape);
}

/* buf:/out:/inout: TYPE[N][=INIT][>FILE] -> a new buffer and a pointer to it. */
int args_fill_buffer(args_cursor *c, const char *end, args_item *v) {
  args_set *o = c->o;
  const char *p = c->p;
  args_role role = args_cursor_starts(p, end, "buf:")   ? ARGS_IN
                   : args_cursor_starts(p, end, "out:") ? ARGS_OUT
                                                        : ARGS_INOUT;
  const char *kw = role == ARGS_IN ? "buf" : role == ARGS_OUT ? "out" : "inout";
  p += strlen(kw) + 1;
  args_buf b;
  memset(&b, 0, sizeof b);
  snprintf(b.label, sizeof b.label, "%s", c->label);
  b.spec = c->all;
  b.role = role;
  const char *gt = memchr(p, '>', (size_t)(end - p));
  const char *item_end = end;
  if (gt) {
    item_end = gt;
    if (gt + 1 >= end)
      return args_cursor_usage(c, "`>` must be followed by a file (out.npy or out.bin)");
    b.save = args_cursor_dup(gt + 1, end);
  }
  int rc = buffer_data(c, p, item_end, &b);
  args_buf *nb = NULL;
  if (!rc) {
    nb = cli_grow(o->bufs, &o->bufs_cap, (size_t)o->nbufs + 1, sizeof *nb, "the list of buffers");
    if (!nb) rc = CLI_EXIT_FAILURE;
  }
  if (rc) {
    free((void *)b.save);
    free(b.host);
    return rc;
  }
  o->bufs = nb;
  o->bufs[o->nbufs] = b;
  memset(v, 0, sizeof *v);
  v->kind = ARGS_POINTER;
  v->buf = o->nbufs++;
  v->size = v->align = 8;
  return 0;
}

/* ---- items ------------------------------------------------------------------------------- */
