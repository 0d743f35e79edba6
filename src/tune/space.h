/*
 * tune/space.h -- the search space of `cucore tune` (struct cucore_tune_space) and what its
 * files share, one job each:
 *   space.c         building a space: parameters, restrictions, expressions, kernel, limits
 *   space_parse.c   parameters and expressions written as text ("NAME=V1,V2,LO..HI:STEP")
 *   space_kinds.c   parameters by name, block-size names, what each parameter is to a compile
 *   space_config.c  one configuration: values, restrictions, launch, limits, compile hash;
 *                   the counts
 *   space_text.c    a configuration's texts (parameters, kernel name, defines, JSON)
 *   space_json.c    a space from Kernel Tuner's tune_kernel() keywords as JSON (json.c reads)
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
  char **text;  /* the values as written */
  cc_tval *val; /* numbers; is_int -1 for text values */
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

/* Resolves every parameter's kind (after any change of parameters, expressions, kernel or
 * source). */
void cc_tune_resolve_kinds(cucore_tune_space *s);
/* The parameter named name[0..len), or -1 (a cc_expr_lookup_fn over the space). */
int cc_tune_find_param(void *space, const char *name, size_t len);

/* The name of the parameter that is block dimension d when no block expression is set. */
const char *cc_tune_block_name(const cucore_tune_space *s, int d);
/* The values of configuration `index` (vals has nparams entries; digits may be NULL). */
void cc_tune_values(const cucore_tune_space *s, uint64_t index, cc_tval *vals, size_t *digits);
/* The raw size; -1 when it does not fit 64 bits. */
int cc_tune_raw(const cucore_tune_space *s, uint64_t *raw);
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
