/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the JSON writer, one for every JSON file and payload
 * ncclscope makes (the plugin's summary.json, flight records, windows.jsonl
 * and OTLP http/json; the exports and the report of the ncclscope command).
 *
 * Formats into its own buffer (NSJ_BUF bytes, inside the struct) and hands
 * it to its destination, a FILE* or a byte buffer, in large writes: when it
 * fills up, on nsj_flush, and nowhere else, so the caller must nsj_flush
 * before looking at the destination. Numbers are formatted without printf
 * (exactly what printf's %llu, %lld, %llx would give); a double is written
 * in its shortest form that reads back the same (nsj_fmt_f64, the one double
 * format). Commas are inserted by the writer. Strings are escaped by
 * util/json_escape.h (valid UTF-8 out, U+FFFD for each byte outside a
 * well-formed sequence, because strings from NCCL, communicator names and
 * the like, may be anything). Times are written exactly from integer
 * nanoseconds. Single-threaded (whoever owns the destination). */
#ifndef NCCLSCOPE_UTIL_JSON_WRITER_H
#define NCCLSCOPE_UTIL_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/bytebuf.h"
#include "util/json_escape.h"

#define NSJ_MAX_DEPTH 32
#define NSJ_BUF (64u << 10) /* fits in L2 with room to spare; 1.7 GB of output = 26k writes */

typedef struct {
  FILE* out;
  ns_buf* to; /* the destination when out is NULL (nsj_init_buf) */
  int depth;
  int after_key;
  int failed; /* a write to `out` came up short; later output is discarded */
  size_t len; /* bytes in buf */
  uint8_t need_comma[NSJ_MAX_DEPTH + 1];
  char buf[NSJ_BUF];
} ns_json;

/* out NULL: a writer in memory, for text of at most NSJ_BUF bytes read back
 * from buf[0, len); more marks it failed (the text is then incomplete). */
void nsj_init(ns_json* j, FILE* out);
/* Appends to b, of any length; fails when b does (its limit, bytebuf.h). */
void nsj_init_buf(ns_json* j, ns_buf* b);
/* A writer on the heap (its buffer kept off the caller's stack: threads of
 * the plugin), to a FILE or appending to b: NULL when there is no memory
 * (b then marked failed). nsj_free flushes and frees it: 0, or -1 when the
 * text is incomplete. */
ns_json* nsj_new(FILE* out);
ns_json* nsj_new_buf(ns_buf* b);
int nsj_free(ns_json* j);
/* Writes the buffered bytes to the destination (does not fflush a FILE).
 * 0, or -1 when this or an earlier write failed. */
int nsj_flush(ns_json* j);
void nsj_obj_begin(ns_json* j);
void nsj_obj_end(ns_json* j);
void nsj_arr_begin(ns_json* j);
void nsj_arr_end(ns_json* j);
static inline void nsj_key(ns_json* j, const char* key);
static inline void nsj_keyn(ns_json* j, const char* key, size_t n);
/* Values. nsj_str(NULL) writes null. */
static inline void nsj_str(ns_json* j, const char* s);
static inline void nsj_strn(ns_json* j, const char* s, size_t n);
void nsj_u64(ns_json* j, uint64_t v);
void nsj_i64(ns_json* j, int64_t v);
void nsj_bool(ns_json* j, int v);
void nsj_null(ns_json* j);
/* A finite double in its shortest form (nsj_fmt_f64); NaN/inf write null. */
void nsj_f64(ns_json* j, double v);
/* An integer as a JSON string ("12"): a 64-bit value past a double's 2^53
 * that a reader must keep exact (OTLP's JSON mapping, userTags). */
void nsj_u64_str(ns_json* j, uint64_t v);
void nsj_i64_str(ns_json* j, int64_t v);
/* Nanoseconds as microseconds with exactly 3 decimals (exact, no rounding). */
void nsj_us(ns_json* j, int64_t ns);
/* Nanoseconds as seconds with exactly 3 decimals, rounded to the millisecond. */
void nsj_sec(ns_json* j, int64_t ns);
/* "0x" + lower-case hex, at least `width` digits (zero-padded; nsj_hex: 1). */
void nsj_hexw(ns_json* j, uint64_t v, unsigned width);
static inline void nsj_hex(ns_json* j, uint64_t v) { nsj_hexw(j, v, 1); }
/* A preformatted value (already valid JSON). */
void nsj_raw(ns_json* j, const char* text);
/* Whitespace between values (does not affect commas). */
void nsj_ws(ns_json* j, const char* ws);
/* The separator the next value needs, then a newline: that value starts a
 * line of its own (",\n{...}"). */
void nsj_value_on_new_line(ns_json* j);
/* Ends one JSON Lines record: writes '\n' and resets the top-level state. */
void nsj_line_end(ns_json* j);

/* Fixed record layouts, written without the separator logic (the fastest
 * path, for the JSONL lines that make up most of an export): the caller
 * writes the punctuation itself, then nsj_resume before going on with the
 * functions above inside the object(s) it opened. */
static inline void nsj_put(ns_json* j, const char* s, size_t n);
#define NSJ_PUT_LIT(j, lit) nsj_put((j), (lit), sizeof(lit) - 1)
void nsj_put_u64(ns_json* j, uint64_t v);
void nsj_put_i64(ns_json* j, int64_t v);
void nsj_put_us(ns_json* j, int64_t ns);
/* A string value: quoted and escaped, then the literal tail (no separator). */
static inline void nsj_put_str(ns_json* j, const char* s, size_t n, const char* tail, size_t tail_len);
/* Back to the writer: `depth` objects are open and each has a member. */
static inline void nsj_resume(ns_json* j, int depth);

/* key + value shorthands */
static inline void nsj_kstr(ns_json* j, const char* key, const char* s);
static inline void nsj_ku64(ns_json* j, const char* key, uint64_t v);
static inline void nsj_ku64_str(ns_json* j, const char* key, uint64_t v);
static inline void nsj_ki64_str(ns_json* j, const char* key, int64_t v);
static inline void nsj_ki64(ns_json* j, const char* key, int64_t v);
static inline void nsj_kbool(ns_json* j, const char* key, int v);
static inline void nsj_kus(ns_json* j, const char* key, int64_t ns);
static inline void nsj_khex(ns_json* j, const char* key, uint64_t v);
static inline void nsj_ksec(ns_json* j, const char* key, int64_t ns);
static inline void nsj_kf64(ns_json* j, const char* key, double v);

/* Number formatting, for other writers (the CLI's text, Prometheus text).
 * Each writes into out (which must have room: 20 bytes for a decimal u64,
 * 16 for hex, NSJ_F64_MAX for a double) and returns the length; no
 * terminating NUL. */
size_t nsj_fmt_u64(char* out, uint64_t v);
/* Lower-case hex, at least `width` digits (zero-padded), at most 16. */
size_t nsj_fmt_hex(char* out, uint64_t v, unsigned width);
/* The one double format: the fewest significant digits (15 to 17, %g
 * style) that read back as exactly v. v must be finite. */
#define NSJ_F64_MAX 32
size_t nsj_fmt_f64(char* out, double v);

/* ---- inline parts ----
 * Keys and most string values are short and need no escaping (literals,
 * type and state names, event addresses): they are copied in one pass
 * straight into the buffer, and strlen of a literal folds at compile time.
 * Anything else (and anything long) goes through the out-of-line escaper. */

#define NSJ_INLINE_STR 48 /* longest string tried on the inline path */

void nsj_drain(ns_json* j);               /* buffer -> FILE */
/* s[0, n) of any length, in pieces of what the buffer has left. */
void nsj_put_pieces(ns_json* j, const char* s, size_t n);
/* Out of line: '"', s escaped, then the tail (after the separator is written). */
void nsj_quoted_slow(ns_json* j, const char* s, size_t n, const char* tail, size_t tail_len);

/* Separator before a value or key at the current depth. */
static inline void nsj_sep(ns_json* j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->need_comma[j->depth]) {
    if (j->len == NSJ_BUF) nsj_drain(j);
    j->buf[j->len++] = ',';
  }
  j->need_comma[j->depth] = 1;
}

