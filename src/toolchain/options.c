/*
 * options.c -- one table of compile options. It serves the API (typed setters), the command
 * line (cucore_options_parse), the tools (rendered to NVRTC, nvJitLink or libNVVM flags) and
 * the cache key (canonical text).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "toolchain/options.h"
#include "toolchain/option_rules.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_BOOL, T_INT, T_STRING, T_LIST } opt_type;

typedef struct option_def {
  cucore_option id;
  const char *name;  /* --name */
  const char *alias; /* a short command-line form such as "-D", or NULL */
  opt_type type;
  int def, min, max; /* bool/int default and range */
  /* Renderings; NULL when the tool has no such option. Bools: a flag emitted when true, or a
   * template with %s for true/false (nvrtc, nvjitlink) or %d for 1/0 (nvvm). */
  const char *nvrtc, *nvjitlink, *nvvm;
  const char *help;
} option_def;

static const option_def defs[CUCORE_OPT_COUNT] = {
    {CUCORE_OPT_ARCH, "arch", "-arch", T_STRING, 0, 0, 0, NULL, NULL, NULL,
     "target architecture: sm_XX[a|f] or compute_XX (default: the current GPU's)"},
    {CUCORE_OPT_STD, "std", NULL, T_STRING, 0, 0, 0, "-std=%s", NULL, NULL,
     "C++ dialect: c++11, c++14, c++17 or c++20"},
    {CUCORE_OPT_DEFINE, "define", "-D", T_LIST, 0, 0, 0, "-D%s", NULL, NULL,
     "define a macro: NAME or NAME=VALUE"},
    {CUCORE_OPT_UNDEFINE, "undefine", "-U", T_LIST, 0, 0, 0, "-U%s", NULL, NULL,
     "undefine a macro"},
    {CUCORE_OPT_INCLUDE_PATH, "include-path", "-I", T_LIST, 0, 0, 0, "-I%s", NULL, NULL,
     "add a directory to the include search path"},
    {CUCORE_OPT_PRE_INCLUDE, "pre-include", "-include", T_LIST, 0, 0, 0, "--pre-include=%s", NULL,
     NULL, "include a header before the source"},
    {CUCORE_OPT_TOOLKIT_INCLUDES, "toolkit-includes", NULL, T_BOOL, 1, 0, 1, NULL, NULL, NULL,
     "add the toolkit's include and include/cccl directories (default on)"},
    {CUCORE_OPT_DEBUG, "debug", "-G", T_BOOL, 0, 0, 1, "-G", "-g", "-g",
     "generate device debug information"},
    {CUCORE_OPT_LINEINFO, "lineinfo", "-lineinfo", T_BOOL, 0, 0, 1, "-lineinfo", "-lineinfo",
     "-generate-line-info", "generate line information for profilers"},
    {CUCORE_OPT_FAST_MATH, "use-fast-math", NULL, T_BOOL, 0, 0, 1, "--use_fast_math", NULL, NULL,
     "fast math: flush denormals, approximate division and square root, fmad"},
    {CUCORE_OPT_FTZ, "ftz", NULL, T_BOOL, 0, 0, 1, "--ftz=%s", "-ftz=%s", "-ftz=%d",
     "flush single-precision denormals to zero"},
    {CUCORE_OPT_PREC_DIV, "prec-div", NULL, T_BOOL, 1, 0, 1, "--prec-div=%s", "-prec-div=%s",
     "-prec-div=%d", "IEEE-rounded single-precision division"},
    {CUCORE_OPT_PREC_SQRT, "prec-sqrt", NULL, T_BOOL, 1, 0, 1, "--prec-sqrt=%s", "-prec-sqrt=%s",
     "-prec-sqrt=%d", "IEEE-rounded single-precision square root"},
    {CUCORE_OPT_FMAD, "fmad", NULL, T_BOOL, 1, 0, 1, "--fmad=%s", "-fma=%s", "-fma=%d",
     "contract multiplies and adds into fused multiply-add"},
    {CUCORE_OPT_MAX_REGISTERS, "maxrregcount", NULL, T_INT, 0, 16, 255, "--maxrregcount=%d",
     "-maxrregcount=%d", NULL, "cap registers per thread (16..255)"},
    {CUCORE_OPT_RDC, "relocatable-device-code", "-rdc", T_BOOL, 0, 0, 1, "-rdc=true", NULL, NULL,
     "relocatable device code (for linking with extern device functions)"},
    {CUCORE_OPT_LTO, "lto", "-dlto", T_BOOL, 0, 0, 1, "-dlto", "-lto", "-gen-lto",
     "link-time optimisation (LTO-IR)"},
    {CUCORE_OPT_EXTRA_DEVICE_VECTORIZATION, "extra-device-vectorization", NULL, T_BOOL, 0, 0, 1,
     "--extra-device-vectorization", NULL, NULL, "more aggressive vectorisation"},
    {CUCORE_OPT_DEFAULT_DEVICE, "default-device", NULL, T_BOOL, 0, 0, 1,
     "--device-as-default-execution-space", NULL, NULL,
     "functions without an execution space are __device__"},
    {CUCORE_OPT_DEVICE_INT128, "device-int128", NULL, T_BOOL, 0, 0, 1, "--device-int128", NULL,
     NULL, "allow __int128 in device code"},
    {CUCORE_OPT_OPT_LEVEL, "opt-level", "-O", T_INT, 3, 0, 3, NULL, "-O%d", "-opt=%d",
     "optimisation level 0..3 (nvJitLink, libNVVM)"},
    {CUCORE_OPT_PTXAS_OPTION, "ptxas-option", "-Xptxas", T_LIST, 0, 0, 0, "--ptxas-options=%s",
     "-Xptxas=%s", NULL, "pass an option to ptxas"},
    {CUCORE_OPT_SPLIT_COMPILE, "split-compile", NULL, T_INT, 1, 0, 256, "--split-compile=%d",
     "-split-compile=%d", NULL, "compile with this many threads (0 = all cores)"},
    {CUCORE_OPT_DISABLE_WARNINGS, "disable-warnings", "-w", T_BOOL, 0, 0, 1, "-w", NULL, NULL,
     "suppress compiler warnings"},
    {CUCORE_OPT_RAW, "raw", "-Xcompiler", T_LIST, 0, 0, 0, "%s", NULL, "%s",
     "pass an option verbatim to NVRTC or libNVVM"},
    {CUCORE_OPT_GENCODE, "gencode", NULL, T_LIST, 0, 0, 0, NULL, NULL, NULL,
     "fatbin entries: sm_XX (a cubin) or compute_XX (PTX), repeatable"},
    /* The newer options: their versions, key rules and value checks are in option_rules.c. */
    {CUCORE_OPT_EXTENSIBLE_WHOLE_PROGRAM, "extensible-whole-program", "-ewp", T_BOOL, 0, 0, 1,
     "--extensible-whole-program", NULL, NULL, "NVRTC: extensible whole-program compile"},
    {CUCORE_OPT_DOPT, "dopt", NULL, T_BOOL, 0, 0, 1, "--dopt=on", NULL, NULL,
     "NVRTC: optimise device code (with --debug: line information only)"},
    {CUCORE_OPT_GEN_OPT_LTO, "gen-opt-lto", NULL, T_BOOL, 0, 0, 1, "--gen-opt-lto", NULL, NULL,
     "NVRTC: run the optimiser before writing LTO-IR"},
    {CUCORE_OPT_NO_SOURCE_INCLUDE, "no-source-include", NULL, T_BOOL, 0, 0, 1,
     "--no-source-include", NULL, NULL,
     "NVRTC: do not search for includes in the source's directory"},
    {CUCORE_OPT_BUILTIN_MOVE_FORWARD, "builtin-move-forward", NULL, T_BOOL, 1, 0, 1,
     "--builtin-move-forward=%s", NULL, NULL,
     "NVRTC: builtin std::move and std::forward (default on; the toolkit headers need it)"},
    {CUCORE_OPT_BUILTIN_INITIALIZER_LIST, "builtin-initializer-list", NULL, T_BOOL, 1, 0, 1,
     "--builtin-initializer-list=%s", NULL, NULL,
     "NVRTC: builtin std::initializer_list (default on)"},
    {CUCORE_OPT_RESTRICT, "restrict-pointers", "-restrict", T_BOOL, 0, 0, 1, "--restrict", NULL,
     NULL, "NVRTC: every kernel pointer parameter is restrict"},
    {CUCORE_OPT_OPTIMIZATION_INFO, "optimization-info", NULL, T_STRING, 0, 0, 0,
     "--optimization-info=%s", NULL, NULL, "NVRTC: optimisation remarks in the log: inline"},
    {CUCORE_OPT_NO_DISPLAY_ERROR_NUMBER, "no-display-error-number", NULL, T_BOOL, 0, 0, 1,
     "--no-display-error-number", NULL, NULL, "NVRTC: no diagnostic numbers in the log"},
    {CUCORE_OPT_DIAG_ERROR, "diag-error", NULL, T_LIST, 0, 0, 0, "--diag-error=%s", NULL, NULL,
     "NVRTC: make these diagnostics errors: numbers, e.g. 177 or 177,550"},
    {CUCORE_OPT_DIAG_SUPPRESS, "diag-suppress", NULL, T_LIST, 0, 0, 0, "--diag-suppress=%s", NULL,
     NULL, "NVRTC: suppress these diagnostics: numbers, e.g. 177 or 177,550"},
    {CUCORE_OPT_DIAG_WARN, "diag-warn", NULL, T_LIST, 0, 0, 0, "--diag-warn=%s", NULL, NULL,
     "NVRTC: make these diagnostics warnings: numbers, e.g. 177 or 177,550"},
    {CUCORE_OPT_BRIEF_DIAGNOSTICS, "brief-diagnostics", NULL, T_BOOL, 0, 0, 1,
     "--brief-diagnostics=%s", NULL, NULL, "NVRTC: diagnostics without the source line"},
    {CUCORE_OPT_TIME, "time", NULL, T_STRING, 0, 0, 0, "--time=%s", NULL, NULL,
     "NVRTC: append phase times to this CSV file (- for the log); not cached"},
    {CUCORE_OPT_FDEVICE_SYNTAX_ONLY, "fdevice-syntax-only", NULL, T_BOOL, 0, 0, 1,
     "--fdevice-syntax-only", NULL, NULL, "NVRTC: stop after the syntax check (no usable code)"},
    {CUCORE_OPT_MINIMAL, "minimal", NULL, T_BOOL, 0, 0, 1, "--minimal", NULL, NULL,
     "NVRTC: omit runtime types and functions (faster compiles of small kernels)"},
    {CUCORE_OPT_NO_CACHE, "no-cache", NULL, T_BOOL, 0, 0, 1, "--no-cache", "-no-cache", NULL,
     "NVRTC, nvJitLink: their internal cache off (not cucore's compile cache)"},
    {CUCORE_OPT_FDEVICE_TIME_TRACE, "fdevice-time-trace", NULL, T_STRING, 0, 0, 0,
     "--fdevice-time-trace=%s", NULL, NULL, "NVRTC: write a time-trace JSON file; not cached"},
    {CUCORE_OPT_DEVICE_FLOAT128, "device-float128", NULL, T_BOOL, 0, 0, 1, "--device-float128",
     NULL, NULL, "NVRTC: allow __float128 in device code (sm_100 and newer)"},
    {CUCORE_OPT_FRANDOM_SEED, "frandom-seed", NULL, T_STRING, 0, 0, 0, "--frandom-seed=%s", NULL,
     NULL, "NVRTC: the seed of generated names, for identical output"},
    {CUCORE_OPT_OFAST_COMPILE, "ofast-compile", NULL, T_STRING, 0, 0, 0, "--Ofast-compile=%s", NULL,
     NULL, "NVRTC: trade code speed for compile speed: 0, min, mid or max"},
    {CUCORE_OPT_JITLINK_VERBOSE, "jitlink-verbose", NULL, T_BOOL, 0, 0, 1, NULL, "-verbose", NULL,
     "nvJitLink: verbose messages in the info log"},
    {CUCORE_OPT_JITLINK_TIME, "jitlink-time", NULL, T_BOOL, 0, 0, 1, NULL, "-time", NULL,
     "nvJitLink: timing in the info log"},
    {CUCORE_OPT_KERNELS_USED, "kernels-used", NULL, T_LIST, 0, 0, 0, NULL, "-kernels-used=%s", NULL,
     "nvJitLink: a kernel that is used (the others may be removed), repeatable"},
    {CUCORE_OPT_VARIABLES_USED, "variables-used", NULL, T_LIST, 0, 0, 0, NULL, "-variables-used=%s",
     NULL, "nvJitLink: a variable that is used (the others may be removed), repeatable"},
    {CUCORE_OPT_OPTIMIZE_UNUSED_VARIABLES, "optimize-unused-variables", NULL, T_BOOL, 0, 0, 1, NULL,
     "-optimize-unused-variables", NULL,
     "nvJitLink: variables device code does not use may be removed"},
    {CUCORE_OPT_SPLIT_COMPILE_EXTENDED, "split-compile-extended", NULL, T_INT, 1, 0, 256, NULL,
     "-split-compile-extended=%d", NULL, "nvJitLink: LTO split compile threads (0 = all cores)"},
    {CUCORE_OPT_PCH, "pch", NULL, T_BOOL, 0, 0, 1, "--pch", NULL, NULL,
     "NVRTC: automatic precompiled headers (made and used in this process)"},
    {CUCORE_OPT_CREATE_PCH, "create-pch", NULL, T_STRING, 0, 0, 0, "--create-pch=%s", NULL, NULL,
     "NVRTC: create this precompiled header file; not cached"},
    {CUCORE_OPT_USE_PCH, "use-pch", NULL, T_STRING, 0, 0, 0, "--use-pch=%s", NULL, NULL,
     "NVRTC: use this precompiled header file"},
    {CUCORE_OPT_PCH_DIR, "pch-dir", NULL, T_STRING, 0, 0, 0, "--pch-dir=%s", NULL, NULL,
     "NVRTC: an existing directory for precompiled header files"},
    {CUCORE_OPT_PCH_VERBOSE, "pch-verbose", NULL, T_BOOL, 1, 0, 1, "--pch-verbose=%s", NULL, NULL,
     "NVRTC: say in the log why a PCH was not used (default on)"},
    {CUCORE_OPT_PCH_MESSAGES, "pch-messages", NULL, T_BOOL, 1, 0, 1, "--pch-messages=%s", NULL,
     NULL, "NVRTC: say in the log when a PCH is made or used (default on)"},
    {CUCORE_OPT_INSTANTIATE_TEMPLATES_IN_PCH, "instantiate-templates-in-pch", NULL, T_BOOL, 1, 0, 1,
     "--instantiate-templates-in-pch=%s", NULL, NULL,
     "NVRTC: instantiate templates before a PCH is written (default on)"},
    {CUCORE_OPT_LIBDEVICE, "libdevice", NULL, T_STRING, 0, 0, 0, NULL, NULL, NULL,
     "libdevice.10.bc for NVVM IR calling __nv_* functions (default: the toolkit's)"},
};

