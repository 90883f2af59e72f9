/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: tests of the JSON writer: escaping of every kind of byte NCCL
 * may hand us, comma placement, exact microsecond formatting, integers
 * formatted exactly as printf does, the one double format (shortest text
 * that reads back the same), output longer than the buffer, to a FILE and
 * to a byte buffer (and that buffer's limit). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"

static int failures;

/* The escaping of one byte as the writer must do it (a string of one byte:
 * ASCII controls escaped, bytes >= 0x80 are never well-formed alone). */
static void reference_escape(unsigned c, char* out, size_t n) {
  switch (c) {
    case '"': snprintf(out, n, "\"\\\"\""); return;
    case '\\': snprintf(out, n, "\"\\\\\""); return;
    case '\n': snprintf(out, n, "\"\\n\""); return;
    case '\r': snprintf(out, n, "\"\\r\""); return;
    case '\t': snprintf(out, n, "\"\\t\""); return;
    case '\b': snprintf(out, n, "\"\\b\""); return;
    case '\f': snprintf(out, n, "\"\\f\""); return;
    default: break;
  }
  if (c < 0x20 || c == 0x7F) snprintf(out, n, "\"\\u%04x\"", c);
  else if (c >= 0x80) snprintf(out, n, "\"\\ufffd\"");
  else snprintf(out, n, "\"%c\"", (char)c);
}

static void expect_text(const char* what, const char* got, const char* want) {
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "%s:\n  got  %s\n  want %s\n", what, got, want);
    failures++;
  }
}

/* Runs fn with a writer on a memory stream and compares the output. */
#define CHECK_OUTPUT(what, want, body)          \
  do {                                          \
    char* buf_ = NULL;                          \
    size_t len_ = 0;                            \
    FILE* mf_ = open_memstream(&buf_, &len_);   \
    ns_json jw;                                 \
    nsj_init(&jw, mf_);                         \
    body;                                       \
    nsj_flush(&jw);                             \
    fclose(mf_);                                \
    expect_text(what, buf_, want);              \
    free(buf_);                                 \
  } while (0)