/* Room for n more bytes at buf + len. Only for n <= NSJ_BUF, known at the
 * call site (formatted numbers, short literals): longer text goes through
 * nsj_put, which copies it in pieces. */
static inline char* nsj_room(ns_json* j, size_t n) {
  if (j->len + n > NSJ_BUF) nsj_drain(j);
  return j->buf + j->len;
}

/* '"' s tail, s copied as is when it is short and plain. */
static inline void nsj_quoted(ns_json* j, const char* s, size_t n, const char* tail, size_t tail_len) {
  if (n <= NSJ_INLINE_STR) {
    char* o = nsj_room(j, n + 1 + tail_len);
    size_t i = 0;
    for (; i < n; i++) {
      unsigned char c = (unsigned char)s[i];
      if (ns_json_plain_byte[c] == 0) break; /* escaped, or a UTF-8 sequence to check */
      o[1 + i] = (char)c;
    }
    if (i == n) {
      o[0] = '"';
      memcpy(o + 1 + n, tail, tail_len);
      j->len += n + 1 + tail_len;
      return;
    }
  }
  nsj_quoted_slow(j, s, n, tail, tail_len);
}

/* Any length: text copied verbatim from an input file (a Kineto event or
 * member) can be far longer than the buffer. */
static inline void nsj_put(ns_json* j, const char* s, size_t n) {
  if (n > NSJ_BUF - j->len) {
    nsj_put_pieces(j, s, n);
    return;
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
}
static inline void nsj_put_str(ns_json* j, const char* s, size_t n, const char* tail, size_t tail_len) {
  nsj_quoted(j, s, n, tail, tail_len);
}
static inline void nsj_resume(ns_json* j, int depth) {
  j->depth = depth;
  j->after_key = 0;
  for (int d = 1; d <= depth; d++) j->need_comma[d] = 1;
}

static inline void nsj_keyn(ns_json* j, const char* key, size_t n) {
  nsj_sep(j);
  nsj_quoted(j, key, n, "\":", 2);
  j->after_key = 1;
}
static inline void nsj_strn(ns_json* j, const char* s, size_t n) {
  nsj_sep(j);
  nsj_quoted(j, s, n, "\"", 1);
}

static inline void nsj_key(ns_json* j, const char* key) { nsj_keyn(j, key, strlen(key)); }
static inline void nsj_str(ns_json* j, const char* s) {
  if (s) nsj_strn(j, s, strlen(s));
  else nsj_null(j);
}

/* nsj_k<name>(j, key, v): the key, then nsj_<name>(j, v). */
#define NSJ_KEYED(name, type)                                           \
  static inline void nsj_k##name(ns_json* j, const char* key, type v) { \
    nsj_key(j, key);                                                    \
    nsj_##name(j, v);                                                   \
  }
NSJ_KEYED(str, const char*)
NSJ_KEYED(u64, uint64_t)
NSJ_KEYED(u64_str, uint64_t)
NSJ_KEYED(i64_str, int64_t)
NSJ_KEYED(i64, int64_t)
NSJ_KEYED(bool, int)
NSJ_KEYED(us, int64_t)
NSJ_KEYED(hex, uint64_t)
NSJ_KEYED(sec, int64_t)
NSJ_KEYED(f64, double)
#undef NSJ_KEYED

#endif
