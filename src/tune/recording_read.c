/*
 * recording_read.c -- a recorded space from a file's JSON text: a Kernel Tuner cache file
 * (recording_kt.c) or a TuningSchema T4 file (recording_t4.c, when it has "results" and no
 * "cache"), with the kernel's and device's names where the file gives them.
 */
#include "tune/recording.h"
#include "tune/strict_json.h"

#include <stdlib.h>

static char *str_or_empty(const cc_json *root, const char *key) {
  const cc_json *v = cc_json_get(root, key);
  return cc_strdup(v && v->type == CC_JSON_STRING ? v->text : "", "a recording");
}

cucore_status cc_trecording_read(const char *text, size_t len, const char *name,
                                 cc_trecording **out) {
  *out = NULL;
  char why[256];
  cc_json root;
  if (cc_json_parse(text, len, &root, why, sizeof why) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (a recording): %s", name, why);
  cc_trecording *r = cc_calloc(1, sizeof *r, "a recording");
  cucore_status st = r ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK && root.type != CC_JSON_OBJECT)
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: not a JSON object: expected a Kernel Tuner cache file or TuningSchema T4",
                 name);
  int t4 = st == CUCORE_OK && cc_json_get(&root, "results") && !cc_json_get(&root, "cache");
  if (st == CUCORE_OK && t4) st = cc_trecording_read_t4(r, &root, name);
  if (st == CUCORE_OK && !t4) st = cc_trecording_read_kt(r, &root, name);
  if (st == CUCORE_OK && (!(r->kernel = str_or_empty(&root, "kernel_name")) ||
                          !(r->device = str_or_empty(&root, "device_name"))))
    st = CUCORE_HOST_OUT_OF_MEMORY;
  cc_json_free(&root);
  if (st != CUCORE_OK) {
    cc_trecording_free(r);
    return st;
  }
  *out = r;
  return CUCORE_OK;
}
