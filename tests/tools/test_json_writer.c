/* ncclscope: tests of the CLI's JSON writer: escaping of every kind of byte
 * NCCL may hand us, comma placement, and exact microsecond formatting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"

static int failures;

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
  (void)0;
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("test_json_writer: all passed\n");
  return failures ? 1 : 0;
}
