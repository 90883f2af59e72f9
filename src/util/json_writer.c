/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the JSON writer (json_writer.h). Single-threaded.
 *
 * Everything is formatted into j->buf; drain() hands the buffer to the
 * destination. Integers come out as printf's %llu / %lld, hex as %llx,
 * times as "%llu.%03llu", each without printf; doubles go through
 * snprintf and strtod (nsj_fmt_f64: rare, derived metrics only, so the
 * shortest form is not worth an algorithm of our own). */
#include "util/json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_escape.h"

static const char hex_digits[] = "0123456789abcdef";

/* "00" "01" ... "99": two digits per division by 100. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* ---- buffer ---- */

void nsj_drain(ns_json* j) {
  if (j->len && !j->failed) {
    if (j->out) {
      if (fwrite(j->buf, 1, j->len, j->out) != j->len) j->failed = 1;
    } else if (j->to) {
      ns_buf_put(j->to, j->buf, j->len);
      if (j->to->failed) j->failed = 1;
    } else {
      j->failed = 1; /* in memory: the text no longer fits */
    }
  }
  j->len = 0;
}

static inline char* room(ns_json* j, size_t n) { return nsj_room(j, n); }

static inline void put1(ns_json* j, char c) {
  if (j->len == NSJ_BUF) nsj_drain(j);
  j->buf[j->len++] = c;
}

void nsj_put_pieces(ns_json* j, const char* s, size_t n) {
  while (n) {
    if (j->len == NSJ_BUF) nsj_drain(j);
    size_t k = NSJ_BUF - j->len < n ? NSJ_BUF - j->len : n;
    memcpy(j->buf + j->len, s, k);
    j->len += k;
    s += k;
    n -= k;
  }
}

void nsj_init(ns_json* j, FILE* out) {
  j->out = out;
  j->to = NULL;
  j->depth = 0;
  j->after_key = 0;
  j->failed = 0;
  j->len = 0;
  memset(j->need_comma, 0, sizeof j->need_comma);
}

void nsj_init_buf(ns_json* j, ns_buf* b) {
  nsj_init(j, NULL);
  j->to = b;
}

ns_json* nsj_new(FILE* out) {
  ns_json* j = malloc(sizeof *j);
  if (j) nsj_init(j, out);
  return j;
}

ns_json* nsj_new_buf(ns_buf* b) {
  ns_json* j = malloc(sizeof *j);
  if (!j) {
    b->failed = 1;
    return NULL;
  }
  nsj_init_buf(j, b);
  return j;
}

int nsj_free(ns_json* j) {
  int rc = nsj_flush(j);
  free(j);
  return rc;
}

int nsj_flush(ns_json* j) {
  nsj_drain(j);
  return j->failed ? -1 : 0;
}

/* ---- numbers ---- */

static const uint64_t pow10_table[20] = {1ull,
                                         10ull,
                                         100ull,
                                         1000ull,
                                         10000ull,
                                         100000ull,
                                         1000000ull,
                                         10000000ull,
                                         100000000ull,
                                         1000000000ull,
                                         10000000000ull,
                                         100000000000ull,
                                         1000000000000ull,
                                         10000000000000ull,
                                         100000000000000ull,
                                         1000000000000000ull,
                                         10000000000000000ull,
                                         100000000000000000ull,
                                         1000000000000000000ull,
                                         10000000000000000000ull};

/* Decimal digits of v (1..20): bit length * 1233/4096 approximates log10 from below. */
static inline unsigned decimal_digits(uint64_t v) {
  unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
  unsigned d = (bits * 1233u) >> 12;
  return d + ((v | 1) >= pow10_table[d]);
}

size_t nsj_fmt_u64(char* out, uint64_t v) {
  unsigned n = decimal_digits(v);
  char* p = out + n;
  /* Eight digits per 64-bit division, then two per 32-bit one (cheaper). */
  while (v >= 100000000u) {
    uint32_t lo = (uint32_t)(v % 100000000u);
    v /= 100000000u;
    for (int i = 0; i < 4; i++) {
      p -= 2;
      memcpy(p, digit_pairs + 2 * (lo % 100), 2);
      lo /= 100;
    }
  }
  uint32_t w = (uint32_t)v;
  while (w >= 100) {
    p -= 2;
    memcpy(p, digit_pairs + 2 * (w % 100), 2);
    w /= 100;
  }
  if (w >= 10) {
    p -= 2;
    memcpy(p, digit_pairs + 2 * w, 2);
  } else {
    p[-1] = (char)('0' + w);
  }
  return n;
}

/* "00" "01" ... "ff": two hex digits per byte. */
static const char hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

size_t nsj_fmt_hex(char* out, uint64_t v, unsigned width) {
  unsigned n = (64u - (unsigned)__builtin_clzll(v | 1) + 3) / 4; /* digits of v, 1..16 */
  if (n < width) n = width > 16 ? 16 : width;
  char* p = out + n;
  for (unsigned left = n; left >= 2; left -= 2) { /* two digits per byte, from the right */
    p -= 2;
    memcpy(p, hex_pairs + 2 * (v & 0xFF), 2);
    v >>= 8;
  }
  if (p > out) out[0] = hex_digits[v & 0xF];
  return n;
}

