/*
 * fuzz_tune_space.c -- libFuzzer target for search-space files: cucore_tune_space_from_json on
 * any bytes (Kernel Tuner's tune_kernel() keywords, TuningSchema T1 with its Python values),
 * and on a space it reads: every getter of what the file gave, each define rendered for a
 * configuration, and -- when the raw space has at most 100000 configurations -- the counts and
 * a few configurations with each of their texts. Never a crash, a leak or undefined behaviour.
 *
 * Built with -DCUCORE_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt); run by
 * scripts/fuzz-space.sh, seeded from tests/fuzz/space-seeds/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cucore.h"
#include "tune/space_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RAW_MAX 100000 /* configurations counted and visited */

/* Each define of the space for configuration `index`. */
static void render_defines(const cucore_tune_space *s, uint64_t index) {
  const cucore_tune_define *d;
  size_t n, np;
  int given;
  if (cucore_tune_space_get_defines(s, &d, &n, &given) != CUCORE_OK) abort();
  if (cucore_tune_space_get_param_count(s, &np) != CUCORE_OK) abort();
  size_t *digits = calloc(np + 1, sizeof *digits);
  cc_tval *vals = calloc(np + 1, sizeof *vals);
  if (!digits || !vals) abort();
  cc_tune_values(s, index, vals, digits);
  for (size_t i = 0; i < n; i++) {
    char *t = NULL;
    size_t len = 0;
    if (cc_tune_define_render(s, digits, i, &t, &len) != CUCORE_OK || strlen(t) != len) abort();
    free(t);
  }
  free(digits);
  free(vals);
}

/* The counts, and configuration `index` with its texts. */
static void visit(const cucore_tune_space *s, uint64_t index) {
  cucore_tune_config cfg;
  char small[8];
  (void)cucore_tune_space_get_config(s, index, &cfg);
  for (int what = CUCORE_TUNE_TEXT_PARAMS; what <= CUCORE_TUNE_TEXT_JSON; what++) {
    size_t needed = 0;
    (void)cucore_tune_space_get_config_text(s, index, (cucore_tune_text)what, NULL, 0, &needed);
    (void)cucore_tune_space_get_config_text(s, index, (cucore_tune_text)what, small, sizeof small,
                                            &needed);
    char *buf = malloc(needed + 1);
    if (!buf) abort();
    (void)cucore_tune_space_get_config_text(s, index, (cucore_tune_text)what, buf, needed + 1,
                                            NULL);
    free(buf);
  }
  render_defines(s, index);
}

/* Every getter of what the file gave; the strings must be there. */
static void getters(const cucore_tune_space *s) {
  const cucore_tune_ignored_key *k;
  const char *const *list;
  cucore_tune_checks checks;
  size_t n;
  if (cucore_tune_space_get_ignored_keys(s, &k, &n) != CUCORE_OK) abort();
  for (size_t i = 0; i < n; i++)
    if (!k[i].key || !k[i].reason || !k[i].reason[0]) abort();
  if (cucore_tune_space_get_compiler_options(s, &list, &n) != CUCORE_OK) abort();
  for (size_t i = 0; i < n; i++)
    if (!list[i][0]) abort();
  if (cucore_tune_space_get_cmem_args(s, &list, &n) != CUCORE_OK) abort();
  for (size_t i = 0; i < n; i++)
    if (!strchr(list[i], '=')) abort();
  if (cucore_tune_space_get_checks(s, &checks) != CUCORE_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  cucore_tune_space *s = NULL;
  if (cucore_tune_space_from_json(text, size, &s) == CUCORE_OK) {
    uint64_t raw = 0;
    getters(s);
    if (cucore_tune_space_get_size(s, &raw) == CUCORE_OK && raw > 0 && raw <= RAW_MAX) {
      cucore_tune_counts counts;
      (void)cucore_tune_space_count(s, &counts);
      visit(s, 0);
      visit(s, raw / 2);
      visit(s, raw - 1);
    }
    cucore_tune_space_destroy(s);
  } else if (s != NULL || !cucore_last_error()[0]) {
    abort(); /* a refusal leaves no space and says why */
  }
  free(text);
  return 0;
}
