/*
 * option_rules.c -- the rules of the newer compile options (option_rules.h): the versions that
 * brought them, their part in the compile cache's key, the checks of their values.
 *
 * The versions: PCH and its options 12.8 (nvrtc.h: "Precompiled header support (CUDA 12.8+)"),
 * --Ofast-compile 12.9, --fdevice-time-trace, --device-float128 and --frandom-seed 12.8,
 * --minimal and nvJitLink's -split-compile-extended 12.4, --time and --fdevice-syntax-only
 * 12.1, from the NVRTC and nvJitLink user guides of those releases; the others are older than
 * the 12.0 cucore needs. Every one is in the 13.0 guides and was tried on NVRTC 13.0.
 */
#include "toolchain/option_rules.h"

#include <stdlib.h>
#include <string.h>

/* Short names for the table below. */
enum { SIDE = CC_RULE_SIDE_FILE, NOKEY = CC_RULE_NOT_IN_KEY };
enum { TEXT = CC_VAL_TEXT, DIAG = CC_VAL_DIAG, CHOICE = CC_VAL_CHOICE, SYMBOL = CC_VAL_SYMBOL };

/* clang-format off */
/* option, NVRTC since, nvJitLink since, flags, value kind, choices. The versions are the first
 * toolkit whose nvrtc.h / nvJitLink.h documents the option (checked against those headers, the
 * CUDA features archive and cuda-python's generated option lists; 0: every 12.x). */
static const cc_opt_rule rules[] = {
    {CUCORE_OPT_EXTENSIBLE_WHOLE_PROGRAM,     0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_DOPT,                         0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_GEN_OPT_LTO,                  0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_NO_SOURCE_INCLUDE,            0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_BUILTIN_MOVE_FORWARD,         0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_BUILTIN_INITIALIZER_LIST,     0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_RESTRICT,                     0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_OPTIMIZATION_INFO,            0,     0,     0,     CHOICE, "inline"},
    {CUCORE_OPT_NO_DISPLAY_ERROR_NUMBER,      0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_DIAG_ERROR,                   0,     0,     0,     DIAG,   NULL},
    {CUCORE_OPT_DIAG_SUPPRESS,                0,     0,     0,     DIAG,   NULL},
    {CUCORE_OPT_DIAG_WARN,                    0,     0,     0,     DIAG,   NULL},
    {CUCORE_OPT_BRIEF_DIAGNOSTICS,            12010, 0,     0,     TEXT,   NULL},
    {CUCORE_OPT_TIME,                         12010, 0,     SIDE,  TEXT,   NULL},
    {CUCORE_OPT_FDEVICE_SYNTAX_ONLY,          12040, 0,     0,     TEXT,   NULL},
    {CUCORE_OPT_MINIMAL,                      12040, 0,     0,     TEXT,   NULL},
    {CUCORE_OPT_NO_CACHE,                     12090, 12050, 0,     TEXT,   NULL},
    {CUCORE_OPT_FDEVICE_TIME_TRACE,           12080, 0,     SIDE,  TEXT,   NULL},
    {CUCORE_OPT_DEVICE_FLOAT128,              12080, 0,     0,     TEXT,   NULL},
    {CUCORE_OPT_FRANDOM_SEED,                 12090, 0,     0,     TEXT,   NULL},
    {CUCORE_OPT_OFAST_COMPILE,                12090, 0,     0,     CHOICE, "0, min, mid or max"},
    {CUCORE_OPT_JITLINK_VERBOSE,              0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_JITLINK_TIME,                 0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_KERNELS_USED,                 0,     0,     0,     SYMBOL, NULL},
    {CUCORE_OPT_VARIABLES_USED,               0,     0,     0,     SYMBOL, NULL},
    {CUCORE_OPT_OPTIMIZE_UNUSED_VARIABLES,    0,     0,     0,     TEXT,   NULL},
    {CUCORE_OPT_SPLIT_COMPILE_EXTENDED,       0,     12030, 0,     TEXT,   NULL},
    {CUCORE_OPT_PCH,                          12080, 0,     NOKEY, TEXT,   NULL},
    {CUCORE_OPT_CREATE_PCH,                   12080, 0,     SIDE,  TEXT,   NULL},
    {CUCORE_OPT_USE_PCH,                      12080, 0,     NOKEY, TEXT,   NULL},
    {CUCORE_OPT_PCH_DIR,                      12080, 0,     NOKEY, TEXT,   NULL},
    {CUCORE_OPT_PCH_VERBOSE,                  12080, 0,     NOKEY, TEXT,   NULL},
    {CUCORE_OPT_PCH_MESSAGES,                 12080, 0,     NOKEY, TEXT,   NULL},
    {CUCORE_OPT_INSTANTIATE_TEMPLATES_IN_PCH, 12080, 0,     NOKEY, TEXT,   NULL},
};
/* clang-format on */

