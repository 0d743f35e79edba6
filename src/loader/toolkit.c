/*
 * toolkit.c -- finds and loads NVRTC, nvJitLink and libNVVM at run time.
 *
 * Search order for each: its override variable (CUCORE_NVRTC, CUCORE_NVJITLINK, CUCORE_NVVM:
 * a full path), then the toolkit roots CUDA_HOME, CUDA_PATH and /usr/local/cuda (newest
 * supported major first), then the loader path. Every place looked at is named when nothing
 * is found.
 */
#define _GNU_SOURCE
#include "loader/loader.h"

#include "base/phase.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

cc_nvrtc cc_rtc;
cc_nvjitlink cc_jl;
cc_nvvm cc_vm;

typedef struct cc_toolkit_lib {
  const char *display;        /* "NVRTC" */
  const char *env;            /* override variable */
  const char *const *subdirs; /* relative to a toolkit root */
  const char *const *files;   /* file names, preferred first */
  int not_found_code;
  int min_version; /* major*1000 + minor*10 */
  /* state */
  pthread_once_t once;
  cucore_status status;
  char path[PATH_MAX];
  char message[2048];
  void *handle;
} cc_toolkit_lib;

static const char *const lib_dirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", NULL};
static const char *const nvvm_dirs[] = {"nvvm/lib64", "lib64", "lib", NULL};
static const char *const nvrtc_files[] = {"libnvrtc.so.13", "libnvrtc.so.12", NULL};
static const char *const jitlink_files[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", NULL};
static const char *const nvvm_files[] = {"libnvvm.so.4", "libnvvm.so", NULL};

static cc_toolkit_lib nvrtc_lib = {
    "NVRTC", "CUCORE_NVRTC",    lib_dirs, nvrtc_files, CUCORE_NVRTC_NOT_FOUND,
    12000,   PTHREAD_ONCE_INIT, 0,        "",          "",
    NULL};
static cc_toolkit_lib jitlink_lib = {"nvJitLink",
                                     "CUCORE_NVJITLINK",
                                     lib_dirs,
                                     jitlink_files,
                                     CUCORE_NVJITLINK_NOT_FOUND,
                                     12000,
                                     PTHREAD_ONCE_INIT,
                                     0,
                                     "",
                                     "",
                                     NULL};
static cc_toolkit_lib nvvm_lib = {
    "libNVVM", "CUCORE_NVVM",     nvvm_dirs, nvvm_files, CUCORE_NVVM_NOT_FOUND,
    2000,      PTHREAD_ONCE_INIT, 0,         "",         "",
    NULL};

static int is_dir(const char *p) {
  struct stat st;
  return p && p[0] && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The toolkit roots in search order, existing directories only. */
static int toolkit_roots(const char *roots[3]) {
  const char *cand[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  int n = 0;
  for (int i = 0; i < 3; i++) {
    if (!is_dir(cand[i])) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= strcmp(roots[j], cand[i]) == 0;
    if (!dup) roots[n++] = cand[i];
  }
  return n;
}

const char *cc_toolkit_root(void) {
  const char *roots[3];
  return toolkit_roots(roots) > 0 ? roots[0] : NULL;
}

int cc_toolkit_roots(const char *roots[3]) { return toolkit_roots(roots); }

static void append(char *buf, size_t cap, const char *fmt, ...) CC_PRINTF(3, 4);
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

static void *try_open(cc_toolkit_lib *lib, const char *name, char *looked, size_t cap) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h) {
    struct link_map *map = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
      snprintf(lib->path, sizeof lib->path, "%s", map->l_name);
    else
      snprintf(lib->path, sizeof lib->path, "%s", name);
    return h;
  }
  const char *why = dlerror();
  append(looked, cap, "\n  %s: %s", name, why ? why : "not loadable");
  return NULL;
}

/* Opens the library: override, toolkit roots, then the loader path. */
static void *open_lib(cc_toolkit_lib *lib, char *looked, size_t cap) {
  const char *override = getenv(lib->env);
  if (override && override[0]) {
    void *h = try_open(lib, override, looked, cap);
    if (!h) append(looked, cap, "\n  (%s names it)", lib->env);
    return h;
  }
  const char *roots[3];
  int nroots = toolkit_roots(roots);
  for (int f = 0; lib->files[f]; f++) {
    for (int r = 0; r < nroots; r++) {
      for (int d = 0; lib->subdirs[d]; d++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s/%s", roots[r], lib->subdirs[d], lib->files[f]);
        if (!is_file(p)) continue;
        void *h = try_open(lib, p, looked, cap);
        if (h) return h;
      }
    }
  }
  if (nroots == 0)
    append(looked, cap, "\n  no toolkit root (CUDA_HOME, CUDA_PATH, /usr/local/cuda) exists");
  else
    for (int r = 0; r < nroots; r++)
      append(looked, cap, "\n  %s: no %s under %s/{%s,...}", roots[r], lib->files[0], roots[r],
             lib->subdirs[0]);
  for (int f = 0; lib->files[f]; f++) {
    void *h = try_open(lib, lib->files[f], looked, cap);
    if (h) return h;
  }
  return NULL;
}

/* The file open_lib would try first under the override or the toolkit roots, without loading
 * it: 0, or -1 when only loading would tell (a bare override name, or nothing under the
 * roots, so the loader path decides). */
static int locate_lib(const cc_toolkit_lib *lib, char *out, size_t cap) {
  const char *override = getenv(lib->env);
  if (override && override[0]) {
    if (!strchr(override, '/')) return -1;
    snprintf(out, cap, "%s", override);
    return 0;
  }
  const char *roots[3];
  int nroots = toolkit_roots(roots);
  for (int f = 0; lib->files[f]; f++)
    for (int r = 0; r < nroots; r++)
      for (int d = 0; lib->subdirs[d]; d++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s/%s", roots[r], lib->subdirs[d], lib->files[f]);
        if (is_file(p)) {
          snprintf(out, cap, "%s", p);
          return 0;
        }
      }
  return -1;
}

int cc_nvrtc_locate(char *out, size_t cap) { return locate_lib(&nvrtc_lib, out, cap); }
int cc_nvjitlink_locate(char *out, size_t cap) { return locate_lib(&jitlink_lib, out, cap); }
int cc_nvvm_locate(char *out, size_t cap) { return locate_lib(&nvvm_lib, out, cap); }

/* Loads `lib` and fills `slots`; returns 0 on success, filling lib->message otherwise. */
static int load_lib(cc_toolkit_lib *lib, cc_symbol_slot *slots, size_t nslots) {
  char looked[1536] = "";
  lib->handle = open_lib(lib, looked, sizeof looked);
  if (!lib->handle) {
    lib->status = cc_status(lib->not_found_code, CUCORE_SOURCE_NONE, 0);
    snprintf(lib->message, sizeof lib->message,
             "%s not found; looked at:%s\nInstall the CUDA toolkit, set CUDA_HOME to it, or set "
             "%s to the library's full path",
             lib->display, looked, lib->env);
    return -1;
  }
  for (size_t i = 0; i < nslots; i++) {
    *slots[i].slot = dlsym(lib->handle, slots[i].name);
    if (!*slots[i].slot && slots[i].required) {
      lib->status = cc_status(CUCORE_TOOLKIT_TOO_OLD, CUCORE_SOURCE_NONE, 0);
      snprintf(lib->message, sizeof lib->message,
               "%s at %s lacks %s: it is too old for cucore (CUDA %d.%d or newer is needed)",
               lib->display, lib->path, slots[i].name, lib->min_version / 1000,
               lib->min_version % 1000 / 10);
      return -1;
    }
  }
  return 0;
}

/* The cucore code of each library's results (also used by cc_fail_nvrtc and the others). */
static int nvrtc_code(nvrtcResult r);
static int jitlink_code(nvJitLinkResult r);
static int nvvm_code(nvvmResult r);
static const char *jitlink_text(nvJitLinkResult r);

/* The library loaded but its version query failed: unusable, and the message says so (not
 * "version 0.0 is too old"). */
static void version_failed(cc_toolkit_lib *lib, int code, cucore_source src, int native,
                           const char *call, const char *text) {
  lib->status = cc_status(code, src, native);
  snprintf(lib->message, sizeof lib->message, "%s failed: %s (%d): %s at %s cannot be used", call,
           text ? text : "error", native, lib->display, lib->path);
}

static void check_min_version(cc_toolkit_lib *lib, int version) {
  if (version >= lib->min_version) return;
  lib->status = cc_status(CUCORE_TOOLKIT_TOO_OLD, CUCORE_SOURCE_NONE, 0);
  snprintf(lib->message, sizeof lib->message,
           "%s at %s is version %d.%d; cucore needs %d.%d or newer", lib->display, lib->path,
           version / 1000, version % 1000 / 10, lib->min_version / 1000,
           lib->min_version % 1000 / 10);
}

static void load_nvrtc(void) {
  cc_symbol_slot slots[] = {
#define CC_SYM(ret, name, params, req) {#name, (void **)&cc_rtc.fn_##name, req},
      CC_NVRTC_SYMBOLS(CC_SYM)
#undef CC_SYM
  };
  if (load_lib(&nvrtc_lib, slots, CC_ARRAY_LEN(slots))) return;
  int major = 0, minor = 0;
  nvrtcResult r = NVRTC(nvrtcVersion)(&major, &minor);
  if (r != NVRTC_SUCCESS) {
    version_failed(&nvrtc_lib, nvrtc_code(r), CUCORE_SOURCE_NVRTC, (int)r, "nvrtcVersion",
                   NVRTC(nvrtcGetErrorString)(r));
    return;
  }
  cc_rtc.version = major * 1000 + minor * 10;
  check_min_version(&nvrtc_lib, cc_rtc.version);
}

static void load_nvjitlink(void) {
  cc_symbol_slot slots[] = {
#define CC_SYM(ret, name, params, req) {#name, (void **)&cc_jl.fn_##name, req},
      CC_NVJITLINK_SYMBOLS(CC_SYM)
#undef CC_SYM
  };
  if (load_lib(&jitlink_lib, slots, CC_ARRAY_LEN(slots))) return;
  unsigned major = 0, minor = 0;
  nvJitLinkResult r = JITLINK(nvJitLinkVersion)(&major, &minor);
  if (r != NVJITLINK_SUCCESS) {
    version_failed(&jitlink_lib, jitlink_code(r), CUCORE_SOURCE_NVJITLINK, (int)r,
                   "nvJitLinkVersion", jitlink_text(r));
    return;
  }
  cc_jl.version = (int)(major * 1000 + minor * 10);
  check_min_version(&jitlink_lib, cc_jl.version);
}

static void load_nvvm(void) {
  cc_symbol_slot slots[] = {
#define CC_SYM(ret, name, params, req) {#name, (void **)&cc_vm.fn_##name, req},
      CC_NVVM_SYMBOLS(CC_SYM)
#undef CC_SYM
  };
  if (load_lib(&nvvm_lib, slots, CC_ARRAY_LEN(slots))) return;
  int major = 0, minor = 0, irmaj = 0, irmin = 0, dmaj = 0, dmin = 0;
  nvvmResult r = NVVM(nvvmVersion)(&major, &minor);
  if (r != NVVM_SUCCESS) {
    version_failed(&nvvm_lib, nvvm_code(r), CUCORE_SOURCE_NVVM, (int)r, "nvvmVersion",
                   NVVM(nvvmGetErrorString)(r));
    return;
  }
  cc_vm.version = major * 1000 + minor * 10;
  if (NVVM(nvvmIRVersion)(&irmaj, &irmin, &dmaj, &dmin) == NVVM_SUCCESS)
    cc_vm.ir_version = irmaj * 1000 + irmin * 10;
  check_min_version(&nvvm_lib, cc_vm.version);
}

static cucore_status finish(cc_toolkit_lib *lib) {
  if (CC_LIKELY(lib->status == CUCORE_OK)) return CUCORE_OK;
  return cc_fail(lib->status, "%s", lib->message);
}

/* Each load, timed as its phase (pthread_once takes a function without arguments). */
static void timed_nvrtc(void) {
  int64_t t0 = cc_phase_clock();
  load_nvrtc();
  cc_phase_done(CUCORE_PHASE_LOAD_NVRTC, t0);
}

static void timed_nvjitlink(void) {
  int64_t t0 = cc_phase_clock();
  load_nvjitlink();
  cc_phase_done(CUCORE_PHASE_LOAD_NVJITLINK, t0);
}

static void timed_nvvm(void) {
  int64_t t0 = cc_phase_clock();
  load_nvvm();
  cc_phase_done(CUCORE_PHASE_LOAD_NVVM, t0);
}

cucore_status cc_nvrtc_load(void) {
  pthread_once(&nvrtc_lib.once, timed_nvrtc);
  return finish(&nvrtc_lib);
}

cucore_status cc_nvjitlink_load(void) {
  pthread_once(&jitlink_lib.once, timed_nvjitlink);
  return finish(&jitlink_lib);
}

cucore_status cc_nvvm_load(void) {
  pthread_once(&nvvm_lib.once, timed_nvvm);
  return finish(&nvvm_lib);
}

static void describe(cc_toolkit_lib *lib, int version, cucore_library_info *out) {
  memset(out, 0, sizeof *out);
  out->loaded = lib->status == CUCORE_OK;
  out->version = version;
  out->path = lib->path[0] ? lib->path : NULL;
  out->error = lib->status == CUCORE_OK ? NULL : lib->message;
}

void cc_nvrtc_describe(cucore_library_info *out) {
  pthread_once(&nvrtc_lib.once, timed_nvrtc);
  describe(&nvrtc_lib, cc_rtc.version, out);
}

void cc_nvjitlink_describe(cucore_library_info *out) {
  pthread_once(&jitlink_lib.once, timed_nvjitlink);
  describe(&jitlink_lib, cc_jl.version, out);
}

void cc_nvvm_describe(cucore_library_info *out) {
  pthread_once(&nvvm_lib.once, timed_nvvm);
  describe(&nvvm_lib, cc_vm.version, out);
}

/* ---- failures of toolkit calls ------------------------------------------------------------ */

static cucore_status fail_native(int code, cucore_source src, int native, const char *call,
                                 const char *text, const char *fmt, va_list ap) {
  char context[1024] = "";
  if (fmt) vsnprintf(context, sizeof context, fmt, ap);
  return cc_fail(cc_status(code, src, native), "%s failed: %s (%d)%s%s", call, text, native,
                 context[0] ? "; " : "", context);
}

static int nvrtc_code(nvrtcResult r) {
  return r == NVRTC_ERROR_COMPILATION                 ? CUCORE_COMPILE_ERROR
         : r == NVRTC_ERROR_OUT_OF_MEMORY             ? CUCORE_HOST_OUT_OF_MEMORY
         : r == NVRTC_ERROR_INVALID_OPTION            ? CUCORE_INVALID_ARGUMENT
         : r == NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID ? CUCORE_NOT_FOUND
                                                      : CUCORE_NVRTC_ERROR;
}

cucore_status cc_fail_nvrtc(nvrtcResult r, const char *call, const char *fmt, ...) {
  const char *text = NVRTC(nvrtcGetErrorString) ? NVRTC(nvrtcGetErrorString)(r) : "NVRTC error";
  int code = nvrtc_code(r);
  va_list ap;
  va_start(ap, fmt);
  cucore_status st = fail_native(code, CUCORE_SOURCE_NVRTC, (int)r, call, text, fmt, ap);
  va_end(ap);
  return st;
}

static const char *jitlink_text(nvJitLinkResult r) {
  switch (r) {
  case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
  case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
  case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH (-arch is required)";
  case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
  case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
  case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
  case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
  case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
  case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
  case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
  case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
  case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
  case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
  case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
  case NVJITLINK_ERROR_OUTDATED_LIBRARY:
    return "NVJITLINK_ERROR_OUTDATED_LIBRARY (an input is newer than this nvJitLink)";
  case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
  default: return "nvJitLink error";
  }
}

static int jitlink_code(nvJitLinkResult r) {
  return (r == NVJITLINK_ERROR_OUTDATED_LIBRARY) ? CUCORE_VERSION_MISMATCH
         : (r == NVJITLINK_ERROR_UNRECOGNIZED_OPTION || r == NVJITLINK_ERROR_MISSING_ARCH ||
            r == NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS || r == NVJITLINK_ERROR_NULL_INPUT)
             ? CUCORE_INVALID_ARGUMENT
         : (r == NVJITLINK_ERROR_UNRECOGNIZED_INPUT || r == NVJITLINK_ERROR_INVALID_INPUT ||
            r == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE)
             ? CUCORE_INVALID_BINARY
         : (r == NVJITLINK_ERROR_PTX_COMPILE || r == NVJITLINK_ERROR_NVVM_COMPILE ||
            r == NVJITLINK_ERROR_FINALIZE || r == NVJITLINK_ERROR_ARCH_MISMATCH)
             ? CUCORE_LINK_ERROR
             : CUCORE_NVJITLINK_ERROR;
}

cucore_status cc_fail_nvjitlink(nvJitLinkResult r, const char *call, const char *fmt, ...) {
  int code = jitlink_code(r);
  va_list ap;
  va_start(ap, fmt);
  cucore_status st = fail_native(code, CUCORE_SOURCE_NVJITLINK, (int)r, call, jitlink_text(r), fmt,
                                 ap);
  va_end(ap);
  return st;
}

static int nvvm_code(nvvmResult r) {
  return (r == NVVM_ERROR_COMPILATION || r == NVVM_ERROR_INVALID_IR) ? CUCORE_COMPILE_ERROR
         : r == NVVM_ERROR_OUT_OF_MEMORY                             ? CUCORE_HOST_OUT_OF_MEMORY
         : r == NVVM_ERROR_INVALID_OPTION                            ? CUCORE_INVALID_ARGUMENT
         : r == NVVM_ERROR_IR_VERSION_MISMATCH                       ? CUCORE_VERSION_MISMATCH
                                                                     : CUCORE_NVVM_ERROR;
}

cucore_status cc_fail_nvvm(nvvmResult r, const char *call, const char *fmt, ...) {
  const char *text = NVVM(nvvmGetErrorString) ? NVVM(nvvmGetErrorString)(r) : "libNVVM error";
  int code = nvvm_code(r);
  va_list ap;
  va_start(ap, fmt);
  cucore_status st = fail_native(code, CUCORE_SOURCE_NVVM, (int)r, call, text, fmt, ap);
  va_end(ap);
  return st;
}