/* ---- argv ---------------------------------------------------------------------------------- */

cucore_status cc_argv_push(cc_argv *a, const char *fmt, ...) {
  /* Room for the new argument and the NULL after it. */
  char **nv = cc_grow(a->v, &a->cap, (size_t)a->n + 2, sizeof *nv, "the tool's options");
  if (!nv) return cucore_last_status();
  a->v = nv;
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = cc_raw_malloc((size_t)len + 1);
  if (!s) {
    va_end(ap2);
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory building options");
  }
  vsnprintf(s, (size_t)len + 1, fmt, ap2);
  va_end(ap2);
  a->v[a->n++] = s;
  a->v[a->n] = NULL;
  return CUCORE_OK;
}

void cc_argv_free(cc_argv *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
  memset(a, 0, sizeof *a);
}

/* ---- lifetime ------------------------------------------------------------------------------ */

cucore_status cucore_options_create(cucore_options **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_options_create", "out");
  *out = cc_calloc(1, sizeof **out, "an option set");
  if (*out) cc_handle_init(*out, CC_KIND_OPTIONS);
  return *out ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

static void free_contents(cucore_options *o) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    free(o->v[i].sval);
    for (int k = 0; k < o->v[i].count; k++) free(o->v[i].items[k]);
    free(o->v[i].items);
  }
  for (int h = 0; h < o->header_count; h++) {
    free(o->headers[h].name);
    free(o->headers[h].contents);
  }
  free(o->headers);
  free(o->canonical);
  free(o->key_canonical);
}

