/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: tests of the JSON reader (src/util/json_reader.c), which
 * reads flight records back for `ncclscope report`: values of every kind,
 * 64-bit integers exact, escapes (\uXXXX, surrogate pairs) to UTF-8, and
 * malformed or too deep input refused with a message, never a crash. */
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "util/json_reader.h"

static nsjr_doc* parse(const char* s, char* err, size_t n) { return nsjr_parse(s, strlen(s), err, n); }

int main(void) {
  char err[256];
  const char* text =
      "{\"format\":\"ncclscope-flightrec\",\"pid\":18446744073709551615,\"neg\":-9223372036854775807,"
      "\"f\":1.5e3,\"t\":true,\"n\":null,\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\\/\","
      "\"arr\":[1,2,{\"k\":\"v\"}],\"empty\":{},\"dup\":1,\"dup\":2}";
  nsjr_doc* d = parse(text, err, sizeof err);
  CHECK_TRUE(d != NULL);
  const nsjr_val* r = nsjr_root(d);
  CHECK_TRUE(strcmp(nsjr_kstr(r, "format", ""), "ncclscope-flightrec") == 0);
  CHECK_U64(nsjr_ku64(r, "pid", 0), UINT64_MAX);
  CHECK_TRUE(nsjr_ki64(r, "neg", 0) == -9223372036854775807ll);
  CHECK_TRUE(nsjr_knum(r, "f", 0) == 1500.0);
  CHECK_TRUE(nsjr_bool(nsjr_get(r, "t"), 0) == 1);
  CHECK_TRUE(nsjr_get(r, "n") && nsjr_get(r, "n")->kind == NSJR_NULL);
  CHECK_TRUE(strcmp(nsjr_kstr(r, "s", ""), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80/") == 0);
  const nsjr_val* arr = nsjr_get(r, "arr");
  CHECK_TRUE(arr && arr->kind == NSJR_ARR && arr->len == 3);
  CHECK_TRUE(arr && strcmp(nsjr_kstr(arr->first->next->next, "k", ""), "v") == 0);
  CHECK_U64(nsjr_ki64(r, "dup", 0), 1); /* the first one */
  CHECK_TRUE(nsjr_get(r, "missing") == NULL);
  CHECK_U64(nsjr_ku64(r, "missing", 7), 7);
  CHECK_TRUE(strcmp(nsjr_kstr(r, "pid", "def"), "def") == 0); /* mistyped: the default */
  nsjr_free(d);

  /* malformed: refused, with a message */
  static const char* const bad[] = {"", "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "\"\\x\"", "\"\\ud83d\"x", "tru",
                                    "{\"a\":1} x", "\"abc", "01", "1.", "1e", "[1 2]", "{\"a\":\"\x01\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    nsjr_doc* b = parse(bad[i], err, sizeof err);
    if (b) fprintf(stderr, "accepted malformed input #%zu: %s\n", i, bad[i]);
    CHECK_TRUE(b == NULL && err[0]);
    nsjr_free(b);
  }
  /* nesting: NSJR_MAX_DEPTH is accepted, one more is refused */
  char deep[2 * (NSJR_MAX_DEPTH + 1) + 1];
  for (int depth = NSJR_MAX_DEPTH; depth <= NSJR_MAX_DEPTH + 1; depth++) {
    memset(deep, '[', (size_t)depth);
    memset(deep + depth, ']', (size_t)depth);
    deep[2 * depth] = 0;
    nsjr_doc* b = parse(deep, err, sizeof err);
    CHECK_TRUE((b != NULL) == (depth == NSJR_MAX_DEPTH));
    nsjr_free(b);
  }
  /* a file that is not there */
  CHECK_TRUE(nsjr_parse_file("/nonexistent/flightrec.json", 1 << 20, err, sizeof err) == NULL && err[0]);
  /* a string body that may not be valid JSON: unescaped when it is, its bytes as they stand when not */
  char out[32];
  size_t n = nsjr_unescape_or_copy("a\\tb\\u00e9", 10, out);
  CHECK_TRUE(n == 5 && memcmp(out, "a\tb\xc3\xa9", 5) == 0);
  n = nsjr_unescape_or_copy("a\\qb", 4, out);
  CHECK_TRUE(n == 4 && memcmp(out, "a\\qb", 4) == 0);
  n = nsjr_unescape_or_copy("a\nb", 3, out); /* a raw control character */
  CHECK_TRUE(n == 3 && memcmp(out, "a\nb", 3) == 0);
  CHECK_DONE();
}
