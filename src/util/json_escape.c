/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the JSON string escaper (json_escape.h). */
#include "util/json_escape.h"

#include <string.h>

#include "util/utf8.h"

/* 2: copied as is; 1: copied as is unless NS_JSON_ESC_HTML ('<', '>', '&');
 * 0: escaped, or (from 0x80) a UTF-8 sequence to check. A byte is copied
 * when its value is above the flags' HTML bit. */
const unsigned char ns_json_plain_byte[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0),                                         /* 0x00-0x1F: controls */
    2, 2, 0, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2,         /* 0x20-0x2F: '"', '&' */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 1, 2,         /* 0x30-0x3F: '<', '>' */
    R16(2),                                                 /* 0x40-0x4F */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 2, 2, 2,         /* 0x50-0x5F: '\\' */
    R16(2),                                                 /* 0x60-0x6F */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0,         /* 0x70-0x7F: DEL */
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), /* 0x80-0xFF */
#undef R16
};

size_t ns_json_escape(char* out, size_t cap, const char* in, size_t n, unsigned flags, size_t* used) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char* s = (const unsigned char*)in;
  const unsigned char html = (unsigned char)(flags & NS_JSON_ESC_HTML);
  size_t i = 0, o = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (ns_json_plain_byte[c] > html) { /* a run of plain bytes, as much of it as fits */
      size_t room = cap - o, end = n - i <= room ? n : i + room, k = i;
      if (!room) break;
      while (k < end && ns_json_plain_byte[s[k]] > html) k++;
      memcpy(out + o, s + i, k - i);
      o += k - i;
      i = k;
      continue;
    }
    char esc[NS_JSON_ESC_UNIT_MAX];
    const char* unit = esc;
    size_t w = 2, adv = 1;
    esc[0] = '\\';
    if (c < 0x80) {
      switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\t': esc[1] = 't'; break;
        case '\n': esc[1] = 'n'; break;
        case '\f': esc[1] = 'f'; break;
        case '\r': esc[1] = 'r'; break;
        default: /* other controls, DEL; '<', '>', '&' under NS_JSON_ESC_HTML */
          memcpy(esc + 1, "u00", 3);
          esc[4] = hex[c >> 4];
          esc[5] = hex[c & 15];
          w = 6;
      }
    } else {
      size_t len = ns_utf8_len(s + i, n - i);
      if (len == 0) {
        memcpy(esc + 1, "ufffd", 5); /* one U+FFFD per byte outside a well-formed sequence */
        w = 6;
      } else if (html && len == 3 && c == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
        memcpy(esc + 1, s[i + 2] == 0xA8 ? "u2028" : "u2029", 5); /* line and paragraph separators */
        w = 6;
        adv = 3;
      } else {
        unit = (const char*)s + i;
        w = adv = len;
      }
    }
    if (w > cap - o) break;
    memcpy(out + o, unit, w);
    o += w;
    i += adv;
  }
  if (used) *used = i;
  return o;
}
