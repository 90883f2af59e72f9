/* SPDX-License-Identifier: Apache-2.0 */
/* The reader's set of blocks read (src/trace/seen_blocks.c) against a plain
 * array: sequence numbers added in order, out of order, with gaps and far
 * outliers (damaged seqs); a seq keeps its first CRC; runs that become
 * adjacent are joined, so a whole file is one run. */
#include "trace/seen_blocks.h"

#include "../check.h"

#define N 20000

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

int main(void) {
  static uint32_t crc[N];
  static uint8_t in[N];
  static uint64_t order[N];
  for (uint64_t i = 0; i < N; i++) crc[i] = (uint32_t)rnd(), order[i] = i;
  /* mostly in order, with stretches shuffled (blocks out of order after damage) */
  for (size_t i = 0; i + 1 < N; i++)
    if (rnd() % 8 == 0) {
      size_t j = i + 1 + rnd() % 50;
      if (j < N) {
        uint64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
    }
  ns_seen_blocks s = {0};
  for (size_t k = 0; k < N; k++) {
    uint64_t seq = order[k];
    CHECK_U64(ns_seen_blocks_add(&s, seq, crc[seq]), 0);
    in[seq] = 1;
    if (k % 97 == 0) { /* a damaged seq far away, and one already read with another CRC */
      CHECK_U64(ns_seen_blocks_add(&s, (1ull << 40) + k, 7), 0);
      CHECK_U64(ns_seen_blocks_add(&s, seq, crc[seq] ^ 1), 0);
    }
    if (k % 1000 == 0)
      for (uint64_t q = 0; q < N; q++) {
        CHECK_U64(ns_seen_blocks_has(&s, q, crc[q]), in[q]);
        CHECK_U64(ns_seen_blocks_has(&s, q, crc[q] ^ 1), 0);
      }
  }
  for (uint64_t q = 0; q < N; q++) CHECK_U64(ns_seen_blocks_has(&s, q, crc[q]), 1);
  CHECK_U64(ns_seen_blocks_has(&s, (1ull << 40), 7), 1);
  CHECK_U64(ns_seen_blocks_has(&s, N, 0), 0);
  /* 0..N-1 joined into one run, plus the far outliers (none adjacent to each other) */
  CHECK_U64(s.n, 1 + (N + 96) / 97);
  CHECK_U64(s.runs[0].lo, 0);
  CHECK_U64(s.runs[0].n, N);
  ns_seen_blocks_free(&s);
  CHECK_DONE();
}
