/* Link regression: injected latency/bandwidth with one-sided noise recovered
 * within 5 % in MIN mode; AVG on exact data; merging equals one pass. */
#include <string.h>

#include "analysis/links.h"
#include "check.h"

int main(void) {
  const double lat_us = 8.0, bw_gbs = 12.5; /* 12.5 GB/s = 100 Gbit/s */
  unsigned long long s = 7;
  ns_linkacc w1, w2, one;
  ns_linkacc_init(&w1);
  ns_linkacc_init(&w2);
  ns_linkacc_init(&one);
  for (int i = 0; i < 20000; i++) {
    uint64_t size = 4096ull << (test_rng(&s) % 10); /* 4 KiB .. 2 MiB */
    if (test_rng(&s) % 4 == 0) size = 1 + test_rng(&s) % (1 << 19); /* partial last steps */
    double t = lat_us + (double)size / (bw_gbs * 1e3);
    double u = test_unif(&s);
    double noise = (u < 0.02 ? 50.0 : 5.0) * test_unif(&s) * test_unif(&s); /* >= 0, heavy tail */
    ns_linkacc_add(i < 10000 ? &w1 : &w2, size, t + noise);
    ns_linkacc_add(&one, size, t + noise);
  }
  ns_linkacc_merge(&w1, &w2);
  ns_regression avg, min, avg1, min1;
  ns_linkacc_fit(&w1, &avg, &min);
  ns_linkacc_fit(&one, &avg1, &min1);
  printf("MIN: latency %.3f us (true %.3f), bandwidth %.3f GB/s (true %.3f), R2 %.5f, points %llu\n", min.latency_us,
         lat_us, min.bandwidth_gbs, bw_gbs, min.r2, (unsigned long long)min.n);
  printf("AVG: latency %.3f us, bandwidth %.3f GB/s, R2 %.5f\n", avg.latency_us, avg.bandwidth_gbs, avg.r2);
  CHECK_TRUE(min.ok);
  CHECK_REL(min.latency_us, lat_us, 0.05);
  CHECK_REL(min.bandwidth_gbs, bw_gbs, 0.05);
  CHECK_REL(avg1.bandwidth_gbs, avg.bandwidth_gbs, 1e-9);
  CHECK_REL(avg1.latency_us, avg.latency_us, 1e-9);
  CHECK_REL(avg1.r2, avg.r2, 1e-9);
  CHECK_REL(min1.bandwidth_gbs, min.bandwidth_gbs, 1e-9);

  /* exact line in AVG mode */
  ns_linkacc ex;
  ns_linkacc_init(&ex);
  for (uint64_t sz = 1024; sz <= (1u << 22); sz *= 2) ns_linkacc_add(&ex, sz, 3.0 + (double)sz / 25e3);
  ns_linkacc_fit(&ex, &avg, &min);
  CHECK_NEAR(avg.latency_us, 3.0, 1e-6);
  CHECK_REL(avg.bandwidth_gbs, 25.0, 1e-9);
  CHECK_NEAR(avg.r2, 1.0, 1e-12);
  ns_linkacc_free(&ex);

  /* one size only: no bandwidth */
  ns_linkacc_init(&ex);
  ns_linkacc_add(&ex, 4096, 5.0);
  ns_linkacc_add(&ex, 4096, 6.0);
  ns_linkacc_fit(&ex, &avg, &min);
  CHECK_TRUE(!avg.ok && !min.ok);
  ns_linkacc_free(&ex);
  ns_linkacc_free(&w1);
  ns_linkacc_free(&w2);
  ns_linkacc_free(&one);
  CHECK_DONE();
}
