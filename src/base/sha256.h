/* sha256.h -- SHA-256 (FIPS 180-4), for cache keys and header digests. */
#ifndef CUCORE_SHA256_H
#define CUCORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct cc_sha256 {
  uint32_t h[8];
  uint64_t length; /* bytes hashed */
  unsigned char block[64];
  size_t used;
} cc_sha256;

void cc_sha256_init(cc_sha256 *s);
void cc_sha256_update(cc_sha256 *s, const void *data, size_t len);
void cc_sha256_final(cc_sha256 *s, unsigned char digest[32]);
/* One-shot digest as 64 lowercase hex characters plus NUL. */
void cc_sha256_hex(const void *data, size_t len, char hex[65]);
void cc_hex(const unsigned char *bytes, size_t n, char *out);

#endif
