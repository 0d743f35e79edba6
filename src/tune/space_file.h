/*
 * tune/space_file.h -- what the readers of search-space files share, lowest first:
 *   space_extras.c  what a file gives beyond the space (compiler options, defines, constant
 *                   memory, the keys read but ignored), their public getters and the rendering
 *                   of one define for a configuration; the document while it is read
 *   space_keys.c    where a value or a key is (line, column), failures that say so, the key
 *                   tables (an unknown key is refused naming the nearest known one), a list
 *                   read item by item and a value's text written into memory
 *   space_kt.c      Kernel Tuner's launch keys (problem_size, grid_div_x/y/z with
 *                   get_grid_dimensions()' rule) and kernel names with parameters in them
 *   space_kt_keys.c Kernel Tuner's keys that reach the compile and the run (compiler_options,
 *                   defines, cmem_args, smem_args) and those cucore checks but cannot honour
 *                   otherwise (lang, objective, texmem_args)
 *   space_pyvals.c  T1's parameter values written as Python (lists, range(), comprehensions)
 *   space_t1.c      TuningSchema T1;  space_checks.c  the checks;  space_json.c  the entry
 * Calls go down this list only (space.c frees the extras and calls nothing else here).
 */
#ifndef CUCORE_TUNE_SPACE_FILE_H
#define CUCORE_TUNE_SPACE_FILE_H

#include "tune/strict_json.h"
#include "tune/space.h"

#include <stdio.h>

/* ---- the extras (space_extras.c) --------------------------------------------------------- */

struct cc_tune_extras {
  const char *doc;  /* the document, only while cucore_tune_space_from_json reads it */
  const char *what; /* "space JSON" or "T1 space": the head of messages */
  char **options;   /* compiler options */
  size_t noptions, cap_options;
  cucore_tune_define *defs; /* name and text owned */
  size_t ndefs, cap_defs;
  int has_defines; /* the file has "defines" (maybe empty: then nothing is defined) */
  char **cmem;     /* "NAME=SPEC", a `cucore run --global` each */
  size_t ncmem, cap_cmem;
  cucore_tune_ignored_key *ignored; /* keys owned, reasons static */
  size_t nignored, cap_ignored;
};

/* The space's extras, made when first needed. */
cucore_status cc_tune_extras_of(cucore_tune_space *s, struct cc_tune_extras **out);
/* Appends a copy of `text` to the compiler options / constant-memory specs. */
cucore_status cc_tune_extras_add_option(cucore_tune_space *s, const char *text);
cucore_status cc_tune_extras_add_cmem(cucore_tune_space *s, const char *name, const char *spec);
/* Appends define `name` with `text` (literal: 1 for a number or bool, never substituted). */
cucore_status cc_tune_extras_add_define(cucore_tune_space *s, const char *name, const char *text,
                                        int literal);
/* Records `key` (copied) as read but ignored, for `reason` (static text); once per key. */
cucore_status cc_tune_extras_ignore(cucore_tune_space *s, const char *key, const char *reason);
/* The text of define `i` for the configuration whose value indices are `digits` (one per
 * parameter, as cc_tune_values fills them): Kernel Tuner's replace_param_occurrences, every
 * run of [A-Za-z0-9_] that is a parameter's name replaced by that parameter's value as a
 * compile sees it (c_text); a number or bool define as it is. *out is malloc'd (the caller
 * frees it), *len its length (may be NULL). CUCORE_INVALID_ARGUMENT when `i` is not a define
 * of the space. */
cucore_status cc_tune_define_render(const cucore_tune_space *s, const size_t *digits, size_t i,
                                    char **out, size_t *len);

/* ---- reading a file (space_keys.c) ------------------------------------------------------- */

/* Reads the value `v` of key `key` of object `obj` into s. */
typedef cucore_status (*cc_sf_reader)(cucore_tune_space *s, const char *key, const cc_json *v,
                                      const cc_json *obj);

