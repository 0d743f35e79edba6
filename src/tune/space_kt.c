/*
 * space_kt.c -- Kernel Tuner's launch keys read as its util.py does: problem_size
 * (get_problem_size: an int, a string, or a list of them), grid_div_x/y/z
 * (get_grid_dimensions: an int, a string, a list whose factors multiply, [] for none, and
 * without one the block-size parameter's value or 1) and kernel names in which parameters
 * appear as words (replace_param_occurrences). Kernel Tuner computes each string with
 * int(eval(...)): the expressions here are put inside floor() unless they are a plain integer
 * or name, so that a fraction is cut as Kernel Tuner cuts it.
 */
#include "tune/space_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_word(const char *t) {
  if (!*t) return 0;
  int digits = isdigit((unsigned char)*t);
  for (; *t; t++) {
    if (digits ? !isdigit((unsigned char)*t) : !(isalnum((unsigned char)*t) || *t == '_')) return 0;
  }
  return 1;
}

char *cc_kt_int_expr(const char *text) {
  size_t n = strlen(text);
  char *t = cc_malloc(n + 8, "an expression");
  if (!t) return NULL;
  snprintf(t, n + 8, is_word(text) ? "%s" : "floor(%s)", text);
  return t;
}

/* 1 when the JSON number's text is an integer (Kernel Tuner's isinstance(x, int)). */
static int integer_text(const char *t) {
  if (*t == '-') t++;
  return is_word(t) && isdigit((unsigned char)*t);
}

/* The string v as the user wrote it, parsed once so that a mistake's column is the user's
 * (not that of the floor() around it). */
static cucore_status check_expr(cucore_tune_space *s, const char *key, const cc_json *v) {
  cc_expr e;
  char *why = NULL, k[128], t[128];
  if (cc_expr_parse(v->text, cc_tune_find_param, s, &e, &why) == 0) {
    cc_expr_free(&e);
    return CUCORE_OK;
  }
  cucore_status st = cc_sf_fail(s, v, "`%s` `%s`: %s", cc_sf_clip(key, k), cc_sf_clip(v->text, t),
                                why ? why : "out of memory");
  free(why);
  return st;
}

