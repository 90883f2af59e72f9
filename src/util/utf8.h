/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: what counts as well-formed UTF-8 (RFC 3629, Unicode's
 * table 3-7). The JSON escaper and the job identity decide with it. */
#ifndef NCCLSCOPE_UTIL_UTF8_H
#define NCCLSCOPE_UTIL_UTF8_H

#include <stddef.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s, of which n > 0
 * bytes may be read; 0 when none starts there: a continuation byte, C0, C1
 * or F5..FF, an overlong form (E0 80..9F, F0 80..8F), a UTF-16 surrogate
 * (ED A0..BF), a code point above U+10FFFF (F4 90..BF), or a sequence cut
 * short by the end or by a byte that does not continue it. ASCII is 1,
 * NUL included. Reads no byte past the first that fails. */
static inline size_t ns_utf8_len(const unsigned char* s, size_t n) {
  unsigned char c = s[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0; /* below: overlong */
    if (c == 0xED) hi = 0x9F; /* above: surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90; /* below: overlong */
    if (c == 0xF4) hi = 0x8F; /* above: past U+10FFFF */
  } else {
    return 0;
  }
  if (n < 2 || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (i >= n || s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

#endif
