/* ncclscope plugin tests: typed assertions that print both sides. */
#ifndef NCCLSCOPE_TEST_CHECK_H
#define NCCLSCOPE_TEST_CHECK_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
      check_failures++;                                                   \
    }                                                                     \
  } while (0)
#define CHECK_EQ(a, b)                                                                                      \
  do {                                                                                                      \
    uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                                                      \
    if (va_ != vb_) {                                                                                       \
      fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " (0x%" PRIx64 ") vs %" PRIu64 " (0x%" PRIx64 ")\n", \
              __FILE__, __LINE__, #a, #b, va_, va_, vb_, vb_);                                              \
      check_failures++;                                                                                     \
    }                                                                                                       \
  } while (0)
#define CHECK_STR(a, b)                                                                              \
  do {                                                                                               \
    const char *sa_ = (a), *sb_ = (b);                                                               \
    if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                                                          \
      fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" vs \"%s\"\n", __FILE__, __LINE__, #a, #b,       \
              sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                                           \
      check_failures++;                                                                              \
    }                                                                                                \
  } while (0)
#define CHECK_DONE()                                                           \
  do {                                                                         \
    if (check_failures) {                                                      \
      fprintf(stderr, "%d check(s) failed\n", check_failures);                \
      return 1;                                                                \
    }                                                                          \
    printf("ok\n");                                                            \
    return 0;                                                                  \
  } while (0)
#endif
