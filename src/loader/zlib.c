/*
 * zlib.c -- gzip data inflated with zlib (libz.so.1), loaded at run time once per process like
 * the driver and NVML: never linked, and where it is absent only reading a compressed file
 * fails, saying so. zlib.h (Debian's zlib1g-dev) gives the stream's layout and the version
 * the stream is initialised with.
 */
#define _GNU_SOURCE
#include "loader/loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static struct {
  int (*init)(z_streamp, int, const char *, int);
  int (*inflate)(z_streamp, int);
  int (*end)(z_streamp);
  const char *(*version)(void);
} zfn;

static pthread_once_t z_once = PTHREAD_ONCE_INIT;
static char z_failure[512]; /* empty: loaded */

static void load_zlib(void) {
  const char *override = getenv("CUCORE_LIBZ");
  const char *name = override && override[0] ? override : "libz.so.1";
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    snprintf(z_failure, sizeof z_failure,
             "zlib (%s) could not be loaded (%.300s): install zlib1g, or give the file "
             "uncompressed",
             name, why ? why : "unknown reason");
    return;
  }
  *(void **)&zfn.init = dlsym(h, "inflateInit2_");
  *(void **)&zfn.inflate = dlsym(h, "inflate");
  *(void **)&zfn.end = dlsym(h, "inflateEnd");
  *(void **)&zfn.version = dlsym(h, "zlibVersion");
  if (!zfn.init || !zfn.inflate || !zfn.end || !zfn.version)
    snprintf(z_failure, sizeof z_failure,
             "zlib (%s) lacks inflateInit2_, inflate, inflateEnd or zlibVersion", name);
}

int cc_is_gzip(const void *data, size_t size) {
  const unsigned char *b = data;
  return size >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Inflates into a buffer that doubles as it fills; refuses output past `limit` bytes. */
static cucore_status inflate_all(z_stream *z, const char *what, size_t limit, char **out,
                                 size_t *out_size) {
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap + 1);
  for (int r = Z_OK; buf && r != Z_STREAM_END;) {
    if (n == cap) {
      if (cap >= limit)
        return free(buf),
               cc_fail(CUCORE_INVALID_ARGUMENT,
                       "%s: inflates to more than %zu bytes, the most read", what, limit);
      cap = cap * 2 > limit ? limit : cap * 2;
      char *grown = realloc(buf, cap + 1);
      if (!grown) break;
      buf = grown;
    }
    size_t room = cap - n > (1u << 30) ? (1u << 30) : cap - n;
    z->next_out = (Bytef *)buf + n;
    z->avail_out = (uInt)room;
    r = zfn.inflate(z, Z_NO_FLUSH);
    n += room - z->avail_out;
    if (r == Z_BUF_ERROR && z->avail_in == 0)
      return free(buf), cc_fail(CUCORE_INVALID_ARGUMENT,
                                "%s: the gzip data ends early (after %zu bytes inflated)", what, n);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
      return free(buf), cc_fail(CUCORE_INVALID_ARGUMENT, "%s: not valid gzip data (zlib: %s)", what,
                                z->msg ? z->msg : "error");
  }
  if (!buf) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: out of memory inflating", what);
  buf[n] = '\0';
  *out = buf;
  *out_size = n;
  return CUCORE_OK;
}

cucore_status cc_gunzip(const void *data, size_t size, const char *what, size_t limit, char **out,
                        size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  pthread_once(&z_once, load_zlib);
  if (z_failure[0]) return cc_fail(CUCORE_NOT_SUPPORTED, "%s is gzip data: %s", what, z_failure);
  if (size > UINT32_MAX)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu bytes of gzip data, more than 4 GiB", what,
                   size);
  z_stream z;
  memset(&z, 0, sizeof z);
  z.next_in = (Bytef *)(uintptr_t)data;
  z.avail_in = (uInt)size;
  if (zfn.init(&z, 16 + MAX_WBITS, ZLIB_VERSION, (int)sizeof z) != Z_OK)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: zlib could not start inflating", what);
  cucore_status st = inflate_all(&z, what, limit, out, out_size);
  zfn.end(&z);
  return st;
}
