/* SPDX-License-Identifier: Apache-2.0 */
/* Percentiles: exact nearest-rank on small sets, < 0.4 % relative in sketch mode, merge. */
#include <stdlib.h>

#include "analysis/percentiles.h"
#include "check.h"

static int cmp(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  ns_pct p;
  ns_pct_init(&p);
  uint64_t v[] = {50, 10, 40, 20, 30, 100, 90, 60, 80, 70};
  for (size_t i = 0; i < 10; i++) ns_pct_add(&p, v[i]);
  CHECK_TRUE(ns_pct_exact(&p));
  CHECK_NEAR(ns_pct_get(&p, 0.5), 50, 0);  /* ceil(5) = 5th */
  CHECK_NEAR(ns_pct_get(&p, 0.9), 90, 0);  /* 9th */
  CHECK_NEAR(ns_pct_get(&p, 0.99), 100, 0); /* ceil(9.9) = 10th */
  CHECK_NEAR(ns_pct_get(&p, 0.0), 10, 0);
  CHECK_NEAR(ns_pct_get(&p, 1.0), 100, 0);
  CHECK_NEAR(ns_pct_get(&p, 0.11), 20, 0); /* ceil(1.1) = 2nd */
  /* values added after a get: the next get sorts again (11 values now) */
  ns_pct_add(&p, 5);
  CHECK_NEAR(ns_pct_get(&p, 0.5), 50, 0);  /* ceil(5.5) = 6th of 5,10,..,100 */
  CHECK_NEAR(ns_pct_get(&p, 0.05), 5, 0);  /* ceil(0.55) = 1st */
  CHECK_NEAR(ns_pct_get(&p, 0.1), 10, 0);  /* ceil(1.1) = 2nd */
  ns_pct_free(&p);

  ns_pct one;
  ns_pct_init(&one);
  ns_pct_add(&one, 7);
  CHECK_NEAR(ns_pct_get(&one, 0.5), 7, 0);
  CHECK_NEAR(ns_pct_get(&one, 0.99), 7, 0);
  ns_pct_free(&one);

  /* sketch mode vs exact order statistics on 100k log-uniform values */
  enum { N = 100000 };
  uint64_t* all = malloc(N * sizeof *all);
  unsigned long long s = 42;
  ns_pct a, b;
  ns_pct_init(&a);
  ns_pct_init(&b);
  for (int i = 0; i < N; i++) {
    all[i] = (uint64_t)(1000.0 * pow(10.0, 4.0 * test_unif(&s)));
    ns_pct_add(i % 2 ? &a : &b, all[i]);
  }
  ns_pct_merge(&a, &b);
  CHECK_TRUE(!ns_pct_exact(&a));
  CHECK_U64(a.n, N);
  qsort(all, N, sizeof *all, cmp);
  double qs[] = {0.5, 0.9, 0.99};
  for (int i = 0; i < 3; i++) {
    uint64_t exact = all[(size_t)ceil(qs[i] * N - 1e-9) - 1];
    CHECK_REL(ns_pct_get(&a, qs[i]), (double)exact, 0.004);
  }
  CHECK_NEAR(ns_pct_get(&a, 1.0), (double)all[N - 1], 0);
  ns_pct_free(&a);
  ns_pct_free(&b);
  free(all);
  CHECK_DONE();
}