cucore_status cucore_options_destroy(cucore_options *o) {
  cc_begin();
  if (!o) return CUCORE_OK;
  CC_CHECK_HANDLE(o, OPTIONS, "cucore_options_destroy", "opts");
  free_contents(o);
  cc_handle_retire(o, CC_KIND_OPTIONS);
  return CUCORE_OK;
}

static char *dup_or_null(const char *s, int *failed) {
  if (!s) return NULL;
  char *d = cc_strdup(s, "an option value");
  if (!d) *failed = 1;
  return d;
}

cucore_status cucore_options_copy(const cucore_options *src, cucore_options **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_options_copy", "out");
  *out = NULL;
  CC_CHECK_HANDLE(src, OPTIONS, "cucore_options_copy", "src");
  cucore_options *o = cc_calloc(1, sizeof *o, "an option set");
  if (!o) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(o, CC_KIND_OPTIONS);
  int failed = 0;
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const cc_option_value *s = &src->v[i];
    cc_option_value *d = &o->v[i];
    d->is_set = s->is_set;
    d->ival = s->ival;
    d->sval = dup_or_null(s->sval, &failed);
    if (s->count) {
      d->items = cc_calloc((size_t)s->count, sizeof *d->items, "option values");
      if (!d->items) {
        failed = 1;
        break;
      }
      d->count = s->count;
      d->items_cap = (size_t)s->count;
      for (int k = 0; k < s->count; k++) d->items[k] = dup_or_null(s->items[k], &failed);
    }
  }
  if (!failed && src->header_count) {
    o->headers = cc_calloc((size_t)src->header_count, sizeof *o->headers, "headers");
    if (!o->headers)
      failed = 1;
    else
      o->header_cap = (size_t)src->header_count;
    for (int h = 0; !failed && h < src->header_count; h++) {
      o->headers[h].name = dup_or_null(src->headers[h].name, &failed);
      o->headers[h].contents = dup_or_null(src->headers[h].contents, &failed);
      o->header_count = h + 1;
    }
  }
  if (failed) {
    free_contents(o);
    free(o);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  *out = o;
  return CUCORE_OK;
}

