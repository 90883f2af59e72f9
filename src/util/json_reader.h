/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the JSON reader, for the files ncclscope itself writes
 * and reads back (flight records, in `ncclscope report`) and for the
 * arguments of the events merged from a PyTorch trace. The whole text is
 * parsed into a tree whose nodes live in one arena; strings are unescaped
 * (\uXXXX to UTF-8, surrogate pairs joined), integers without a fraction or
 * exponent keep all 64 bits. Malformed input is an error with the byte
 * offset, never a crash; nesting deeper than NSJR_MAX_DEPTH is refused.
 * Single-threaded. */
#ifndef NCCLSCOPE_UTIL_JSON_READER_H
#define NCCLSCOPE_UTIL_JSON_READER_H

#include <stddef.h>
#include <stdint.h>

#define NSJR_MAX_DEPTH 64

typedef enum { NSJR_NULL, NSJR_BOOL, NSJR_NUM, NSJR_STR, NSJR_ARR, NSJR_OBJ } nsjr_kind;

typedef struct nsjr_val nsjr_val;
struct nsjr_val {
  nsjr_kind kind;
  int is_int;        /* NUM: an integer that fits (i or u) */
  int negative;      /* NUM: below zero */
  double num;        /* NUM; BOOL: 0 or 1 */
  uint64_t u;        /* NUM: the integer's magnitude */
  const char* str;   /* STR: NUL-terminated (may contain NULs: len) */
  size_t len;        /* STR: bytes; ARR/OBJ: members */
  const char* key;   /* a member of an object: its key */
  nsjr_val* first;   /* ARR/OBJ: the first member */
  nsjr_val* next;    /* the next member of the enclosing ARR/OBJ */
};

typedef struct nsjr_doc nsjr_doc;

/* Unescapes the body of a JSON string (s[0..len), between its quotes) into
 * out, which has room for len bytes (unescaping never grows): \uXXXX to
 * UTF-8, a surrogate pair joined, a lone surrogate as U+FFFD. The unescaped
 * length, or -1 at a control character, a bad escape or a bad \u, with *bad
 * just after where it was found and *why saying which. */
ptrdiff_t nsjr_unescape(const char* s, size_t len, char* out, const char** bad, const char** why);

/* The same, for text that ought to be a JSON string's body but may not be:
 * where it is not valid, its bytes as they stand. The length written. */
size_t nsjr_unescape_or_copy(const char* s, size_t len, char* out);

/* Parses text[0..len). NULL with a message in err on malformed input or no memory. */
nsjr_doc* nsjr_parse(const char* text, size_t len, char* err, size_t errlen);
/* Reads and parses a whole file (at most max_bytes). */
nsjr_doc* nsjr_parse_file(const char* path, size_t max_bytes, char* err, size_t errlen);
void nsjr_free(nsjr_doc* d);
const nsjr_val* nsjr_root(const nsjr_doc* d);

/* The member of an object with that key (the first one), NULL if none or not an object. */
const nsjr_val* nsjr_get(const nsjr_val* obj, const char* key);
/* Typed reads with a default for a missing or mistyped value. */
const char* nsjr_str(const nsjr_val* v, const char* def);
int64_t nsjr_i64(const nsjr_val* v, int64_t def);
uint64_t nsjr_u64(const nsjr_val* v, uint64_t def);
double nsjr_num(const nsjr_val* v, double def);
int nsjr_bool(const nsjr_val* v, int def);
/* Shorthands: nsjr_get + the typed read. */
static inline const char* nsjr_kstr(const nsjr_val* o, const char* k, const char* def) {
  return nsjr_str(nsjr_get(o, k), def);
}
static inline int64_t nsjr_ki64(const nsjr_val* o, const char* k, int64_t def) { return nsjr_i64(nsjr_get(o, k), def); }
static inline uint64_t nsjr_ku64(const nsjr_val* o, const char* k, uint64_t def) {
  return nsjr_u64(nsjr_get(o, k), def);
}
static inline double nsjr_knum(const nsjr_val* o, const char* k, double def) { return nsjr_num(nsjr_get(o, k), def); }

#endif
