/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the JSON string escaper (src/util/json_escape.c) and the UTF-8
 * rule under it (src/util/utf8.h), on hand-written inputs: well-formed
 * sequences at every boundary of the encoding, overlong forms, surrogates,
 * code points above U+10FFFF, sequences cut by the end of the input and by
 * the end of the output buffer, every control character, the HTML option;
 * ns_utf8_len against an independent decoder over every 1- to 3-byte input;
 * and random bytes, whole and in pieces, against an independent JSON
 * decoder: valid UTF-8 out, every byte of a well-formed sequence back,
 * U+FFFD for each other byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/json_escape.h"
#include "util/utf8.h"

static char out[8192];

/* in[0, n) escaped whole (into a buffer with room to spare), as a C string. */
static const char* esc(const char* in, size_t n, unsigned flags) {
  size_t used = ~(size_t)0;
  size_t w = ns_json_escape(out, sizeof out - 1, in, n, flags, &used);
  CHECK_U64(used, n);
  out[w] = 0;
  return out;
}
#define ESC(lit) esc((lit), sizeof(lit) - 1, 0)
#define ESC_HTML(lit) esc((lit), sizeof(lit) - 1, NS_JSON_ESC_HTML)

static void well_formed_kept(void) {
  static const char* const ok[] = {
      "",
      "plain ASCII: AllReduce ncclFloat32 RING/SIMPLE 0123456789 ~!@#$%^*()_+={}[]|:;',.?/`",
      "\xc2\x80",                 /* U+0080, the first two-byte */
      "\xc3\xa9",                 /* é */
      "\xdf\xbf",                 /* U+07FF, the last two-byte */
      "\xe0\xa0\x80",             /* U+0800, the first three-byte */
      "\xe2\x82\xac",             /* € */
      "\xed\x9f\xbf",             /* U+D7FF, just below the surrogates */
      "\xee\x80\x80",             /* U+E000, just above them */
      "\xef\xbf\xbd",             /* U+FFFD itself */
      "\xef\xbf\xbf",             /* U+FFFF, the last three-byte */
      "\xf0\x90\x80\x80",         /* U+10000, the first four-byte */
      "\xf0\x9f\x98\x80",         /* U+1F600 */
      "\xf4\x8f\xbf\xbf",         /* U+10FFFF, the last code point */
      "\xc2\x85\xc2\x9f",         /* C1 controls are characters: kept as UTF-8 */
      "\xe2\x80\xa8\xe2\x80\xa9", /* U+2028, U+2029 without the HTML option */
      "x\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xd0\x9f\xd1\x80\xd0\xb8y",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) CHECK_STR(esc(ok[i], strlen(ok[i]), 0), ok[i]);
}