/* ---- setting ------------------------------------------------------------------------------- */

static const option_def *def_of(cucore_option opt, const char *fn) {
  if ((int)opt < 0 || opt >= CUCORE_OPT_COUNT) {
    cc_fail(CUCORE_INVALID_ARGUMENT, "%s: option %d does not exist (0..%d)", fn, (int)opt,
            CUCORE_OPT_COUNT - 1);
    return NULL;
  }
  return &defs[opt];
}

static const char *type_name(opt_type t) {
  return t == T_BOOL     ? "a bool (0/1)"
         : t == T_INT    ? "an int"
         : t == T_STRING ? "a string"
                         : "a list of strings";
}

int cc_parse_arch(const char *s, int *arch, char suffix[4], int *is_virtual) {
  int virt = 0;
  if (strncmp(s, "sm_", 3) == 0)
    s += 3;
  else if (strncmp(s, "compute_", 8) == 0) {
    s += 8;
    virt = 1;
  }
  if (*s < '1' || *s > '9') return 0;
  char *end = NULL;
  long n = strtol(s, &end, 10);
  if (n < 10 || n > 999) return 0;
  if (*end != '\0' && strcmp(end, "a") != 0 && strcmp(end, "f") != 0) return 0;
  *arch = (int)n;
  snprintf(suffix, 4, "%s", end);
  if (is_virtual) *is_virtual = virt;
  return 1;
}

static int macro_char(char c, int first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}

/* A -D value as NVRTC takes it: blanks, an identifier, then nothing, `=VALUE`, or a parameter
 * list `(...)` followed by nothing or `=VALUE`. A -U value: blanks and an identifier only.
 * Returns 1 when well-formed. */
static int macro_ok(const char *v, int define) {
  while (*v == ' ' || *v == '\t') v++;
  if (!macro_char(*v, 1)) return 0;
  while (macro_char(*v, 0)) v++;
  if (!define) return *v == '\0';
  if (*v == '(') {
    v = strchr(v, ')');
    if (!v) return 0;
    v++;
  }
  return *v == '\0' || *v == '=';
}

static cucore_status validate_macro(const option_def *d, const char *value, const char *fn) {
  int define = d->id == CUCORE_OPT_DEFINE;
  if (macro_ok(value, define)) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: option `%s` (%s): `%s` is not %s; expected %s, where NAME is an identifier "
                 "(letters, digits and _, not starting with a digit)",
                 fn, d->name, d->alias, value, define ? "a macro definition" : "a macro name",
                 define ? "NAME, NAME=VALUE or NAME(PARAMS)=VALUE" : "NAME");
}