const cc_opt_rule *cc_opt_rule_of(cucore_option id) {
  for (size_t i = 0; i < CC_ARRAY_LEN(rules); i++)
    if (rules[i].id == id) return &rules[i];
  return NULL;
}

/* "177" or "177,550": positive decimal numbers (NVRTC: "expects a non-zero positive integer
 * value"), one comma between two. Returns 1 when well-formed. */
static int diag_ok(const char *v) {
  for (;;) {
    const char *start = v;
    while (*v == '0') v++;
    const char *digits = v;
    while (*v >= '0' && *v <= '9') v++;
    if (v == start || v == digits || v - digits > 9) return 0; /* empty, zero, or past 10^9 */
    if (*v == '\0') return 1;
    if (*v++ != ',') return 0;
  }
}

/* `value` is one of the comma-separated words of `choices` ("0, min, mid or max"). */
static int choice_ok(const char *choices, const char *value) {
  size_t n = strlen(value);
  for (const char *c = choices; *c;) {
    size_t len = strcspn(c, ", ");
    if (len == n && strncmp(c, value, n) == 0) return 1;
    c += len;
    c += strspn(c, ", ");
    if (strncmp(c, "or ", 3) == 0) c += 3;
  }
  return 0;
}

cucore_status cc_opt_rule_check_value(const cc_opt_rule *r, const char *name, const char *value,
                                      const char *fn) {
  switch (r->kind) {
  case CC_VAL_DIAG:
    if (diag_ok(value)) return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: option `%s`: `%s` is not a list of diagnostic numbers; expected positive "
                   "numbers separated by commas, e.g. 177 or 177,550 (the number of a warning "
                   "such as `#177-D`)",
                   fn, name, value);
  case CC_VAL_CHOICE:
    if (choice_ok(r->choices, value)) return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: option `%s`: `%s` is not accepted; expected %s",
                   fn, name, value, r->choices);
  case CC_VAL_SYMBOL:
    if (value[strcspn(value, " \t\n,=")] == '\0') return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: option `%s`: `%s` is not one symbol name; expected a name as the code "
                   "has it (mangled for C++), without blanks, commas or `=`; give the option "
                   "once per name",
                   fn, name, value);
  case CC_VAL_TEXT: break;
  }
  return CUCORE_OK;
}

cucore_status cc_opt_rule_check_version(const cc_opt_rule *r, const char *name, int jitlink) {
  int since = jitlink ? r->jitlink_since : r->nvrtc_since;
  int have = jitlink ? cc_jl.version : cc_rtc.version;
  if (!since || !have || have >= since) return CUCORE_OK;
  const char *tool = jitlink ? "nvJitLink" : "NVRTC";
  return cc_fail(CUCORE_TOOLKIT_TOO_OLD,
                 "option `%s` needs %s %d.%d or newer; the loaded %s is %d.%d (leave the option "
                 "out, or point CUDA_HOME or %s at a newer toolkit's)",
                 name, tool, since / 1000, since % 1000 / 10, tool, have / 1000, have % 1000 / 10,
                 jitlink ? "CUCORE_NVJITLINK" : "CUCORE_NVRTC");
}