static void ill_formed_replaced(void) {
  /* each byte outside a well-formed sequence: one \ufffd */
  CHECK_STR(ESC("\xc0\xaf"), "\\ufffd\\ufffd");                         /* overlong '/' */
  CHECK_STR(ESC("\xc1\xbf"), "\\ufffd\\ufffd");                         /* overlong U+007F */
  CHECK_STR(ESC("\xe0\x80\xaf"), "\\ufffd\\ufffd\\ufffd");              /* overlong '/', three bytes */
  CHECK_STR(ESC("\xe0\x9f\xbf"), "\\ufffd\\ufffd\\ufffd");              /* overlong U+07FF */
  CHECK_STR(ESC("\xf0\x80\x80\xaf"), "\\ufffd\\ufffd\\ufffd\\ufffd");   /* overlong '/', four bytes */
  CHECK_STR(ESC("\xf0\x8f\xbf\xbf"), "\\ufffd\\ufffd\\ufffd\\ufffd");   /* overlong U+FFFF */
  CHECK_STR(ESC("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");              /* U+D800, a surrogate in UTF-8 */
  CHECK_STR(ESC("\xed\xbf\xbf"), "\\ufffd\\ufffd\\ufffd");              /* U+DFFF */
  CHECK_STR(ESC("\xed\xa0\xbd\xed\xb8\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"); /* a CESU-8 pair */
  CHECK_STR(ESC("\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");   /* U+110000 */
  CHECK_STR(ESC("\xf5\x80\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");   /* lead byte past F4 */
  CHECK_STR(ESC("\x80"), "\\ufffd");                                   /* stray continuation */
  CHECK_STR(ESC("a\xbf\xbf" "b"), "a\\ufffd\\ufffdb");
  CHECK_STR(ESC("\xfe\xff"), "\\ufffd\\ufffd");
  /* cut by a byte that does not continue it: that byte is judged on its own */
  CHECK_STR(ESC("\xe2\x28\xa1"), "\\ufffd(\\ufffd");
  CHECK_STR(ESC("\xc3\xc3\xa9"), "\\ufffd\xc3\xa9");
  CHECK_STR(ESC("\xf0\x9f\x98" "A"), "\\ufffd\\ufffd\\ufffdA");
  CHECK_STR(ESC("\xe2\x82\"\xac"), "\\ufffd\\ufffd\\\"\\ufffd");
  /* cut by the end of the input */
  CHECK_STR(ESC("a\xc3"), "a\\ufffd");
  CHECK_STR(ESC("a\xe2\x82"), "a\\ufffd\\ufffd");
  CHECK_STR(ESC("a\xf0\x9f\x98"), "a\\ufffd\\ufffd\\ufffd");
  CHECK_STR(ESC("a\xf0"), "a\\ufffd");
  /* a length shorter than the string cuts a sequence just the same */
  CHECK_STR(esc("\xe2\x82\xac", 2, 0), "\\ufffd\\ufffd");
  /* each of the 128 bytes from 0x80, alone */
  for (unsigned c = 0x80; c <= 0xFF; c++) {
    char b = (char)c;
    CHECK_STR(esc(&b, 1, 0), "\\ufffd");
  }
}

static void controls_quotes_backslash(void) {
  for (unsigned c = 0; c < 0x80; c++) {
    char b = (char)c, want[8];
    switch (c) {
      case '\b': strcpy(want, "\\b"); break;
      case '\t': strcpy(want, "\\t"); break;
      case '\n': strcpy(want, "\\n"); break;
      case '\f': strcpy(want, "\\f"); break;
      case '\r': strcpy(want, "\\r"); break;
      case '"': strcpy(want, "\\\""); break;
      case '\\': strcpy(want, "\\\\"); break;
      default:
        if (c < 0x20 || c == 0x7F) snprintf(want, sizeof want, "\\u%04x", c);
        else snprintf(want, sizeof want, "%c", (char)c);
    }
    CHECK_STR(esc(&b, 1, 0), want);
  }
  CHECK_STR(esc("a\0b", 3, 0), "a\\u0000b"); /* a NUL inside the length */
  CHECK_STR(ESC("say \"hi\"\\n\r\n"), "say \\\"hi\\\"\\\\n\\r\\n");
  CHECK_STR(ESC("\x1b[31m\x7f"), "\\u001b[31m\\u007f");
}

static void html_option(void) {
  CHECK_STR(ESC_HTML("<!--<script>x</script>&amp;"), "\\u003c!--\\u003cscript\\u003ex\\u003c/script\\u003e\\u0026amp;");
  CHECK_STR(ESC_HTML("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c"), "a\\u2028b\\u2029c");
  /* the rest is as without the option */
  CHECK_STR(ESC_HTML("\xe2\x80\xa6\xe2\x80\x8b\xc3\xa9\"\\\n\x01\xff"), "\xe2\x80\xa6\xe2\x80\x8b\xc3\xa9\\\"\\\\\\n\\u0001\\ufffd");
  CHECK_STR(ESC_HTML("\xe2\x80"), "\\ufffd\\ufffd"); /* a cut separator is two bad bytes */
  /* without the option: '<', '>', '&' and the separators as they are */
  CHECK_STR(ESC("</script>&\xe2\x80\xa8"), "</script>&\xe2\x80\xa8");
  /* the table writers test inline agrees with the escaper on every byte */
  for (unsigned c = 0; c < 0x80; c++) {
    char b = (char)c;
    CHECK_U64(strcmp(esc(&b, 1, 0), (char[]){b, 0}) == 0, ns_json_plain_byte[c] > 0);
    CHECK_U64(strcmp(esc(&b, 1, NS_JSON_ESC_HTML), (char[]){b, 0}) == 0, ns_json_plain_byte[c] > 1);
  }
  for (unsigned c = 0x80; c <= 0xFF; c++) CHECK_U64(ns_json_plain_byte[c], 0);
}

/* Width of the escape of the unit at in (n > 0 bytes left) under flags. */
static size_t unit_width(const char* in, size_t n, unsigned flags, size_t* adv) {
  char tmp[NS_JSON_ESC_UNIT_MAX];
  size_t w = 0;
  for (size_t cap = 1; cap <= sizeof tmp; cap++) {
    w = ns_json_escape(tmp, cap, in, n, flags, adv);
    if (*adv) return w;
  }
  return 0;
}

/* Every output size from 0 to the whole: what is written is the escape of
 * the input consumed, a prefix of the whole, never a cut unit, and as much
 * as fits (the next unit would not); going on from in + used in a second
 * buffer of any size gives the rest. */
static void truncation(const char* in, size_t n, unsigned flags) {
  static char whole[4096], part[4096];
  size_t used = 0, total = ns_json_escape(whole, sizeof whole, in, n, flags, &used);
  CHECK_U64(used, n);
  for (size_t cap = 0; cap <= total; cap++) {
    size_t u = ~(size_t)0, w = ns_json_escape(part, cap, in, n, flags, &u);
    CHECK_TRUE(w <= cap && u <= n);
    CHECK_TRUE(memcmp(part, whole, w) == 0);
    size_t u2 = 0, w2 = ns_json_escape(out, sizeof out, in, u, flags, &u2);
    CHECK_U64(w2, w); /* the bytes written are exactly the escape of in[0, u): no unit cut */
    CHECK_U64(u2, u);
    if (u < n) {
      size_t adv = 0, next = unit_width(in + u, n - u, flags, &adv);
      CHECK_TRUE(adv > 0 && w + next > cap); /* the next unit did not fit */
    } else {
      CHECK_U64(w, total);
    }
    /* the rest, in pieces of cap + 6 bytes (room for at least one unit each) */
    size_t at = u, got = w;
    memcpy(out, part, w);
    while (at < n) {
      size_t step = 0;
      got += ns_json_escape(out + got, cap + NS_JSON_ESC_UNIT_MAX, in + at, n - at, flags, &step);
      CHECK_TRUE(step > 0);
      if (!step) break;
      at += step;
    }
    CHECK_U64(got, total);
    CHECK_TRUE(memcmp(out, whole, total) == 0);
  }
}

static void truncation_cases(void) {
  size_t used = 99;
  /* hand-picked: a sequence or an escape that does not fit is not begun */
  CHECK_U64(ns_json_escape(out, 1, "\xc3\xa9", 2, 0, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 3, "\xf0\x9f\x98\x80", 4, 0, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 5, "a\x01", 2, 0, &used), 1); /* "a", then \u0001 needs 6 */
  CHECK_U64(used, 1);
  CHECK_U64(ns_json_escape(out, 1, "\"", 1, 0, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 5, "\xff", 1, 0, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 5, "\xe2\x80\xa8", 3, NS_JSON_ESC_HTML, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 6, "\xe2\x80\xa8", 3, NS_JSON_ESC_HTML, &used), 6);
  CHECK_U64(used, 3);
  CHECK_U64(ns_json_escape(out, 0, "abc", 3, 0, &used), 0);
  CHECK_U64(used, 0);
  CHECK_U64(ns_json_escape(out, 2, "abc", 3, 0, &used), 2);
  CHECK_U64(used, 2);
  CHECK_U64(ns_json_escape(out, 0, "", 0, 0, NULL), 0); /* used may be NULL */
  /* every size, on mixed inputs */
  static const char mixed[] =
      "comm \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \"q\" \\ \x01\x1f\x7f <!--<script>& \xe2\x80\xa8\xe2\x80\xa9"
      " \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff end \xf0\x9f\x98";
  truncation(mixed, sizeof mixed - 1, 0);
  truncation(mixed, sizeof mixed - 1, NS_JSON_ESC_HTML);
  truncation("\xe2\x82", 2, 0); /* cut at the end of the input and at the end of the buffer */
}

/* An independent decoder: the code point of the sequence its lead byte
 * announces, then the rules as Unicode states them (shortest form, no
 * surrogate, at most U+10FFFF). */
static size_t reference_utf8_len(const unsigned char* s, size_t n) {
  unsigned c = s[0];
  size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len <= 1) return len;
  if (n < len) return 0;
  unsigned long cp = c & (0x7Fu >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3Fu);
  }
  static const unsigned long min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_of_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return len;
}

static void utf8_rule(void) {
  unsigned char s[4];
  unsigned long bad = 0;
  for (unsigned a = 0; a < 256; a++) {
    s[0] = (unsigned char)a;
    if (ns_utf8_len(s, 1) != reference_utf8_len(s, 1)) bad++;
    for (unsigned b = 0; b < 256; b++) {
      s[1] = (unsigned char)b;
      if (ns_utf8_len(s, 2) != reference_utf8_len(s, 2)) bad++;
      for (unsigned c = 0; c < 256; c++) {
        s[2] = (unsigned char)c;
        if (ns_utf8_len(s, 3) != reference_utf8_len(s, 3)) bad++;
      }
    }
  }
  /* four bytes: every lead from F0, every second byte, the edges of the continuation range after */
  static const unsigned char edges[] = {0x00, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  for (unsigned a = 0xF0; a < 256; a++)
    for (unsigned b = 0; b < 256; b++)
      for (size_t c = 0; c < sizeof edges; c++)
        for (size_t d = 0; d < sizeof edges; d++) {
          s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = edges[c], s[3] = edges[d];
          if (ns_utf8_len(s, 4) != reference_utf8_len(s, 4)) bad++;
        }
  CHECK_U64(bad, 0);
}

/* An independent reading of a JSON string body: escapes decoded, UTF-8
 * written; -1 on anything a JSON parser refuses (a raw control character,
 * '"', a stray backslash, a bad escape, a lone surrogate). */
static long json_body_decode(const char* s, size_t n, unsigned char* text) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == '"') return -1;
    if (c != '\\') {
      text[o++] = c;
      i++;
      continue;
    }
    if (i + 1 >= n) return -1;
    char e = s[i + 1];
    const char* simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      static const char to[] = "\"\\/\b\f\n\r\t";
      text[o++] = (unsigned char)to[simple - "\"\\/bfnrt"];
      i += 2;
      continue;
    }
    if (e != 'u' || i + 6 > n) return -1;
    unsigned long cp = 0;
    for (size_t k = i + 2; k < i + 6; k++) {
      int h = s[k] >= '0' && s[k] <= '9' ? s[k] - '0' : s[k] >= 'a' && s[k] <= 'f' ? s[k] - 'a' + 10 : -1;
      if (h < 0) return -1; /* the escaper writes lower-case hex */
      cp = cp << 4 | (unsigned long)h;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) return -1;
    i += 6;
    if (cp < 0x80)
      text[o++] = (unsigned char)cp;
    else if (cp < 0x800)
      text[o++] = (unsigned char)(0xC0 | cp >> 6), text[o++] = (unsigned char)(0x80 | (cp & 0x3F));
    else {
      text[o++] = (unsigned char)(0xE0 | cp >> 12);
      text[o++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
      text[o++] = (unsigned char)(0x80 | (cp & 0x3F));
    }
  }
  return (long)o;
}