static cucore_status validate_string(const option_def *d, const char *value, const char *fn) {
  if (!value)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: option `%s` needs a value, got NULL", fn, d->name);
  if (d->id == CUCORE_OPT_ARCH) {
    int arch;
    char suf[4];
    if (!cc_parse_arch(value, &arch, suf, NULL))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: arch `%s` is not valid; expected sm_XX, sm_XXa, sm_XXf or compute_XX "
                     "(e.g. sm_90, sm_90a, compute_80)",
                     fn, value);
  } else if (d->id == CUCORE_OPT_STD) {
    static const char *const stds[] = {"c++03", "c++11", "c++14", "c++17", "c++20"};
    int ok = 0;
    for (size_t i = 0; i < CC_ARRAY_LEN(stds); i++) ok |= strcmp(value, stds[i]) == 0;
    if (!ok)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: std `%s` is not valid; expected c++03, c++11, c++14, c++17 or c++20", fn,
                     value);
  } else if (d->id == CUCORE_OPT_GENCODE) {
    int arch, virt;
    char suf[4];
    if (!cc_parse_arch(value, &arch, suf, &virt) ||
        (strncmp(value, "sm_", 3) && strncmp(value, "compute_", 8)))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: gencode `%s` is not valid; expected sm_XX[a|f] (a cubin) or compute_XX "
                     "(PTX), e.g. sm_80, sm_90a, compute_90",
                     fn, value);
  } else if (value[0] == '\0') {
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: option `%s` needs a non-empty value (%s)", fn,
                   d->name, d->help);
  } else if (d->id == CUCORE_OPT_DEFINE || d->id == CUCORE_OPT_UNDEFINE) {
    return validate_macro(d, value, fn);
  } else if (cc_opt_rule_of(d->id)) {
    return cc_opt_rule_check_value(cc_opt_rule_of(d->id), d->name, value, fn);
  }
  return CUCORE_OK;
}

static void invalidate(cucore_options *o) {
  free(o->canonical);
  o->canonical = NULL;
  free(o->key_canonical);
  o->key_canonical = NULL;
}

cucore_status cucore_options_set_string(cucore_options *o, cucore_option opt, const char *value) {
  cc_begin();
  CC_CHECK_HANDLE(o, OPTIONS, "cucore_options_set_string", "opts");
  const option_def *d = def_of(opt, "cucore_options_set_string");
  if (!d) return CUCORE_INVALID_ARGUMENT;
  if (d->type != T_STRING && d->type != T_LIST)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_options_set_string: option `%s` is %s; use cucore_options_set_int",
                   d->name, type_name(d->type));
  cucore_status st = validate_string(d, value, "cucore_options_set_string");
  if (st != CUCORE_OK) return st;
  char *copy = cc_strdup(value, "an option value");
  if (!copy) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_option_value *v = &o->v[opt];
  if (d->type == T_STRING) {
    free(v->sval);
    v->sval = copy;
  } else {
    char **items = cc_grow(v->items, &v->items_cap, (size_t)v->count + 1, sizeof *items,
                           "an option's values");
    if (!items) {
      free(copy);
      return cucore_last_status();
    }
    v->items = items;
    v->items[v->count++] = copy;
  }
  v->is_set = 1;
  invalidate(o);
  return CUCORE_OK;
}

cucore_status cucore_options_set_int(cucore_options *o, cucore_option opt, int value) {
  cc_begin();
  CC_CHECK_HANDLE(o, OPTIONS, "cucore_options_set_int", "opts");
  const option_def *d = def_of(opt, "cucore_options_set_int");
  if (!d) return CUCORE_INVALID_ARGUMENT;
  if (d->type != T_BOOL && d->type != T_INT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_options_set_int: option `%s` is %s; use cucore_options_set_string",
                   d->name, type_name(d->type));
  if (value < d->min || value > d->max)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_options_set_int: option `%s` = %d is out of range; expected %d..%d",
                   d->name, value, d->min, d->max);
  o->v[opt].ival = value;
  o->v[opt].is_set = 1;
  invalidate(o);
  return CUCORE_OK;
}

