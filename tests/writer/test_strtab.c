/* SPDX-License-Identifier: Apache-2.0 */
/* src/writer/strtab.c: one id per distinct string, from 1, in order; the
 * same string always the same id; every new string (and only a new one)
 * goes into the STRINGS block, which decodes to the same ids and bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "ncclscope/trace_format.h"
#include "trace/codec.h"
#include "writer/strtab.h"

enum { NSTR = 3000 };

static void name_of(unsigned i, char* out, size_t cap) {
  /* Similar names (a hash or a prefix compare that is off shows). */
  snprintf(out, cap, i % 3 ? "comm-%u" : "Coll/AllReduce/%u/\xce\xbb", i);
}

int main(void) {
  ns_strtab* t = ns_strtab_new();
  CHECK_TRUE(t != NULL);
  ns_buf buf = {0};
  ns_strings_encoder enc;
  int open = 0;
  char s[64];
  for (unsigned round = 0; round < 3; round++)
    for (unsigned i = 0; i < NSTR; i++) {
      name_of(i, s, sizeof s);
      CHECK_U64(ns_strtab_intern(t, s, strlen(s), &enc, &buf, &open), i + 1);
    }
  /* Only bytes [0, n) count: a longer buffer with the same prefix is the same string. */
  CHECK_U64(ns_strtab_intern(t, "comm-1XYZ", 6, &enc, &buf, &open), 2);
  CHECK_U64(ns_strtab_intern(t, "", 0, &enc, &buf, &open), NSTR + 1);
  CHECK_U64(ns_strtab_intern(t, "", 0, &enc, &buf, &open), NSTR + 1);
  CHECK_TRUE(open);
  for (unsigned i = 0; i < NSTR; i++) {
    name_of(i, s, sizeof s);
    CHECK_STR(ns_strtab_str(t, i + 1), s);
  }
  CHECK_STR(ns_strtab_str(t, NSTR + 1), "");
  CHECK_TRUE(ns_strtab_str(t, 0) == NULL);
  CHECK_TRUE(ns_strtab_str(t, NSTR + 2) == NULL);
  CHECK_TRUE(ns_strtab_str(NULL, 1) == NULL);

  /* The block: each string once, with its id, in order. */
  ns_strings_end(&enc, 0);
  CHECK_TRUE(!buf.failed && buf.len > sizeof(ns_block_header));
  ns_block_header h;
  memcpy(&h, buf.data, sizeof h);
  CHECK_U64(h.magic, NS_BLOCK_MAGIC);
  CHECK_U64(h.payload_size, buf.len - sizeof h);
  ns_strings_decoder d;
  CHECK_U64(ns_strings_open(&d, buf.data + sizeof h, h.payload_size), 0);
  uint32_t id;
  const char* str;
  size_t n;
  unsigned count = 0;
  while (ns_strings_next(&d, &id, &str, &n) == 1) {
    count++;
    CHECK_U64(id, count);
    if (count <= NSTR)
      name_of(count - 1, s, sizeof s);
    else
      s[0] = 0;
    CHECK_U64(n, strlen(s));
    CHECK_TRUE(n == strlen(s) && memcmp(str, s, n) == 0);
  }
  CHECK_U64(count, NSTR + 1);
  ns_strtab_free(t);
  free(buf.data);
  CHECK_DONE();
}
