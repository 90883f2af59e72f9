/* SPDX-License-Identifier: Apache-2.0 */
/* The reader's accounted sequence numbers (src/trace/seq_runs.c) against a
 * plain array: seqs added in order, out of order, high ones before low ones
 * (a block copied before its original), repeated; the missing count is the
 * seqs absent between the lowest and the highest at every step. */
#include "trace/seq_runs.h"

#include "../check.h"

#define N 3000

static uint64_t state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

/* What missing must be: absent seqs between the lowest and highest present. */
static uint64_t missing_of(const uint8_t* in, uint64_t n) {
  uint64_t lo = n, hi = 0, present = 0;
  for (uint64_t q = 0; q < n; q++)
    if (in[q]) {
      if (lo == n) lo = q;
      hi = q;
      present++;
    }
  return present ? hi - lo + 1 - present : 0;
}

int main(void) {
  static uint8_t in[N];
  ns_seq_runs s = {0};
  for (int k = 0; k < 4 * N; k++) {
    /* mostly the next seq of a walk, sometimes far ahead or behind, sometimes one already there */
    static uint64_t walk = N / 2;
    uint64_t seq = rnd() % 4 == 0 ? rnd() % N : walk++ % N;
    CHECK_U64(ns_seq_runs_add(&s, seq), 0);
    in[seq] = 1;
    if (k % 50 == 0) {
      CHECK_U64(s.missing, missing_of(in, N));
      for (uint64_t q = 0; q < N; q++) CHECK_U64(ns_seq_runs_has(&s, q), in[q]);
    }
  }
  CHECK_U64(s.missing, missing_of(in, N));
  ns_seq_runs_free(&s);

  /* the copy of block 8 read before blocks 1..7: nothing missing once they came */
  static const uint64_t order[] = {0, 8, 1, 2, 3, 4, 5, 6, 7, 9};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) CHECK_U64(ns_seq_runs_add(&s, order[i]), 0);
  CHECK_U64(s.missing, 0);
  CHECK_U64(s.n, 1);
  /* a seq below every run, and the ends of the range */
  ns_seq_runs_free(&s);
  CHECK_U64(ns_seq_runs_add(&s, 10), 0);
  CHECK_U64(ns_seq_runs_add(&s, 4), 0);
  CHECK_U64(s.missing, 5);
  CHECK_U64(ns_seq_runs_add(&s, UINT64_MAX), 0);
  CHECK_U64(ns_seq_runs_add(&s, UINT64_MAX), 0);
  CHECK_TRUE(ns_seq_runs_has(&s, UINT64_MAX));
  CHECK_U64(s.missing, 5 + (UINT64_MAX - 11));
  ns_seq_runs_free(&s);
  CHECK_DONE();
}