cucore_status cucore_options_add_header(cucore_options *o, const char *name, const char *contents) {
  cc_begin();
  CC_CHECK_HANDLE(o, OPTIONS, "cucore_options_add_header", "opts");
  CC_CHECK_ARG(name, "cucore_options_add_header", "name");
  CC_CHECK_ARG(contents, "cucore_options_add_header", "contents");
  for (int h = 0; h < o->header_count; h++)
    if (strcmp(o->headers[h].name, name) == 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_options_add_header: a header named `%s` was already added", name);
  cc_header *hs = cc_grow(o->headers, &o->header_cap, (size_t)o->header_count + 1, sizeof *hs,
                          "the list of headers");
  if (!hs) return cucore_last_status();
  o->headers = hs;
  char *n = cc_strdup(name, "a header name"), *c = n ? cc_strdup(contents, "a header") : NULL;
  if (!c) {
    free(n);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  o->headers[o->header_count].name = n;
  o->headers[o->header_count].contents = c;
  o->header_count++;
  invalidate(o);
  return CUCORE_OK;
}

int cc_options_int(const cucore_options *o, cucore_option opt) {
  if (o && o->v[opt].is_set) return o->v[opt].ival;
  return defs[opt].def;
}

const char *cucore_option_name(cucore_option opt) {
  return ((int)opt >= 0 && opt < CUCORE_OPT_COUNT) ? defs[opt].name : "unknown-option";
}

const char *cucore_option_help(cucore_option opt) {
  return ((int)opt >= 0 && opt < CUCORE_OPT_COUNT) ? defs[opt].help : "";
}

/* ---- command-line parsing ------------------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  size_t prev[64], cur[64];
  for (size_t j = 0; j <= lb; j++) prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

static cucore_status apply(cucore_options *o, const option_def *d, const char *value,
                           const char *arg) {
  if (d->type == T_STRING || d->type == T_LIST) {
    cucore_status st = validate_string(d, value, "cucore_options_parse");
    if (st != CUCORE_OK) return st;
    cc_begin();
    return cucore_options_set_string(o, d->id, value);
  }
  long n = 1;
  if (value) {
    if (strcmp(value, "true") == 0 || strcmp(value, "on") == 0)
      n = 1;
    else if (strcmp(value, "false") == 0 || strcmp(value, "off") == 0)
      n = 0;
    else {
      char *end = NULL;
      n = strtol(value, &end, 10);
      if (!*value || *end || n < INT_MIN || n > INT_MAX)
        return cc_fail(CUCORE_INVALID_ARGUMENT, "option `%s`: `%s` is not %s", arg, value,
                       type_name(d->type));
    }
  }
  if (n < d->min || n > d->max)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "option `%s` = %ld is out of range; expected %d..%d",
                   arg, n, d->min, d->max);
  o->v[d->id].ival = (int)n;
  o->v[d->id].is_set = 1;
  invalidate(o);
  return CUCORE_OK;
}

/* Short aliases, alone or glued to their value: -G, -D X, -DX, -IDIR, -O2, -arch=sm_90.
 * Returns 1 with *st when `arg` is one. */
static int parse_alias(cucore_options *o, const char *arg, const char *next, int *consumed,
                       cucore_status *st) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const option_def *d = &defs[i];
    size_t n = d->alias ? strlen(d->alias) : 0;
    const char *value = NULL;
    if (!n) continue;
    if (strcmp(arg, d->alias) == 0 && d->type == T_BOOL) {
      *consumed = 1;
    } else if (strcmp(arg, d->alias) == 0) {
      if (!next) {
        *st = cc_fail(CUCORE_INVALID_ARGUMENT, "option `%s` needs a value (%s)", arg, d->help);
        return 1;
      }
      *consumed = 2;
      value = next;
    } else if (n == 2 && strncmp(arg, d->alias, 2) == 0 && arg[2] != '\0' && d->type != T_BOOL) {
      *consumed = 1;
      value = arg + 2;
    } else if (n > 2 && strncmp(arg, d->alias, n) == 0 && arg[n] == '=') {
      *consumed = 1;
      value = arg + n + 1;
    } else {
      continue;
    }
    *st = apply(o, d, value, arg);
    return 1;
  }
  return 0;
}

/* An option no compiler knows: CUCORE_UNKNOWN_OPTION naming the nearest known one. */
static cucore_status unknown_option(const char *arg, const char *name, size_t len) {
  char want[64];
  snprintf(want, sizeof want, "%.*s", (int)(len < 63 ? len : 63), name);
  size_t best = 99;
  const char *nearest = NULL;
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    size_t dist = edit_distance(want, defs[i].name);
    if (dist < best) {
      best = dist;
      nearest = defs[i].name;
    }
  }
  if (nearest && best <= 3)
    return cc_fail(CUCORE_UNKNOWN_OPTION, "unknown option `%s`; did you mean `--%s`?", arg,
                   nearest);
  return cc_fail(CUCORE_UNKNOWN_OPTION, "unknown option `%s`", arg);
}

/* The row named name[0..len), or NULL. */
static const option_def *named(const char *name, size_t len) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++)
    if (strlen(defs[i].name) == len && strncmp(defs[i].name, name, len) == 0) return &defs[i];
  return NULL;
}

cucore_status cucore_options_parse(cucore_options *o, const char *arg, const char *next,
                                   int *consumed) {
  cc_begin();
  CC_CHECK_HANDLE(o, OPTIONS, "cucore_options_parse", "opts");
  CC_CHECK_ARG(arg, "cucore_options_parse", "arg");
  CC_CHECK_ARG(consumed, "cucore_options_parse", "consumed");
  *consumed = 0;
  cucore_status st = CUCORE_OK;
  if (parse_alias(o, arg, next, consumed, &st)) return st;
  if (strncmp(arg, "--", 2) != 0)
    return cc_fail(CUCORE_UNKNOWN_OPTION, "%s `%s` (options start with --)",
                   arg[0] == '-' ? "unknown option" : "not an option:", arg);
  const char *name = arg + 2;
  const char *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  int negate = 0;
  /* --no-NAME negates NAME, unless the table has that whole name (no-cache). */
  if (!eq && strncmp(name, "no-", 3) == 0 && !named(name, len)) {
    negate = 1;
    name += 3;
    len -= 3;
  }
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const option_def *d = &defs[i];
    if (strlen(d->name) != len || strncmp(d->name, name, len) != 0) continue;
    if (d->type == T_BOOL) {
      *consumed = 1;
      return apply(o, d, negate ? "0" : eq ? eq + 1 : NULL, arg);
    }
    if (negate) break;
    if (!eq && !next)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "option `%s` needs a value (%s)", arg, d->help);
    *consumed = eq ? 1 : 2;
    return apply(o, d, eq ? eq + 1 : next, arg);
  }
  return unknown_option(arg, name, len);
}

/* ---- rendering ----------------------------------------------------------------------------- */

