/*
 * fuzz_tune_expr.c -- libFuzzer target for the expression language of `cucore tune`
 * (src/tune/expr_parse.c, expr_eval.c): arbitrary bytes are parsed with a lookup that knows a
 * few names, and what parses is evaluated with values of every kind (integers at the ends of
 * 64 bits, reals with NaN and infinities, strings with NUL bytes, foreign bytes and NULL, bools)
 * in several assignments. Besides crashes, leaks and undefined behaviour, it aborts when a
 * message is missing or unbounded, or an evaluation message names a parameter or a string's
 * value, or a string result does not point at readable bytes.
 *
 * Built with -DCUCORE_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt); run by
 * scripts/fuzz-tune-expr.sh (seeds: tests/fuzz/tune_expr_seeds.txt, tune_expr.dict).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tune/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const NAMES[] = {"a", "b", "x", "s", "flag", "dtype", "empty", "block_size_x"};
#define NVARS 8
#define NSETS 6

/* A string value that must never appear in an evaluation message. */
static const char SECRET[] = "zq_secret_value_zq";

static cc_tval pool(int k) {
  static const char nul[] = {'a', 0, 'b'};
  switch (k) {
  case 0: return cc_tval_int(6);
  case 1: return cc_tval_int(4);
  case 2: return cc_tval_real(2.5);
  case 3: return cc_tval_str("float", 5);
  case 4: return cc_tval_bool(1);
  case 5: return cc_tval_int(0);
  case 6: return cc_tval_int(INT64_MIN);
  case 7: return cc_tval_int(INT64_MAX);
  case 8: return cc_tval_real(__builtin_nan(""));
  case 9: return cc_tval_real(__builtin_inf());
  case 10: return cc_tval_real(-0.0);
  case 11: return cc_tval_str("", 0);
  case 12: return cc_tval_str(nul, sizeof nul);
  case 13: return cc_tval_str("\xff\xfe\xc3", 3);
  case 14: return cc_tval_str(NULL, 0);
  case 15: return cc_tval_str(SECRET, sizeof SECRET - 1);
  case 16: return cc_tval_bool(0);
  case 17: return cc_tval_real(1e308);
  case 18: return cc_tval_int(-1);
  default: return cc_tval_str(" 12 ", 4);
  }
}

static int lookup(void *ctx, const char *name, size_t len) {
  (void)ctx;
  for (int i = 0; i < NVARS; i++)
    if (strlen(NAMES[i]) == len && memcmp(NAMES[i], name, len) == 0) return i;
  return -1;
}

/* Reads every byte of a result string (ASan checks they are readable). */
static volatile unsigned sink;

static void touch(cc_tval v) {
  if (v.kind != CC_TV_STR) return;
  if (v.n > 0 && !v.s) abort();
  for (size_t i = 0; i < v.n; i++) sink += (unsigned char)v.s[i];
}

static void check_eval_message(const char *why) {
  if (!why || strlen(why) > 200 || strncmp(why, "column ", 7) != 0) abort();
  if (strstr(why, SECRET) || strstr(why, "block_size_x") || strstr(why, "dtype")) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > CC_EXPR_TEXT_MAX + 16) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  cc_expr e;
  char *why = NULL;
  if (cc_expr_parse(text, lookup, NULL, &e, &why) < 0) {
    if (!why || strlen(why) > 600 || strncmp(why, "column ", 7) != 0) abort();
    free(why);
    free(text);
    return 0;
  }
  if (why || strcmp(e.text, text) != 0) abort();
  for (int set = 0; set < NSETS; set++) {
    cc_tval vars[NVARS], v;
    for (int i = 0; i < NVARS; i++) vars[i] = pool((i * 7 + set * 5 + (set > 2 ? i : 0)) % 20);
    if (cc_expr_eval(&e, vars, &v, &why) < 0) {
      check_eval_message(why);
      free(why);
      why = NULL;
    } else {
      if (why) abort();
      touch(v);
    }
  }
  for (int i = 0; i < NVARS; i++) sink += (unsigned)cc_expr_uses(&e, i);
  cc_expr_free(&e);
  free(text);
  return 0;
}