int main(void) {
  CHECK_OUTPUT("quotes, backslash, controls", "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\\u007f\"",
               nsj_str(&jw, "a\"b\\c\n\t\x01\x1f\x7f"));
  CHECK_OUTPUT("hex", "\"0x7f00aa00\"", nsj_hex(&jw, 0x7f00aa00u));
  CHECK_OUTPUT("valid UTF-8 kept", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", nsj_str(&jw, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  CHECK_OUTPUT("invalid bytes replaced", "\"a\\ufffdb\\ufffd(\\ufffd\\ufffd\"", nsj_str(&jw, "a\xff" "b\xc3(\xe2\x82"));
  CHECK_OUTPUT("overlong and surrogate replaced", "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\"",
               nsj_str(&jw, "\xc0\xaf|\xed\xa0\x80"));
  CHECK_OUTPUT("NULL string is null", "null", nsj_str(&jw, NULL));
  CHECK_OUTPUT("commas", "{\"a\":1,\"b\":[1,-2,true,null],\"c\":{}}", {
    nsj_obj_begin(&jw);
    nsj_ku64(&jw, "a", 1);
    nsj_key(&jw, "b");
    nsj_arr_begin(&jw);
    nsj_u64(&jw, 1);
    nsj_i64(&jw, -2);
    nsj_bool(&jw, 1);
    nsj_null(&jw);
    nsj_arr_end(&jw);
    nsj_key(&jw, "c");
    nsj_obj_begin(&jw);
    nsj_obj_end(&jw);
    nsj_obj_end(&jw);
  });
  CHECK_OUTPUT("lines", "{\"a\":1}\n{\"a\":2}\n", {
    for (int i = 1; i <= 2; i++) {
      nsj_obj_begin(&jw);
      nsj_ku64(&jw, "a", (uint64_t)i);
      nsj_obj_end(&jw);
      nsj_line_end(&jw);
    }
  });
  CHECK_OUTPUT("microseconds", "[1000.001,0.000,0.999,-1.500]", {
    nsj_arr_begin(&jw);
    nsj_us(&jw, 1000001);
    nsj_us(&jw, 0);
    nsj_us(&jw, 999);
    nsj_us(&jw, -1500);
    nsj_arr_end(&jw);
    (void)0;
  });
  /* Every single byte against the reference. */
  for (unsigned c = 1; c < 256; c++) {
    char one[2] = {(char)c, 0}, want[16], what[32];
    reference_escape(c, want, sizeof want);
    snprintf(what, sizeof what, "byte 0x%02x", c);
    CHECK_OUTPUT(what, want, nsj_str(&jw, one));
  }
  /* Integers exactly as printf formats them, at the edges and in between. */
  static const uint64_t uvals[] = {0, 1, 9, 10, 99, 100, 999, 1000, 65535, 4294967295ull, 4294967296ull,
                                   999999999999ull, 1000000000000ull, 9223372036854775807ull,
                                   9223372036854775808ull, 18446744073709551615ull, 0x7f00aa00ull};
  for (size_t i = 0; i < sizeof uvals / sizeof uvals[0]; i++) {
    uint64_t v = uvals[i];
    char want[128];
    snprintf(want, sizeof want, "[%" PRIu64 ",%" PRId64 ",%" PRId64 ",\"0x%" PRIx64 "\",%s%" PRIu64 ".%03" PRIu64 "]", v,
             (int64_t)v, -(int64_t)(v & 0x7fffffffffffffffull), v, (int64_t)v < 0 ? "-" : "",
             ((int64_t)v < 0 ? (uint64_t)0 - v : v) / 1000, ((int64_t)v < 0 ? (uint64_t)0 - v : v) % 1000);
    CHECK_OUTPUT("integers", want, {
      nsj_arr_begin(&jw);
      nsj_u64(&jw, v);
      nsj_i64(&jw, (int64_t)v);
      nsj_i64(&jw, -(int64_t)(v & 0x7fffffffffffffffull));
      nsj_hex(&jw, v);
      nsj_us(&jw, (int64_t)v);
      nsj_arr_end(&jw);
    });
  }
  CHECK_OUTPUT("doubles, shortest",
               "[0.1,0.30000000000000004,-2.5,1e+300,1699999999000000,12345678901234568,1e+17,1.5e-07,"
               "0.0001,123456.789,0,-0,null,null]",
               {
                 nsj_arr_begin(&jw);
                 nsj_f64(&jw, 0.1);
                 nsj_f64(&jw, 0.1 + 0.2);
                 nsj_f64(&jw, -2.5);
                 nsj_f64(&jw, 1e300);
                 nsj_f64(&jw, 1699999999000000.0); /* whole and below 1e17: written out, no exponent */
                 nsj_f64(&jw, 12345678901234567.0);
                 nsj_f64(&jw, 1e17);
                 nsj_f64(&jw, 1.5e-7);
                 nsj_f64(&jw, 1e-4);
                 nsj_f64(&jw, 123456.789);
                 nsj_f64(&jw, 0.0);
                 nsj_f64(&jw, -0.0);
                 nsj_f64(&jw, INFINITY);
                 nsj_f64(&jw, NAN);
                 nsj_arr_end(&jw);
               });
  /* Every double reads back exactly, never longer than %.17g writes it. */
  {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 5; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      double v;
      uint64_t bits = i % 2 ? x : (x & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 + (int)(x % 120) - 60) << 52);
      memcpy(&v, &bits, sizeof v);
      if (!isfinite(v)) continue;
      char got[NSJ_F64_MAX + 1], ref[40];
      size_t n = nsj_fmt_f64(got, v);
      got[n] = '\0';
      int nref = snprintf(ref, sizeof ref, "%.17g", v);
      if (strtod(got, NULL) != v || n > (size_t)nref || n > NSJ_F64_MAX) {
        fprintf(stderr, "double %a: %s (%%.17g: %s)\n", v, got, ref);
        bad++;
      }
    }
    failures += bad;
  }
  CHECK_OUTPUT("seconds to the millisecond", "[0.000,1.500,0.002,-0.002,60.000,0.001]", {
    nsj_arr_begin(&jw);
    nsj_sec(&jw, 0);
    nsj_sec(&jw, 1500000000);
    nsj_sec(&jw, 1500000); /* halves round away from zero */
    nsj_sec(&jw, -1500000);
    nsj_sec(&jw, 60000000000);
    nsj_sec(&jw, 1499999);
    nsj_arr_end(&jw);
  });
  CHECK_OUTPUT("integers as strings", "[\"0\",\"18446744073709551615\",\"-9223372036854775808\",\"-5\"]", {
    nsj_arr_begin(&jw);
    nsj_u64_str(&jw, 0);
    nsj_u64_str(&jw, UINT64_MAX);
    nsj_i64_str(&jw, INT64_MIN);
    nsj_i64_str(&jw, -5);
    nsj_arr_end(&jw);
  });
  CHECK_OUTPUT("hex with a width", "[\"0x00000000000000ab\",\"0xffffffffffffffff\",\"0x0\"]", {
    nsj_arr_begin(&jw);
    nsj_hexw(&jw, 0xab, 16);
    nsj_hexw(&jw, ~0ull, 16);
    nsj_hex(&jw, 0);
    nsj_arr_end(&jw);
  });
  CHECK_OUTPUT("a value on a line of its own", "{\"ops\":[\n{\"a\":1},\n{\"a\":2}],\"n\":2}", {
    nsj_obj_begin(&jw);
    nsj_key(&jw, "ops");
    nsj_arr_begin(&jw);
    for (int i = 1; i <= 2; i++) {
      nsj_value_on_new_line(&jw);
      nsj_obj_begin(&jw);
      nsj_ku64(&jw, "a", (uint64_t)i);
      nsj_obj_end(&jw);
    }
    nsj_arr_end(&jw);
    nsj_ku64(&jw, "n", 2);
    nsj_obj_end(&jw);
  });
  /* Output far longer than the writer's buffer, with a string that spans a flush. */
  {
    size_t big = 3 * NSJ_BUF + 17;
    char* s = malloc(big + 1);
    char* want = malloc(big + 64);
    if (!s || !want) return 1;
    for (size_t i = 0; i < big; i++) s[i] = (char)('a' + i % 26);
    s[big] = '\0';
    snprintf(want, big + 64, "[1,\"%s\",2]", s);
    CHECK_OUTPUT("longer than the buffer", want, {
      nsj_arr_begin(&jw);
      nsj_u64(&jw, 1);
      nsj_str(&jw, s);
      nsj_u64(&jw, 2);
      nsj_arr_end(&jw);
    });
    /* Text copied as it stands (nsj_put: a Kineto member or event of any
     * length), longer than the buffer, after some bytes already in it. */
    snprintf(want, big + 64, "[1,%s]", s);
    CHECK_OUTPUT("verbatim text longer than the buffer", want, {
      nsj_arr_begin(&jw);
      nsj_u64(&jw, 1);
      nsj_put(&jw, ",", 1);
      nsj_put(&jw, s, big);
      nsj_put(&jw, "]", 1);
    });
    /* The same into a byte buffer, appended after what it held; then a
     * buffer whose limit the text passes fails, and so does the writer. */
    ns_buf b = {0};
    ns_buf_str(&b, "x");
    ns_json* j = nsj_new_buf(&b);
    if (!j) return 1;
    nsj_arr_begin(j);
    nsj_u64(j, 1);
    nsj_str(j, s);
    nsj_u64(j, 2);
    nsj_arr_end(j);
    if (nsj_free(j) != 0 || b.failed || b.len != 1 + big + 8 ||
        memcmp(b.data, "x[1,\"", 5) != 0 || memcmp(b.data + b.len - 4, "\",2]", 4) != 0) {
      fprintf(stderr, "into a byte buffer: %zu bytes, failed %d\n", b.len, b.failed);
      failures++;
    }
    ns_buf_free(&b);
    ns_buf small = {.limit = NSJ_BUF};
    j = nsj_new_buf(&small);
    if (!j) return 1;
    nsj_str(j, s);
    if (nsj_free(j) != -1 || !small.failed || small.len > NSJ_BUF) {
      fprintf(stderr, "past the byte buffer's limit: rc not -1 or %zu bytes kept\n", small.len);
      failures++;
    }
    ns_buf_free(&small);
    free(s);
    free(want);
  }
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("test_json_writer: all passed\n");
  return failures ? 1 : 0;
}
