/*
 * demangle.c -- C++ kernel names made readable, with libstdc++'s __cxa_demangle loaded at run
 * time (cucore links only -ldl and -lpthread). Without libstdc++ names stay mangled: that is
 * never an error.
 */
#define _GNU_SOURCE
#include "binary/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangle_fn;

/* Names longer than this are left mangled (the demangler's work grows with the name). */
#define CC_DEMANGLE_MAX 65536

static void load_demangler(void) {
  void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  void *sym = dlsym(h, "__cxa_demangle");
  /* ISO C forbids converting void* to a function pointer; POSIX guarantees it works. */
  memcpy(&demangle_fn, &sym, sizeof demangle_fn);
}

int cc_demangler_available(void) {
  pthread_once(&demangle_once, load_demangler);
  return demangle_fn != NULL;
}

char *cc_demangle(const char *name) {
  if (!name || name[0] != '_' || name[1] != 'Z') return NULL;
  if (strnlen(name, CC_DEMANGLE_MAX + 1) > CC_DEMANGLE_MAX) return NULL;
  if (!cc_demangler_available()) return NULL;
  int status = -1;
  char *out = demangle_fn(name, NULL, NULL, &status);
  if (status != 0) {
    free(out);
    return NULL;
  }
  return out;
}
