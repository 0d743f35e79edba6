/*
 * tune/space.h -- the search space of `cucore tune` (struct cucore_tune_space) and what its
 * files share, one job each:
 *   space.c         building a space: parameters, restrictions, expressions, kernel, limits
 *   space_parse.c   parameters and expressions written as text ("NAME=V1,V2,LO..HI:STEP")
 *   space_values.c  one value read once (Python 3's literal rules) and written for C, JSON and
 *                   people; one value twice refused
 *   space_kinds.c   parameters by name, block-size names, what each parameter is to a compile
 *   space_config.c  one configuration: values, restrictions, launch, limits, compile hash;
 *                   the counts
 *   space_text.c    a configuration's texts (parameters, kernel name, defines, JSON)
 *   space_json.c    a space from Kernel Tuner's tune_kernel() keywords as JSON (read by
 *                   strict_json.c)
 *   space_t1.c      a space from the TuningSchema T1 input (Kernel Tuner, KTT, BAT)
 *   space_checks.c  what a space file says a measured tune checks (args, expects, tolerances)
 * tune/ is the floor above exec/ and compile/: the command's tuner is built on these.
 */
#ifndef CUCORE_TUNE_SPACE_H
#define CUCORE_TUNE_SPACE_H

#include "base/handle.h"
#include "tune/expr.h"

#define CC_TUNE_MAX_DIV 8 /* factors of one grid_div */

typedef struct cc_tparam {
  char *name;
  cucore_tune_param_kind kind;     /* as asked */
  cucore_tune_param_kind resolved; /* never AUTO */
  size_t n;
  char **text;   /* the values as written */
  char **c_text; /* the values as a compile sees them (integers in decimal, bools true/false) */
  cc_tval *val;  /* read by Python's rules; a string's bytes are text[k]'s */
  unsigned uses; /* CUCORE_TUNE_USED_* (kept by cc_tune_resolve_kind and the restrictions) */
} cc_tparam;

/* A list of expressions (one slot). */
typedef struct cc_texprs {
  int n;
  cc_expr e[CC_TUNE_MAX_DIV];
} cc_texprs;

#define CC_TUNE_SLOTS 7

struct cucore_tune_space {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cc_tparam *params;
  size_t nparams, cap;
  size_t *names;    /* open addressing over parameter names: index + 1 (0: empty) */
  size_t names_cap; /* a power of two, at least twice nparams */
  cc_expr *restr;
  size_t nrestr, cap_r;
  cc_texprs slot[CC_TUNE_SLOTS]; /* by cucore_tune_slot */
  char *block_names[3];
  char *kernel;
  char *source;
  cucore_arch_limits limits;
  int has_limits;
  struct cc_tune_checks *checks; /* from a space file (space_checks.c); NULL: none */
  struct cc_tune_extras *extras; /* from a space file (space_extras.c); NULL: none */
};

/* Resolves every parameter's kind (after a change of expressions, kernel or source), or
 * parameter i's (after it was added). */
void cc_tune_resolve_kinds(cucore_tune_space *s);
void cc_tune_resolve_kind(cucore_tune_space *s, size_t i);
/* Where parameter i is named: CUCORE_TUNE_USED_* bits. */
unsigned cc_tune_param_uses(const cucore_tune_space *s, size_t i);
/* Room in the name table for n parameters; parameter i entered in it. */
cucore_status cc_tune_names_reserve(cucore_tune_space *s, size_t n);
void cc_tune_names_add(cucore_tune_space *s, size_t i);
/* The parameter named name[0..len), or -1 (a cc_expr_lookup_fn over the space). */
int cc_tune_find_param(void *space, const char *name, size_t len);

/* Value k of parameter `param` read from `text` (Python 3's literal rules: integers, reals,
 * bools, else a string; a leading-zero decimal, an out-of-range integer, an empty, control or
 * non-UTF-8 text refused naming the parameter): *v (a string points into `text`) and its C text
 * in *c_text (malloc'd). */
cucore_status cc_tune_value_read(const char *param, size_t k, const char *text, cc_tval *v,
                                 char **c_text);
/* CUCORE_INVALID_ARGUMENT naming both texts when two of the n values are one value. */
cucore_status cc_tune_values_unique(const char *param, const cc_tval *vals, char *const *texts,
                                    size_t n);
/* A value as JSON: integers in decimal, reals in their shortest exact form, bools, strings. */
void cc_tune_value_json(cc_sb *b, const cc_tval *v);
/* A value's text as shown in "NAME=VALUE ..." lines: as written when that reads unambiguously,
 * else quoted and escaped as a JSON string. */
