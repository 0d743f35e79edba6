/* tune_values.c -- a configuration's values as the command writes them: the texts the library
 * makes (whole, of any length) and the parameters as a JSON object, one value at a time (never
 * by splitting a text). */
#include <stdlib.h>

#include "tune.h"

char *tune_text(const tune_ctx *c, uint64_t index, cucore_tune_text what) {
  size_t need = 0;
  if (cucore_tune_space_get_config_text(c->space, index, what, NULL, 0, &need) != CUCORE_OK)
    return NULL;
  char *t = malloc(need + 1);
  if (t && cucore_tune_space_get_config_text(c->space, index, what, t, need + 1, NULL) == CUCORE_OK)
    return t;
  free(t);
  return NULL;
}

void tune_json_value(json_out *j, const char *key, const cucore_tune_value *v) {
  switch (v->type) {
  case CUCORE_TUNE_VALUE_INT: json_int(j, key, (long long)v->i); break;
  case CUCORE_TUNE_VALUE_REAL: json_double(j, key, v->d); break;
  case CUCORE_TUNE_VALUE_BOOL: json_bool(j, key, (int)v->i); break;
  default: json_str(j, key, v->text); break;
  }
}

cucore_tune_value *tune_values(const tune_ctx *c, uint64_t index, size_t *n) {
  *n = 0;
  cucore_tune_space_get_param_count(c->space, n);
  cucore_tune_value *v = calloc(*n ? *n : 1, sizeof *v);
  if (v && cucore_tune_space_get_values(c->space, index, v, *n) == CUCORE_OK) return v;
  free(v);
  *n = 0;
  return NULL;
}

void tune_json_params(const tune_ctx *c, json_out *j, const char *key, uint64_t index) {
  size_t n = 0;
  cucore_tune_value *v = tune_values(c, index, &n);
  json_begin_object(j, key);
  for (size_t i = 0; i < n; i++) {
    cucore_tune_param_info p;
    if (cucore_tune_space_get_param(c->space, i, &p) == CUCORE_OK)
      tune_json_value(j, p.name, &v[i]);
  }
  json_end_object(j);
  free(v);
}
