/* number.c -- the command's one number reader: every number on a command line is read into
 * its real type with a range check, and a refusal names the range (no (int)strtol truncation:
 * `--block 4294967328` once answered for a block of 32 with exit 0). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const cli_dims cli_dims_grid = {{2147483647u, 65535, 65535}, 0, "blocks"};
const cli_dims cli_dims_block = {{1024, 1024, 64}, 1024, "threads per block"};
const cli_dims cli_dims_cluster = {{16, 16, 16},
                                   16,
                                   "blocks per cluster (the non-portable "
                                   "maximum; 8 is portable)"};

/* A whole decimal number, or -1 when the text is not one; -2 when it is past long long. */
static int read_whole(const char *text, long long *out) {
  const char *s = text + (text[0] == '-' || text[0] == '+');
  if (*s < '0' || *s > '9') return -1;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (*end) return -1;
  if (errno == ERANGE) return -2;
  *out = v;
  return 0;
}

int cli_num_int(const char *verb, const char *flag, const char *text, long long lo, long long hi,
                long long *out) {
  long long v = 0;
  int r = read_whole(text, &v);
  if (r == 0 && v >= lo && v <= hi) {
    *out = v;
    return 0;
  }
  return cli_usage(verb, "%s `%s`: %s; expected a whole number from %lld to %lld", flag, text,
                   r == -1 ? "not a whole number" : "out of range", lo, hi);
}

int cli_num_real(const char *verb, const char *flag, const char *text, double *out) {
  char *end = NULL;
  double x = *text && *text != ' ' ? strtod(text, &end) : 0;
  if (end && end != text && !*end && isfinite(x) && x >= 0) {
    *out = x;
    return 0;
  }
  return cli_usage(verb, "%s `%s`: expected a finite number >= 0", flag, text);
}

static int dims_usage(const char *verb, const char *flag, const char *text, const cli_dims *lim,
                      const char *why) {
  char all[96] = "";
  if (lim->product) snprintf(all, sizeof all, ", at most %llu %s in all", lim->product, lim->what);
  return cli_usage(verb, "%s `%s`: %s; expected X[,Y[,Z]] with x 1..%u, y 1..%u, z 1..%u%s", flag,
                   text, why, lim->max[0], lim->max[1], lim->max[2], all);
}

int cli_num_dims(const char *verb, const char *flag, const char *text, const cli_dims *lim,
                 unsigned d[3]) {
  static const char *const axis[3] = {"x", "y", "z"};
  unsigned v[3] = {1, 1, 1};
  const char *s = text;
  for (int i = 0;; i++) {
    if (i == 3 || *s < '0' || *s > '9') return dims_usage(verb, flag, text, lim, "malformed");
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno == ERANGE || x < 1 || x > lim->max[i]) {
      char why[96];
      snprintf(why, sizeof why, "%s = %.*s is out of range", axis[i], (int)(end - s), s);
      return dims_usage(verb, flag, text, lim, why);
    }
    v[i] = (unsigned)x;
    if (*end == '\0') break;
    if (*end != ',' && *end != 'x') return dims_usage(verb, flag, text, lim, "malformed");
    s = end + 1;
  }
  unsigned long long n = (unsigned long long)v[0] * v[1] * v[2];
  if (lim->product && n > lim->product) {
    char why[96];
    snprintf(why, sizeof why, "x*y*z = %llu is more than %llu", n, lim->product);
    return dims_usage(verb, flag, text, lim, why);
  }
  memcpy(d, v, sizeof v);
  return 0;
}

long long cli_smem_cap(int *arch) {
  int archs[64], n = 0;
  long long best = 0;
  *arch = 0;
  if (cucore_arch_get_list(archs, 64, &n) != CUCORE_OK) return 0;
  for (int i = 0; i < n && i < 64; i++) {
    cucore_arch_limits l;
    if (cucore_arch_get_limits(archs[i], &l) == CUCORE_OK && l.shared_per_block_optin > best) {
      best = l.shared_per_block_optin;
      *arch = archs[i];
    }
  }
  return best;
}

int cli_num_smem(const char *verb, const char *flag, const char *text, long long *out) {
  int arch = 0;
  long long cap = cli_smem_cap(&arch), v = 0;
  if (read_whole(text, &v) == 0 && v >= 0 && v <= cap) {
    *out = v;
    return 0;
  }
  return cli_usage(verb,
                   "%s `%s`: expected bytes from 0 to %lld (%lld KiB: the most dynamic "
                   "shared memory a block can opt into, on sm_%d)",
                   flag, text, cap, cap / 1024, arch);
}