/* One known key of an object: read (reader set), or accepted and recorded as ignored (reader
 * NULL, `reason` why). `nullable`: null means the key is absent (Kernel Tuner's None). */
typedef struct cc_sf_key {
  const char *key;
  cc_sf_reader read;
  const char *reason;
  int nullable;
} cc_sf_key;

/* The 1-based line and column of byte `at` of the document. */
void cc_sf_where(const cucore_tune_space *s, size_t at, int *line, int *col);
/* Fails with CUCORE_INVALID_ARGUMENT: "<what>: <message> (line L, column C)", where `v` is. */
cucore_status cc_sf_fail(const cucore_tune_space *s, const cc_json *v, const char *fmt, ...)
    CC_PRINTF(3, 4);
/* "<what>: `key` must be <want>, found <v's type> (line L, column C)". */
cucore_status cc_sf_wrong(const cucore_tune_space *s, const char *key, const char *want,
                          const cc_json *v);
/* After a space call failed with `st`: its message restated after "<what>: `key` (line L,
 * column C): ". Returns st. */
cucore_status cc_sf_restate(const cucore_tune_space *s, const char *key, const cc_json *v,
                            cucore_status st);
/* Writes the text of value `v` of `key` into f; `ctx` is the caller's. */
typedef cucore_status (*cc_sf_writer)(cucore_tune_space *s, const char *key, const cc_json *v,
                                      FILE *f, void *ctx);
/* The text `write` makes of `v`, in *text (malloc'd, the caller frees it; NULL on failure):
 * the writer's failure, or "out of memory reading `key`". */
cucore_status cc_sf_text(cucore_tune_space *s, const char *key, const cc_json *v,
                         cc_sf_writer write, void *ctx, char **text);
/* Reads one item `v` of a list, named `key` ("list[3]"); `ctx` is the caller's. */
typedef cucore_status (*cc_sf_item)(cucore_tune_space *s, const char *key, const cc_json *v,
                                    void *ctx);
/* `item` on each item of the JSON list `v` of `key`, each named "key[i]"; the first failure
 * stops it. With `want` ("a list of strings"), a `v` that is not a list is refused with it
 * (cc_sf_wrong); without, the caller has checked. */
cucore_status cc_sf_each(cucore_tune_space *s, const char *key, const cc_json *v, const char *want,
                         cc_sf_item item, void *ctx);
/* The keys of object `obj` (called `path` in messages, "" for the document) against the table
 * keys[0..n): an unknown key is refused naming the nearest known one, ignored keys are
 * recorded with their reasons, then the readers run in the table's order. */
cucore_status cc_sf_object(cucore_tune_space *s, const cc_json *obj, const char *path,
                           const cc_sf_key *keys, size_t n);
/* A copy of `t` cut to at most 80 bytes of printable text ("..." marks a cut), for messages. */
const char *cc_sf_clip(const char *t, char buf[128]);
/* 1 when `t` is one expression of a slot: not empty, no comma outside parentheses. */
int cc_sf_one_expr(const char *t);
/* 1 when `t` holds a control character (below 0x20, or 0x7f). */
int cc_sf_has_control(const char *t);

/* ---- Kernel Tuner's launch keys (space_kt.c) --------------------------------------------- */

/* problem_size: an integer, a string, or a list of them (expressions of the parameters). A
 * reader of the key tables, as cc_kt_kernel_name (`obj` unused). */
cucore_status cc_kt_problem_size(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *obj);
/* grid_div_x/y/z (d 0..2): an integer, a string, or a list of them (nested lists multiply;
 * [] divides by 1). `none_is_default` (T1's GridDivX): an empty list means the default. */
cucore_status cc_kt_grid_div(cucore_tune_space *s, const char *key, const cc_json *v, int d,
                             int empty_is_default);
/* Without a grid_div for x: Kernel Tuner divides by the block-size parameter's value, or by 1
 * when there is none (not by the block's default 256): that rule set in the space. */