/* Bytes biased towards what breaks UTF-8 handling: leads, continuations, controls, quotes. */
static unsigned char random_byte(unsigned long long* rng) {
  static const unsigned char pick[] = {0x00, 0x1F, '"',  '\\', '<',  '>',  '&',  0x7F, 0x80, 0xBF, 0xC0,
                                       0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  unsigned long long r = test_rng(rng);
  if (r % 4 == 0) return pick[(r >> 8) % sizeof pick];
  if (r % 4 == 1) return (unsigned char)(0x80 | ((r >> 8) & 0x3F)); /* a continuation byte */
  return (unsigned char)(r >> 16);
}

static void random_inputs(void) {
  unsigned long long rng = 42;
  unsigned long bad_utf8 = 0, bad_json = 0, bad_text = 0, bad_pieces = 0, bad_html = 0;
  for (int iter = 0; iter < 20000; iter++) {
    unsigned char in[96];
    size_t n = (size_t)(test_rng(&rng) % sizeof in);
    for (size_t i = 0; i < n; i++) in[i] = random_byte(&rng);
    unsigned flags = iter % 2 ? NS_JSON_ESC_HTML : 0;
    static char whole[96 * NS_JSON_ESC_UNIT_MAX + 1];
    size_t used = 0;
    size_t w = ns_json_escape(whole, sizeof whole, (const char*)in, n, flags, &used);
    if (used != n) bad_pieces++;
    /* valid UTF-8 out */
    for (size_t i = 0; i < w;) {
      size_t len = reference_utf8_len((const unsigned char*)whole + i, w - i);
      if (!len) {
        bad_utf8++;
        break;
      }
      i += len;
    }
    /* a JSON string body that reads back as the input, each ill-formed byte as U+FFFD */
    unsigned char back[96 * 4], want[96 * 3];
    long got = json_body_decode(whole, w, back);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
      size_t len = reference_utf8_len(in + i, n - i);
      if (len)
        memcpy(want + k, in + i, len), k += len, i += len;
      else
        want[k++] = 0xEF, want[k++] = 0xBF, want[k++] = 0xBD, i++;
    }
    if (got < 0)
      bad_json++;
    else if ((size_t)got != k || memcmp(back, want, k))
      bad_text++;
    if (flags && (memchr(whole, '<', w) || memchr(whole, '>', w) || memchr(whole, '&', w))) bad_html++;
    /* in pieces, through an output of a few bytes: the same text */
    static char pieces[96 * NS_JSON_ESC_UNIT_MAX + 1];
    size_t cap = NS_JSON_ESC_UNIT_MAX + (size_t)(test_rng(&rng) % 8), at = 0, done = 0;
    while (done < n) {
      size_t step = 0;
      at += ns_json_escape(pieces + at, cap, (const char*)in + done, n - done, flags, &step);
      if (!step) break;
      done += step;
    }
    if (done != n || at != w || memcmp(pieces, whole, w)) bad_pieces++;
  }
  CHECK_U64(bad_utf8, 0);
  CHECK_U64(bad_json, 0);
  CHECK_U64(bad_text, 0);
  CHECK_U64(bad_pieces, 0);
  CHECK_U64(bad_html, 0);
}

int main(void) {
  well_formed_kept();
  ill_formed_replaced();
  controls_quotes_backslash();
  html_option();
  truncation_cases();
  utf8_rule();
  random_inputs();
  CHECK_DONE();
}