cucore_status cc_options_arch(const cucore_options *o, int *arch, char suffix[4]) {
  const char *s = o ? o->v[CUCORE_OPT_ARCH].sval : NULL;
  if (s) {
    if (!cc_parse_arch(s, arch, suffix, NULL))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "arch `%s` is not valid", s);
    return CUCORE_OK;
  }
  suffix[0] = '\0';
  /* No arch given: the current GPU's, when there is one. */
  if (cc_driver_load() == CUCORE_OK && cc_drv.device_count > 0) {
    CUdevice d;
    int major = 0, minor = 0;
    if (DRV(cuDeviceGet)(&d, 0) == CUDA_SUCCESS &&
        DRV(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ==
            CUDA_SUCCESS &&
        DRV(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) ==
            CUDA_SUCCESS) {
      *arch = major * 10 + minor;
      return CUCORE_OK;
    }
  }
  cc_begin(); /* the driver's own failure is not the point here */
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "no arch was given and there is no GPU to take it from; set the arch option "
                 "(e.g. --arch sm_90)");
}

static cucore_status render_value(const option_def *d, const char *tmpl, const cc_option_value *v,
                                  cc_argv *out) {
  cucore_status st = CUCORE_OK;
  switch (d->type) {
  case T_BOOL: {
    int val = v->is_set ? v->ival : d->def;
    if (strstr(tmpl, "%s")) {
      if (v->is_set) st = cc_argv_push(out, tmpl, val ? "true" : "false");
    } else if (strstr(tmpl, "%d")) {
      if (v->is_set) st = cc_argv_push(out, tmpl, val);
    } else if (val && (v->is_set || d->def)) {
      st = cc_argv_push(out, "%s", tmpl);
    }
    break;
  }
  case T_INT:
    if (v->is_set) st = cc_argv_push(out, tmpl, v->ival);
    break;
  case T_STRING:
    if (v->sval) st = cc_argv_push(out, tmpl, v->sval);
    break;
  case T_LIST:
    for (int k = 0; st == CUCORE_OK && k < v->count; k++) st = cc_argv_push(out, tmpl, v->items[k]);
    break;
  }
  return st;
}

/* The flags for `tool`; for the cache key (`for_key`) without the options the key leaves out
 * and without the version checks (the key is computed before the tool is loaded). */
static cucore_status render(const cucore_options *o, cc_tool tool, int arch,
                            const char *arch_suffix, int virtual_arch, int for_key, cc_argv *out) {
  static const cucore_options empty;
  if (!o) o = &empty;
  cucore_status st;
  if (tool == CC_TOOL_NVVM)
    st = cc_argv_push(out, "-arch=compute_%d", arch);
  else
    st = cc_argv_push(out, "-arch=%s_%d%s", virtual_arch ? "compute" : "sm", arch, arch_suffix);
  for (int i = 0; st == CUCORE_OK && i < CUCORE_OPT_COUNT; i++) {
    const option_def *d = &defs[i];
    const cc_option_value *v = &o->v[i];
    if (d->id == CUCORE_OPT_ARCH) continue;
    if (d->id == CUCORE_OPT_TOOLKIT_INCLUDES) {
      if (tool != CC_TOOL_NVRTC || !cc_options_int(o, d->id)) continue;
      const char *root = cc_toolkit_root();
      if (root) {
        st = cc_argv_push(out, "-I%s/include", root);
        if (st == CUCORE_OK) st = cc_argv_push(out, "-I%s/include/cccl", root);
      }
      continue;
    }
    if (d->id == CUCORE_OPT_FAST_MATH && tool != CC_TOOL_NVRTC) {
      if (!cc_options_int(o, d->id)) continue;
      const char *const *flags = tool == CC_TOOL_NVJITLINK
                                     ? (const char *const[]){"-ftz=true", "-prec-div=false",
                                                             "-prec-sqrt=false", "-fma=true", NULL}
                                     : (const char *const[]){"-ftz=1", "-prec-div=0",
                                                             "-prec-sqrt=0", "-fma=1", NULL};
      for (int k = 0; st == CUCORE_OK && flags[k]; k++) st = cc_argv_push(out, "%s", flags[k]);
      continue;
    }
    const char *tmpl = tool == CC_TOOL_NVRTC       ? d->nvrtc
                       : tool == CC_TOOL_NVJITLINK ? d->nvjitlink
                                                   : d->nvvm;
    int given = v->is_set || v->count > 0 || v->sval;
    /* An option this tool has no flag for is left out (fast math, which changes the code,
     * was spelled out above). */
    if (!tmpl) continue;
    if (!given && !(d->type == T_BOOL && d->def && !strchr(tmpl, '%'))) continue;
    const cc_opt_rule *r = cc_opt_rule_of(d->id);
    if (r && for_key && (r->flags & CC_RULE_NOT_IN_KEY)) continue;
    if (r && !for_key) st = cc_opt_rule_check_version(r, d->name, tool == CC_TOOL_NVJITLINK);
    if (st == CUCORE_OK) st = render_value(d, tmpl, v, out);
  }
  return st;
}

cucore_status cc_options_render(const cucore_options *o, cc_tool tool, int arch,
                                const char *arch_suffix, int virtual_arch, cc_argv *out) {
  return render(o, tool, arch, arch_suffix, virtual_arch, 0, out);
}

cucore_status cc_options_render_key(const cucore_options *o, cc_tool tool, int arch,
                                    const char *arch_suffix, int virtual_arch, cc_argv *out) {
  return render(o, tool, arch, arch_suffix, virtual_arch, 1, out);
}

/* ---- which tools take an option; what the cache must not key or serve ---------------------- */

