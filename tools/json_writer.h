/* ncclscope CLI: a small streaming JSON writer.
 *
 * Writes straight to a FILE*, inserting commas itself. Strings are escaped
 * for JSON and made valid UTF-8: control characters become \uXXXX (or \n,
 * \t ...), and every byte that is not part of a well-formed UTF-8 sequence
 * becomes U+FFFD, because strings from NCCL (communicator names, ...) may be
 * anything. Times are written exactly from integer nanoseconds. */
#ifndef NCCLSCOPE_TOOLS_JSON_WRITER_H
#define NCCLSCOPE_TOOLS_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NSJ_MAX_DEPTH 32

typedef struct {
  FILE* out;
  int depth;
  int after_key;
  uint8_t need_comma[NSJ_MAX_DEPTH + 1];
} ns_json;

void nsj_init(ns_json* j, FILE* out);
void nsj_obj_begin(ns_json* j);
void nsj_obj_end(ns_json* j);
void nsj_arr_begin(ns_json* j);
void nsj_arr_end(ns_json* j);
void nsj_key(ns_json* j, const char* key);
/* Values. nsj_str(NULL) writes null. */
void nsj_str(ns_json* j, const char* s);
void nsj_strn(ns_json* j, const char* s, size_t n);
void nsj_u64(ns_json* j, uint64_t v);
void nsj_i64(ns_json* j, int64_t v);
void nsj_bool(ns_json* j, int v);
void nsj_null(ns_json* j);
/* A finite double with up to 17 significant digits; NaN/inf write null. */
void nsj_f64(ns_json* j, double v);
/* Nanoseconds as microseconds with exactly 3 decimals (exact, no rounding). */
void nsj_us(ns_json* j, int64_t ns);
/* "0x" + lower-case hex. */
void nsj_hex(ns_json* j, uint64_t v);
/* A preformatted value (already valid JSON). */
void nsj_raw(ns_json* j, const char* text);
/* Whitespace between values (does not affect commas). */
void nsj_ws(ns_json* j, const char* ws);
/* Ends one JSON Lines record: writes '\n' and resets the top-level state. */
void nsj_line_end(ns_json* j);

/* key + value shorthands */
void nsj_kstr(ns_json* j, const char* key, const char* s);
void nsj_ku64(ns_json* j, const char* key, uint64_t v);
void nsj_ki64(ns_json* j, const char* key, int64_t v);
void nsj_kbool(ns_json* j, const char* key, int v);
void nsj_kus(ns_json* j, const char* key, int64_t ns);
void nsj_khex(ns_json* j, const char* key, uint64_t v);
void nsj_kf64(ns_json* j, const char* key, double v);

/* Writes s[0..n) escaped (without quotes) to out. Exposed for tests. */
void nsj_escape(FILE* out, const char* s, size_t n);

#endif
