/*
 * pch.c -- NVRTC's precompiled headers (PCH) around a program's compile: the status read back,
 * the heap raised when NVRTC asks, and the log the compile cache keeps.
 *
 * NVRTC keeps PCH data in one heap per process, at an address written into each PCH file, so a
 * PCH is only used by the process that made it, and nvrtcSetPCHHeapSize (which frees and
 * allocates the heap again) must not run while another compile uses it: compiles that use the
 * heap hold a shared lock, and raising the heap takes it alone.
 */
#define _GNU_SOURCE
#include "compile/pch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_rwlock_t heap_lock = PTHREAD_RWLOCK_INITIALIZER;

const char *cucore_pch_status_name(cucore_pch_status status) {
  switch (status) {
  case CUCORE_PCH_NONE: return "none";
  case CUCORE_PCH_CREATED: return "created";
  case CUCORE_PCH_NOT_ATTEMPTED: return "not_attempted";
  case CUCORE_PCH_FAILED: return "failed";
  case CUCORE_PCH_HEAP_EXHAUSTED: return "heap_exhausted";
  }
  return "unknown";
}

int cc_pch_uses_heap(const cucore_options *o) {
  return cc_options_int(o, CUCORE_OPT_PCH) || o->v[CUCORE_OPT_CREATE_PCH].sval ||
         o->v[CUCORE_OPT_USE_PCH].sval;
}

void cc_pch_enter(void) { pthread_rwlock_rdlock(&heap_lock); }
void cc_pch_leave(void) { pthread_rwlock_unlock(&heap_lock); }

cucore_pch_status cc_pch_status(nvrtcProgram prog) {
  if (!NVRTC(nvrtcGetPCHCreateStatus)) return CUCORE_PCH_NONE;
  switch (NVRTC(nvrtcGetPCHCreateStatus)(prog)) {
  case NVRTC_SUCCESS: return CUCORE_PCH_CREATED;
  case NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED: return CUCORE_PCH_NOT_ATTEMPTED;
  case NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED: return CUCORE_PCH_HEAP_EXHAUSTED;
  default: return CUCORE_PCH_FAILED;
  }
}

cucore_status cc_pch_raise_heap(nvrtcProgram prog) {
  if (!NVRTC(nvrtcGetPCHHeapSizeRequired) || !NVRTC(nvrtcSetPCHHeapSize) ||
      !NVRTC(nvrtcGetPCHHeapSize))
    return cc_fail(CUCORE_TOOLKIT_TOO_OLD, "this NVRTC has no PCH heap calls (NVRTC 12.8+)");
  size_t need = 0, have = 0;
  nvrtcResult r = NVRTC(nvrtcGetPCHHeapSizeRequired)(prog, &need);
  if (r != NVRTC_SUCCESS) return cc_fail_nvrtc(r, "nvrtcGetPCHHeapSizeRequired", NULL);
  pthread_rwlock_wrlock(&heap_lock);
  r = NVRTC(nvrtcGetPCHHeapSize)(&have);
  /* Another thread may have raised it already; never shrink it (that frees the PCHs made). */
  if (r == NVRTC_SUCCESS && need > have) r = NVRTC(nvrtcSetPCHHeapSize)(need);
  pthread_rwlock_unlock(&heap_lock);
  if (r != NVRTC_SUCCESS)
    return cc_fail_nvrtc(r, "nvrtcSetPCHHeapSize", "raising the PCH heap to %zu bytes", need);
  return CUCORE_OK;
}

/* NVRTC's lines: `"k.cu": creating precompiled header file "/dir/k_0.pch"` and `... using
 * precompiled header file ...`. */
static int pch_line(const char *line, size_t len) {
  static const char made[] = "\": creating precompiled header file \"",
                    used[] = "\": using precompiled header file \"";
  return line[0] == '"' &&
         (memmem(line, len, made, sizeof made - 1) || memmem(line, len, used, sizeof used - 1));
}

char *cc_pch_log_for_cache(const char *log) {
  if (!log || !strstr(log, " precompiled header file \"")) return NULL;
  size_t n = strlen(log), k = 0;
  char *out = cc_raw_malloc(n + 1);
  if (!out) return NULL; /* out of memory: the entry keeps the log whole */
  for (const char *line = log; *line;) {
    size_t len = strcspn(line, "\n");
    size_t with_nl = len + (line[len] == '\n');
    if (!pch_line(line, len)) {
      memcpy(out + k, line, with_nl);
      k += with_nl;
    }
    line += with_nl;
  }
  out[k] = '\0';
  return out;
}
