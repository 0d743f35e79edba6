/* option_rules.h -- what the option table's rows do not say of the newer options: the tool
 * version that brought each one, whether the compile cache keys it or must be bypassed, and the
 * checks of values that are not free text. Below options.c, which calls it. */
#ifndef CUCORE_OPTION_RULES_H
#define CUCORE_OPTION_RULES_H

#include "loader/loader.h"

enum {
  CC_RULE_SIDE_FILE = 1,  /* writes a file (or log text) a cache hit would not: never cached */
  CC_RULE_NOT_IN_KEY = 2, /* changes how fast the code is made, not the code: not in the key */
};

typedef enum cc_val_kind {
  CC_VAL_TEXT = 0, /* any non-empty text (a file, a seed) */
  CC_VAL_DIAG,     /* diagnostic numbers: "177" or "177,550" */
  CC_VAL_CHOICE,   /* one of `choices` */
  CC_VAL_SYMBOL,   /* a symbol name: no blank, comma or '=' */
} cc_val_kind;

typedef struct cc_opt_rule {
  cucore_option id;
  int nvrtc_since;     /* the NVRTC version that brought it (major*1000 + minor*10); 0: all */
  int jitlink_since;   /* the same for nvJitLink */
  unsigned flags;      /* CC_RULE_* */
  int kind;            /* a cc_val_kind */
  const char *choices; /* CC_VAL_CHOICE: "0, min, mid or max" as the message says them */
} cc_opt_rule;

/* The rule of a newer option, or NULL for an older one (no rule: a tool without its flag
 * leaves it out, as before). */
const cc_opt_rule *cc_opt_rule_of(cucore_option id);
/* Checks `value` of option `name` against the rule's kind; `fn` names the call. */
cucore_status cc_opt_rule_check_value(const cc_opt_rule *r, const char *name, const char *value,
                                      const char *fn);
/* CUCORE_TOOLKIT_TOO_OLD when the loaded NVRTC (`jitlink` 0) or nvJitLink (1) is older than the
 * version that brought option `name`; a tool not loaded yet (version 0) is not judged. */
cucore_status cc_opt_rule_check_version(const cc_opt_rule *r, const char *name, int jitlink);

#endif
