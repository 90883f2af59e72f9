/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: typed assertions that print both sides, shared by every
 * C test (one process per test; a failed check is counted, the test goes
 * on, and CHECK_DONE turns the count into the exit status). */
#ifndef NCCLSCOPE_TEST_CHECK_H
#define NCCLSCOPE_TEST_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK_TRUE(c)                                                   \
  do {                                                                  \
    if (!(c)) {                                                         \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
      check_failures++;                                                 \
    }                                                                   \
  } while (0)

/* Integers of any width, compared as 64-bit: both sides in decimal and hex. */
#define CHECK_U64(a, b)                                                                                        \
  do {                                                                                                         \
    uint64_t x_ = (uint64_t)(a), y_ = (uint64_t)(b);                                                           \
    if (x_ != y_) {                                                                                            \
      fprintf(stderr, "%s:%d: %s == %s: %" PRIu64 " (0x%" PRIx64 ") != %" PRIu64 " (0x%" PRIx64 ")\n", __FILE__, \
              __LINE__, #a, #b, x_, x_, y_, y_);                                                               \
      check_failures++;                                                                                        \
    }                                                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                                                       \
  do {                                                                                                        \
    const char *sa_ = (a), *sb_ = (b);                                                                        \
    if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                                                                   \
      fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)", \
              sb_ ? sb_ : "(null)");                                                                          \
      check_failures++;                                                                                       \
    }                                                                                                         \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                                 \
  do {                                                                                                        \
    double x_ = (double)(a), y_ = (double)(b);                                                                \
    if (!(fabs(x_ - y_) <= (tol))) {                                                                          \
      fprintf(stderr, "%s:%d: %s ~ %s: %.9g vs %.9g (tol %.3g)\n", __FILE__, __LINE__, #a, #b, x_, y_,       \
              (double)(tol));                                                                                 \
      check_failures++;                                                                                       \
    }                                                                                                         \
  } while (0)

#define CHECK_REL(a, b, rel) CHECK_NEAR(a, b, fabs((double)(b)) * (rel))

#define CHECK_DONE()                                               \
  do {                                                             \
    if (check_failures) {                                          \
      fprintf(stderr, "%d check(s) failed\n", check_failures);    \
      return 1;                                                    \
    }                                                              \
    printf("ok\n");                                                \
    return 0;                                                      \
  } while (0)

/* splitmix64 + uniform in [0,1): reproducible test inputs. */
static inline unsigned long long test_rng(unsigned long long* s) {
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double test_unif(unsigned long long* s) { return (double)(test_rng(s) >> 11) / 9007199254740992.0; }

#endif