static int given(const cucore_options *o, int i) {
  return o->v[i].is_set || o->v[i].count > 0 || o->v[i].sval;
}

int cc_options_in_key(cucore_option opt) {
  const cc_opt_rule *r = cc_opt_rule_of(opt);
  return !r || !(r->flags & CC_RULE_NOT_IN_KEY);
}

/* "NVRTC", "nvJitLink and libNVVM": the tools of `mask` (bits 1 << cc_tool). */
static void tool_names(unsigned mask, char *out, size_t cap) {
  static const char *const names[] = {"NVRTC", "nvJitLink", "libNVVM"};
  size_t len = 0;
  out[0] = '\0';
  for (int t = 0, k = 0; t < 3; t++)
    if (mask & (1u << t))
      len += (size_t)snprintf(out + len, cap - len, "%s%s", k++ ? " and " : "", names[t]);
}

cucore_status cc_options_check_tools(const cucore_options *o, unsigned tools, const char *fn,
                                     const char *subject) {
  for (int i = 0; o && i < CUCORE_OPT_COUNT; i++) {
    const option_def *d = &defs[i];
    if (!cc_opt_rule_of(d->id) || !given(o, i)) continue;
    unsigned takes = (d->nvrtc ? 1u << CC_TOOL_NVRTC : 0) |
                     (d->nvjitlink ? 1u << CC_TOOL_NVJITLINK : 0) |
                     (d->nvvm ? 1u << CC_TOOL_NVVM : 0);
    if (takes & tools) continue;
    char by[64], has[64];
    tool_names(takes, has, sizeof has);
    tool_names(tools, by, sizeof by);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: option `%s` is for %s only; %s goes through %s, which has no such flag "
                   "(leave the option out)",
                   fn, d->name, has, subject, by);
  }
  return CUCORE_OK;
}

int cc_options_side_files(const cucore_options *o, char *why, size_t cap) {
  for (int i = 0; o && i < CUCORE_OPT_COUNT; i++) {
    const cc_opt_rule *r = cc_opt_rule_of(defs[i].id);
    if (!r || !(r->flags & CC_RULE_SIDE_FILE) || !given(o, i)) continue;
    const char *v = o->v[i].sval ? o->v[i].sval : "";
    snprintf(why, cap,
             "option `%s` (`%s`) writes %s as the compiler runs, which a cache hit would not "
             "do, so the compile is not cached",
             defs[i].name, v, strcmp(v, "-") == 0 ? "timings into the log" : "a file");
    return 1;
  }
  return 0;
}

/* ---- canonical text ------------------------------------------------------------------------ */

#include "base/sha256.h"

/* One line of the canonical text; a stream that cannot grow is out of memory. */
static inline cucore_status canon_append(FILE *f, const char *fmt, ...) CC_PRINTF(2, 3);
static inline cucore_status canon_append(FILE *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(f, fmt, ap);
  va_end(ap);
  return n < 0 ? cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory") : CUCORE_OK;
}

/* A "name=value" line per option given, in table order (a bool or int only when it differs
 * from its default; a list once per value), then a "header=name:sha256" line per header. */
static cucore_status canon_write(const cucore_options *o, int for_key, FILE *f) {
  cucore_status st = CUCORE_OK;
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const option_def *d = &defs[i];
    const cc_option_value *v = &o->v[i];
    if (for_key && !cc_options_in_key(d->id)) continue;
    switch (d->type) {
    case T_BOOL:
    case T_INT:
      if (v->is_set && v->ival != d->def) st = canon_append(f, "%s=%d\n", d->name, v->ival);
      break;
    case T_STRING:
      if (v->sval) st = canon_append(f, "%s=%s\n", d->name, v->sval);
      break;
    case T_LIST:
      for (int k = 0; st == CUCORE_OK && k < v->count; k++)
        st = canon_append(f, "%s=%s\n", d->name, v->items[k]);
      break;
    }
    if (st) return st;
  }
  for (int h = 0; h < o->header_count; h++) {
    char hex[65];
    cc_sha256_hex(o->headers[h].contents, strlen(o->headers[h].contents), hex);
    st = canon_append(f, "header=%s:%s\n", o->headers[h].name, hex);
    if (st) return st;
  }
  return CUCORE_OK;
}

/* The canonical text into *cache (made once), for the key or whole. */
static cucore_status canonical(const cucore_options *o, int for_key, char **cache,
                               const char **out) {
  if (*cache) {
    *out = *cache;
    return CUCORE_OK;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory");
  cucore_status st = canon_write(o, for_key, f);
  /* fclose writes the final NUL (the text is "" when no option is set). */
  if (fclose(f) != 0 && st == CUCORE_OK)
    st = cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory");
  if (st != CUCORE_OK) {
    free(buf);
    return st;
  }
  *cache = buf;
  *out = buf;
  return CUCORE_OK;
}

cucore_status cucore_options_canonical(const cucore_options *co, const char **out) {
  cc_begin();
  CC_CHECK_HANDLE(co, OPTIONS, "cucore_options_canonical", "opts");
  CC_CHECK_ARG(out, "cucore_options_canonical", "out");
  cucore_options *o = (cucore_options *)co; /* the cache is not part of the value */
  return canonical(o, 0, &o->canonical, out);
}

cucore_status cc_options_key_canonical(const cucore_options *co, const char **out) {
  cucore_options *o = (cucore_options *)co; /* the cache is not part of the value */
  return canonical(o, 1, &o->key_canonical, out);
}
