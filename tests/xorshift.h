/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: the pseudo-random numbers of tests and generators that
 * need repeatable input (Marsaglia's xorshift64: shifts 13, 7, 17). Not for
 * anything that must be unpredictable. */
#ifndef NCCLSCOPE_TEST_XORSHIFT_H
#define NCCLSCOPE_TEST_XORSHIFT_H

#include <stdint.h>

/* The next number of the sequence in *state (never 0 unless seeded with 0). */
static inline uint64_t xorshift64(uint64_t* state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

#endif