void cc_tune_value_shown(cc_sb *b, const char *text);

/* The name of the parameter that is block dimension d when no block expression is set. */
const char *cc_tune_block_name(const cucore_tune_space *s, int d);
/* The values of configuration `index` (vals has nparams entries; digits may be NULL). */
void cc_tune_values(const cucore_tune_space *s, uint64_t index, cc_tval *vals, size_t *digits);
/* An expression or value quoted in a message: whole up to 160 bytes, else its first 120 and
 * "... (N bytes)" (a cut that says so: the message's reason still follows it). */
#define CC_TUNE_QUOTE_MAX 200
const char *cc_tune_quote(const char *text, char buf[CC_TUNE_QUOTE_MAX]);

/* The value indices of configuration `index` (nparams of them). */
void cc_tune_digits(const cucore_tune_space *s, uint64_t index, size_t *digits);
/* Text `what` of the configuration whose value indices are `dg`, appended to b (one writer per
 * format: space_text.c); cc_tune_index_text by the configuration's index. */
cucore_status cc_tune_config_text(const cucore_tune_space *s, const size_t *dg,
                                  cucore_tune_text what, cc_sb *b);
cucore_status cc_tune_index_text(const cucore_tune_space *s, uint64_t index, cucore_tune_text what,
                                 cc_sb *b);
/* The configuration whose JSON text (as cc_tune_index_text writes it: a store record's
 * "config") is `text`, into *index: 1; 0 when it is none of this space's. */
int cc_tune_index_of_json(const cucore_tune_space *s, const char *text, uint64_t *index);
/* Every `{NAME}` hole of the kernel names a parameter (else CUCORE_INVALID_ARGUMENT naming it). */
cucore_status cc_tune_kernel_holes(const cucore_tune_space *s);
/* The raw size; -1 when it does not fit 64 bits. */
int cc_tune_raw(const cucore_tune_space *s, uint64_t *raw);
/* The checks of one configuration before compiling, in their order (restriction 0, 1, ...,
 * then the launch); `vals` needs only the parameters the check reads. With c NULL nothing but
 * the answer is made (a walk's count); else c gets the verdict, the reason, and the launch.
 * A restriction: 0 true, 1 false, 2 could not be evaluated. The launch (block, grid, shared
 * memory, within the limits): 0 valid, 1 a bad launch, 2 beyond the architecture's limits. */
int cc_tune_check_restriction(const cucore_tune_space *s, size_t i, const cc_tval *vals,
                              cucore_tune_config *c);
int cc_tune_check_launch(const cucore_tune_space *s, const cc_tval *vals, cucore_tune_config *c);
/* 1 when the launch check reads parameter p. */
int cc_tune_launch_uses(const cucore_tune_space *s, size_t p);

/* A walk of a space without listing it (space_walk.c): each check at the depth where its
 * parameters are bound, settled subtrees counted by multiplication. `compile_first`: the
 * compiled parameters bound first (the counts); else the space's order (index order). */
typedef struct cc_twalk cc_twalk;
cucore_status cc_twalk_open(const cucore_tune_space *s, int compile_first, cc_twalk **out);
void cc_twalk_close(cc_twalk *w);
/* In the space's order: every interval [first, last) of runnable configurations from index
 * `from` on, in order, to interval(first, last, user) until it returns nonzero (returned). */
int cc_twalk_intervals(cc_twalk *w, uint64_t from, int (*interval)(uint64_t, uint64_t, void *),
                       void *user);
/* 1 when configuration `index` is runnable (every check passes). */
int cc_twalk_check(cc_twalk *w, uint64_t index);

/* A space from a TuningSchema T1 document (space_t1.c), called by the JSON reader when the
 * document has "ConfigurationSpace". */
struct cc_json;
cucore_status cc_tune_space_t1(cucore_tune_space *s, const struct cc_json *root);
/* A space file's checks (space_checks.c): "cucore_args", "cucore_expect", "rtol", "atol"
 * read from the document's root into s; frees them. */
cucore_status cc_tune_checks_read(cucore_tune_space *s, const struct cc_json *root);
void cc_tune_checks_free(struct cc_tune_checks *c);
/* Frees what a space file gave beyond the space (space_extras.c, tune/space_file.h). */
void cc_tune_extras_free(struct cc_tune_extras *x);

#endif /* CUCORE_TUNE_SPACE_H */