cucore_status cc_kt_default_div_x(cucore_tune_space *s);
/* A kernel name in which parameters appear as whole words ("add<float, block_size_x>") made
 * cucore's template ("add<float, {block_size_x}>"); a name with `{` is cucore's already. */
cucore_status cc_kt_kernel_name(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *obj);
/* An integer or a string of a launch key as the text of one cucore expression (through
 * cc_kt_int_expr), malloc'd into *out; anything else refused naming `key`. */
cucore_status cc_kt_expr(cucore_tune_space *s, const char *key, const cc_json *v, char **out);
/* Sets slot `slot` of s to `text`, the value `v` of `key`; a refusal restated (cc_sf_restate). */
cucore_status cc_kt_set_expr(cucore_tune_space *s, const char *key, const cc_json *v,
                             cucore_tune_slot slot, const char *text);
/* Sets slot `slot` of s to the text `write` makes of `v` (cc_sf_text, then cc_kt_set_expr). */
cucore_status cc_kt_set_text(cucore_tune_space *s, const char *key, const cc_json *v,
                             cucore_tune_slot slot, cc_sf_writer write);
/* A Kernel Tuner expression text (grid_div, problem_size, smem_args.size) as cucore reads it:
 * Kernel Tuner truncates with int(), so anything but a plain integer or name goes inside
 * floor(). malloc'd (failure recorded). */
char *cc_kt_int_expr(const char *text);

/* ---- Kernel Tuner's other keys (space_kt_keys.c): readers for the key tables ------------- */

/* compiler_options: a list of options, one string each. */
cucore_status cc_kt_compiler_options(cucore_tune_space *s, const char *key, const cc_json *v,
                                     const cc_json *obj);
/* defines: name -> a string (parameters' names replaced), a number or a bool. */
cucore_status cc_kt_defines(cucore_tune_space *s, const char *key, const cc_json *v,
                            const cc_json *obj);
/* cmem_args: name -> a `cucore run --global` spec, or {"type": T, "values": N or [N, ...]}. */
cucore_status cc_kt_cmem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj);
/* smem_args: {"size": EXPR}, the dynamic shared memory; refused beside cucore's "smem" in obj. */
cucore_status cc_kt_smem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj);
/* smem_args.size (and T1's SharedMemory): the dynamic shared memory, one expression. */
cucore_status cc_kt_smem_size(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj);
/* lang (and T1's Language): CUDA, CuPy, NVCUDA or PyCUDA recorded as ignored, others refused. */
cucore_status cc_kt_lang(cucore_tune_space *s, const char *key, const cc_json *v,
                         const cc_json *obj);
/* objective "time", objective_higher_is_better false, objectives {"time": false}: ignored;
 * anything else refused (cucore ranks by time). texmem_args: {} ignored, anything else refused. */
cucore_status cc_kt_objective(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj);
cucore_status cc_kt_higher_is_better(cucore_tune_space *s, const char *key, const cc_json *v,
                                     const cc_json *obj);
cucore_status cc_kt_objectives(cucore_tune_space *s, const char *key, const cc_json *v,
                               const cc_json *obj);
cucore_status cc_kt_texmem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *obj);

/* ---- T1 values (space_pyvals.c) ---------------------------------------------------------- */

/* The values of a T1 parameter written as Python: "[1, 2, 'a', True]", "range(A[, B[, C]])",
 * "list(range(...))" or "[EXPR for N in ITER [if COND]]" (ITER a range or a list; EXPR and COND
 * cucore expressions over N), nothing ever run as code. Returns 0 with *vals (malloc'd texts:
 * numbers as written or computed, strings' bytes, bools "true"/"false"; free with
 * cc_py_values_free) and *n, or -1 with the reason in why[0..cap). */
int cc_py_values(const char *text, char ***vals, size_t *n, char *why, size_t cap);
void cc_py_values_free(char **vals, size_t n);

#endif /* CUCORE_TUNE_SPACE_FILE_H */
