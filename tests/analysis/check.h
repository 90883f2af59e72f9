/* ncclscope analysis tests: typed assertions that print both sides. */
#ifndef NCCLSCOPE_TEST_ANALYSIS_CHECK_H
#define NCCLSCOPE_TEST_ANALYSIS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures;

#define CHECK_U64(a, b)                                                                                   \
  do {                                                                                                    \
    unsigned long long x_ = (unsigned long long)(a), y_ = (unsigned long long)(b);                        \
    if (x_ != y_) {                                                                                       \
      fprintf(stderr, "%s:%d: %s == %s: %llu != %llu\n", __FILE__, __LINE__, #a, #b, x_, y_);             \
      check_failures++;                                                                                   \
    }                                                                                                     \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                             \
  do {                                                                                                    \
    double x_ = (double)(a), y_ = (double)(b);                                                            \
    if (!(fabs(x_ - y_) <= (tol))) {                                                                      \
      fprintf(stderr, "%s:%d: %s ~ %s: %.9g vs %.9g (tol %.3g)\n", __FILE__, __LINE__, #a, #b, x_, y_,   \
              (double)(tol));                                                                             \
      check_failures++;                                                                                   \
    }                                                                                                     \
  } while (0)

#define CHECK_REL(a, b, rel) CHECK_NEAR(a, b, fabs((double)(b)) * (rel))

#define CHECK_TRUE(c)                                                                                     \
  do {                                                                                                    \
    if (!(c)) {                                                                                           \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c);                                   \
      check_failures++;                                                                                   \
    }                                                                                                     \
  } while (0)

#define CHECK_DONE()                                                                                      \
  do {                                                                                                    \
    if (check_failures) {                                                                                 \
      fprintf(stderr, "%d check(s) failed\n", check_failures);                                           \
      return 1;                                                                                           \
    }                                                                                                     \
    printf("ok\n");                                                                                       \
    return 0;                                                                                             \
  } while (0)

/* splitmix64 + uniform in [0,1) */
static inline unsigned long long test_rng(unsigned long long* s) {
  unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double test_unif(unsigned long long* s) { return (double)(test_rng(s) >> 11) / 9007199254740992.0; }

#endif
