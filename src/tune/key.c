/*
 * key.c -- what a tune's results are keyed on: the key (SHA-256 over labelled,
 * length-prefixed fields, as the compile cache's key is made) and the environment's
 * fingerprint (the device, the driver and compiler, cucore, the timing policy).
 */
#include "compile/cache.h"
#include "loader/loader.h"
#include "tune/store.h"

#include <stdio.h>
#include <string.h>

cucore_status cucore_tune_key(const cucore_tune_key_fields *f, char out[65]) {
  cc_begin();
  CC_CHECK_ARG(f, "cucore_tune_key", "fields");
  CC_CHECK_ARG(out, "cucore_tune_key", "out");
  const char *labels[] = {"headers", "options", "kernel", "launch", "args", "params"};
  const char *texts[] = {f->headers, f->options, f->kernel, f->launch, f->args, f->params};
  cc_sha256 sha;
  cc_sha256_init(&sha);
  cc_cache_key_field(&sha, "cucore-tune-key", "1", 1);
  const char *src = f->source ? f->source : "";
  cc_cache_key_field(&sha, "source", src, f->source_size ? f->source_size : strlen(src));
  for (int i = 0; i < 6; i++)
    cc_cache_key_field(&sha, labels[i], texts[i] ? texts[i] : "", texts[i] ? strlen(texts[i]) : 0);
  unsigned char d[32];
  cc_sha256_final(&sha, d);
  cc_hex(d, 32, out);
  out[64] = 0;
  return CUCORE_OK;
}

cucore_status cucore_tune_fingerprint(const cucore_device_props *p, const char *timing, char *out,
                                      size_t cap) {
  cc_begin();
  CC_CHECK_ARG(p, "cucore_tune_fingerprint", "props");
  CC_CHECK_ARG(out, "cucore_tune_fingerprint", "out");
  if (cap == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_tune_fingerprint: cap is 0");
  cucore_library_info driver, nvrtc; /* only these two: nvJitLink and libNVVM stay unloaded */
  cc_driver_describe(&driver);
  cc_nvrtc_describe(&nvrtc);
  int n = snprintf(out, cap, "name=%s;cc=%d.%d;sms=%d;l2=%d;driver=%d;nvrtc=%d;cucore=%s;timing=%s",
                   p->name, p->cc_major, p->cc_minor, p->sm_count, p->l2_cache_bytes,
                   driver.version, nvrtc.version, CUCORE_VERSION_STRING, timing ? timing : "");
  if (n >= 0 && (size_t)n < cap) return CUCORE_OK;
  out[0] = 0;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_tune_fingerprint: the fingerprint needs %d bytes with its NUL; cap is "
                 "%zu",
                 n + 1, cap);
}