size_t nsj_fmt_f64(char* out, double v) {
  char tmp[NSJ_F64_MAX];
  int n = 0;
  for (int prec = 15; prec <= 17; prec++) {
    n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v) break;
  }
  /* %g goes to an exponent once the integer part has more digits than the
   * precision; below 1e17 a whole number is written out in full instead
   * (1699999999000000, not 1.699999999e+15), as %.17g writes it. */
  if (memchr(tmp, 'e', (size_t)(n > 0 ? n : 0)) && fabs(v) >= 1e-4 && fabs(v) < 1e17)
    n = snprintf(tmp, sizeof tmp, "%.17g", v);
  size_t len = n > 0 ? (size_t)n : 0; /* "-1.2345678901234567e-308": 24 at most */
  memcpy(out, tmp, len);
  return len;
}

/* ---- structure ---- */

static inline void before_value(ns_json* j) { nsj_sep(j); }

static void open_scope(ns_json* j, char c) {
  before_value(j);
  put1(j, c);
  if (j->depth < NSJ_MAX_DEPTH) j->depth++;
  j->need_comma[j->depth] = 0;
}

static void close_scope(ns_json* j, char c) {
  put1(j, c);
  if (j->depth > 0) j->depth--;
}

void nsj_obj_begin(ns_json* j) { open_scope(j, '{'); }
void nsj_obj_end(ns_json* j) { close_scope(j, '}'); }
void nsj_arr_begin(ns_json* j) { open_scope(j, '['); }
void nsj_arr_end(ns_json* j) { close_scope(j, ']'); }

/* ---- strings ---- */

/* s[0..n) escaped (util/json_escape.h), without quotes, straight into the
 * buffer; drained whenever the next unit does not fit. */
static void put_escaped(ns_json* j, const char* s, size_t n) {
  for (;;) {
    size_t used;
    j->len += ns_json_escape(j->buf + j->len, NSJ_BUF - j->len, s, n, 0, &used);
    s += used;
    n -= used;
    if (!n) return;
    nsj_drain(j);
  }
}

void nsj_quoted_slow(ns_json* j, const char* s, size_t n, const char* tail, size_t tail_len) {
  put1(j, '"');
  put_escaped(j, s, n);
  nsj_put_pieces(j, tail, tail_len);
}

/* ---- scalar values ---- */

/* nsj_<name>(j, v): the separator, then nsj_put_<name>(j, v). */
#define NSJ_VALUE(name, type)           \
  void nsj_##name(ns_json* j, type v) { \
    before_value(j);                    \
    nsj_put_##name(j, v);               \
  }
NSJ_VALUE(u64, uint64_t)
NSJ_VALUE(i64, int64_t)
NSJ_VALUE(us, int64_t)
#undef NSJ_VALUE

void nsj_u64_str(ns_json* j, uint64_t v) {
  before_value(j);
  put1(j, '"');
  nsj_put_u64(j, v);
  put1(j, '"');
}

void nsj_i64_str(ns_json* j, int64_t v) {
  before_value(j);
  put1(j, '"');
  nsj_put_i64(j, v);
  put1(j, '"');
}

void nsj_bool(ns_json* j, int v) {
  before_value(j);
  char* o = room(j, 5);
  if (v) {
    memcpy(o, "true", 4);
    j->len += 4;
  } else {
    memcpy(o, "false", 5);
    j->len += 5;
  }
}

void nsj_null(ns_json* j) {
  before_value(j);
  memcpy(room(j, 4), "null", 4);
  j->len += 4;
}

void nsj_f64(ns_json* j, double v) {
  if (!isfinite(v)) {
    nsj_null(j);
    return;
  }
  before_value(j);
  j->len += nsj_fmt_f64(room(j, NSJ_F64_MAX), v);
}

void nsj_hexw(ns_json* j, uint64_t v, unsigned width) {
  before_value(j);
  char* o = room(j, 20);
  o[0] = '"';
  o[1] = '0';
  o[2] = 'x';
  size_t n = 3 + nsj_fmt_hex(o + 3, v, width);
  o[n++] = '"';
  j->len += n;
}

void nsj_sec(ns_json* j, int64_t ns) {
  int64_t ms = ns >= 0 ? (ns + 500000) / 1000000 : -((500000 - ns) / 1000000);
  before_value(j);
  nsj_put_us(j, ms); /* thousandths with 3 decimals: here milliseconds as seconds */
}

void nsj_put_u64(ns_json* j, uint64_t v) {
  char* o = room(j, 20);
  j->len += nsj_fmt_u64(o, v);
}

void nsj_put_i64(ns_json* j, int64_t v) {
  char* o = room(j, 21);
  size_t n = 0;
  uint64_t mag = (uint64_t)v;
  if (v < 0) {
    o[n++] = '-';
    mag = (uint64_t)0 - mag;
  }
  j->len += n + nsj_fmt_u64(o + n, mag);
}

void nsj_put_us(ns_json* j, int64_t ns) {
  char* o = room(j, 26);
  size_t n = 0;
  uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (ns < 0) o[n++] = '-';
  n += nsj_fmt_u64(o + n, mag / 1000);
  unsigned frac = (unsigned)(mag % 1000);
  o[n++] = '.';
  o[n++] = (char)('0' + frac / 100);
  memcpy(o + n, digit_pairs + 2 * (frac % 100), 2);
  j->len += n + 2;
}

void nsj_raw(ns_json* j, const char* text) {
  before_value(j);
  nsj_put_pieces(j, text, strlen(text));
}

void nsj_ws(ns_json* j, const char* ws) { nsj_put_pieces(j, ws, strlen(ws)); }

void nsj_value_on_new_line(ns_json* j) {
  nsj_sep(j);
  put1(j, '\n');
  j->after_key = 1; /* the value itself takes no separator: it was written */
}

void nsj_line_end(ns_json* j) {
  put1(j, '\n');
  j->depth = 0;
  j->after_key = 0;
  j->need_comma[0] = 0;
}

