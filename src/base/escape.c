/* escape.c -- foreign text (what another library wrote) made safe to put in a message: bounded,
 * with control characters and bytes outside ASCII written as \xHH. */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

/* 1 for a byte kept as it is: printable ASCII (space to '~'). */
static int plain_byte(unsigned char c) { return c >= 0x20 && c < 0x7f; }

size_t cc_escape_text(char *dst, size_t cap, const char *src, size_t len) {
  if (cap == 0) return 0;
  while (len > 0 && (src[len - 1] == '\n' || src[len - 1] == '\r' || src[len - 1] == '\0'))
    len--; /* the line end the writer added is not part of the text */
  static const char more[] = "...";
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)src[i];
    size_t need = plain_byte(c) ? 1 : 4;
    size_t reserve = i + 1 < len ? sizeof more - 1 : 0; /* room to say the text was cut */
    if (o + need + reserve >= cap) {
      size_t k = cap - 1 - o < sizeof more - 1 ? cap - 1 - o : sizeof more - 1;
      memcpy(dst + o, more, k);
      o += k;
      break;
    }
    if (need == 1)
      dst[o++] = (char)c;
    else
      o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
  }
  dst[o] = '\0';
  return o;
}