cucore_status cc_kt_expr(cucore_tune_space *s, const char *key, const cc_json *v, char **out) {
  char k[128], t[128];
  *out = NULL;
  if (v->type == CC_JSON_NUMBER && !integer_text(v->text))
    return cc_sf_fail(s, v, "`%s` must be an integer or a string, found %s", cc_sf_clip(key, k),
                      cc_sf_clip(v->text, t));
  if (v->type == CC_JSON_STRING && !cc_sf_one_expr(v->text))
    return cc_sf_fail(s, v, "`%s` must be one expression, found \"%s\"", cc_sf_clip(key, k),
                      cc_sf_clip(v->text, t));
  if (v->type != CC_JSON_NUMBER && v->type != CC_JSON_STRING)
    return cc_sf_wrong(s, key, "an integer or a string", v);
  if (v->type == CC_JSON_STRING) {
    cucore_status st = check_expr(s, key, v);
    if (st != CUCORE_OK) return st;
  }
  *out = v->type == CC_JSON_STRING ? cc_kt_int_expr(v->text) : cc_strdup(v->text, "a number");
  return *out ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

cucore_status cc_kt_set_expr(cucore_tune_space *s, const char *key, const cc_json *v,
                             cucore_tune_slot slot, const char *text) {
  cucore_status st = cucore_tune_space_set_expr(s, slot, text);
  return st == CUCORE_OK ? st : cc_sf_restate(s, key, v, st);
}

cucore_status cc_kt_set_text(cucore_tune_space *s, const char *key, const cc_json *v,
                             cucore_tune_slot slot, cc_sf_writer write) {
  char *text;
  cucore_status st = cc_sf_text(s, key, v, write, NULL, &text);
  if (st == CUCORE_OK) st = cc_kt_set_expr(s, key, v, slot, text);
  free(text);
  return st;
}

/* Where the items of a launch key go: into f, joined with ", ", counted; `items` reads them. */
typedef struct slot_out {
  FILE *f;
  int count;
  cc_sf_item items;
} slot_out;

/* One item of a launch key, written after ", " unless it is the first (ctx: the slot_out). */
static cucore_status item(cucore_tune_space *s, const char *key, const cc_json *v, void *ctx) {
  slot_out *o = ctx;
  char *e;
  cucore_status st = cc_kt_expr(s, key, v, &e);
  if (st == CUCORE_OK) fprintf(o->f, "%s%s", o->count++ ? ", " : "", e);
  free(e);
  return st;
}

/* The items of problem_size: one, or a list of 1 to 3. */
static cucore_status problem_items(cucore_tune_space *s, const char *key, const cc_json *v,
                                   void *ctx) {
  if (v->type != CC_JSON_ARRAY) return item(s, key, v, ctx);
  if (v->n == 0 || v->n > 3)
    return cc_sf_fail(s, v, "`%s` must have 1 to 3 dimensions, found %zu", key, v->n);
  return cc_sf_each(s, key, v, NULL, item, ctx);
}

/* The factors of a grid_div: one, or a list whose items (lists too) multiply; a null item
 * is 1 (Kernel Tuner's get_dimension_divisor(None, 1, params)). */
static cucore_status div_items(cucore_tune_space *s, const char *key, const cc_json *v, void *ctx) {
  slot_out *o = ctx;
  if (v->type == CC_JSON_NULL) return fprintf(o->f, "%s1", o->count++ ? ", " : ""), CUCORE_OK;
  if (v->type != CC_JSON_ARRAY) return item(s, key, v, ctx);
  return cc_sf_each(s, key, v, NULL, div_items, ctx);
}

/* The items of the slot_out `ctx` into f; none: "1". */
static cucore_status write_items(cucore_tune_space *s, const char *key, const cc_json *v, FILE *f,
                                 void *ctx) {
  slot_out *o = ctx;
  o->f = f;
  cucore_status st = o->items(s, key, v, o);
  if (st == CUCORE_OK && o->count == 0) fputs("1", f);
  return st;
}

/* The items `items` reads, joined with ", ", set as slot `slot`; none: "1", or nothing when
 * `none_is_default`. */
static cucore_status to_slot(cucore_tune_space *s, const char *key, const cc_json *v,
                             cucore_tune_slot slot, cc_sf_item items, int none_is_default) {
  slot_out o = {NULL, 0, items};
  char *text;
  cucore_status st = cc_sf_text(s, key, v, write_items, &o, &text);
  if (st == CUCORE_OK && !(o.count == 0 && none_is_default))
    st = cc_kt_set_expr(s, key, v, slot, text);
  free(text);
  return st;
}

cucore_status cc_kt_problem_size(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *obj) {
  (void)obj;
  return to_slot(s, key, v, CUCORE_TUNE_PROBLEM_SIZE, problem_items, 0);
}

cucore_status cc_kt_grid_div(cucore_tune_space *s, const char *key, const cc_json *v, int d,
                             int empty_is_default) {
  return to_slot(s, key, v, (cucore_tune_slot)(CUCORE_TUNE_GRID_DIV_X + d), div_items,
                 empty_is_default);
}

cucore_status cc_kt_default_div_x(cucore_tune_space *s) {
  const char *name = cc_tune_block_name(s, 0);
  if (s->slot[CUCORE_TUNE_GRID_DIV_X].n > 0 || s->slot[CUCORE_TUNE_BLOCK].n > 0 ||
      cc_tune_find_param(s, name, strlen(name)) >= 0)
    return CUCORE_OK;
  return cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID_DIV_X, "1");
}

/* ---- kernel names ------------------------------------------------------------------------ */

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* `name` with each run of [A-Za-z0-9_] that names a parameter written as `{run}`. */
static void holes(cucore_tune_space *s, const char *name, FILE *f) {
  while (*name) {
    size_t n = 0;
    while (word_char(name[n])) n++;
    if (n == 0) {
      fputc(*name++, f);
      continue;
    }
    int p = cc_tune_find_param(s, name, n);
    fprintf(f, p >= 0 ? "{%.*s}" : "%.*s", (int)n, name);
    name += n;
  }
}

/* The kernel name `v` as cucore's template: as it is with a `{`, else with holes(). */
static cucore_status name_text(cucore_tune_space *s, const char *key, const cc_json *v, FILE *f,
                               void *ctx) {
  (void)key, (void)ctx;
  if (strchr(v->text, '{'))
    fputs(v->text, f);
  else
    holes(s, v->text, f);
  return CUCORE_OK;
}

cucore_status cc_kt_kernel_name(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_STRING) return cc_sf_wrong(s, key, "a string", v);
  char *name;
  cucore_status st = cc_sf_text(s, key, v, name_text, NULL, &name);
  if (st == CUCORE_OK && (st = cucore_tune_space_set_kernel(s, name)) != CUCORE_OK)
    st = cc_sf_restate(s, key, v, st);
  free(name);
  return st;
}
