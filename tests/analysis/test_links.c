/* SPDX-License-Identifier: Apache-2.0 */
/* Link regression: injected latency/bandwidth with one-sided noise recovered
 * within 5 % in MIN mode; AVG on exact data; merging equals one pass; no fit
 * (and why) from too few sizes, too few samples per size, sizes within 4x, a
 * negative latency; the fastest time per size instead. */
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
    ns_linkacc_add(i < 10000 ? &w1 : &w2, size, t + noise, 0);
    ns_linkacc_add(&one, size, t + noise, 0);
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
  for (uint64_t sz = 1024; sz <= (1u << 22); sz *= 2) ns_linkacc_add(&ex, sz, 3.0 + (double)sz / 25e3, 0);
  ns_linkacc_fit(&ex, &avg, &min);
  CHECK_NEAR(avg.latency_us, 3.0, 1e-6);
  CHECK_REL(avg.bandwidth_gbs, 25.0, 1e-9);
  CHECK_NEAR(avg.r2, 1.0, 1e-12);
  ns_linkacc_free(&ex);

  /* one size only: no bandwidth */
  ns_linkacc_init(&ex);
  ns_linkacc_add(&ex, 4096, 5.0, 0);
  ns_linkacc_add(&ex, 4096, 6.0, 0);
  CHECK_U64(ns_linkacc_fit(&ex, &avg, &min), NS_LINK_FEW_SIZES);
  CHECK_TRUE(!avg.ok && !min.ok);
  ns_linkacc_free(&ex);

  /* Two sizes always give a line, and close sizes a meaningless one: a fit
   * needs 3 sizes seen 4 times each, spanning 4x. */
  static const struct {
    uint64_t sizes[4];
    int times; /* each size this often */
    int want;
  } cases[] = {
      {{4096, 1 << 20}, 50, NS_LINK_FEW_SIZES},      /* two sizes, however often */
      {{4096, 65536, 1 << 20}, 3, NS_LINK_FEW_SIZES}, /* three sizes, too few samples each */
      {{65536, 131072, 196608}, 50, NS_LINK_NARROW},  /* three sizes within 3x */
      {{65536, 131072, 262144}, 50, NS_LINK_FIT},     /* 4x */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ns_linkacc_init(&ex);
    for (int k = 0; k < cases[c].times; k++)
      for (int i = 0; i < 4 && cases[c].sizes[i]; i++)
        ns_linkacc_add(&ex, cases[c].sizes[i], lat_us + (double)cases[c].sizes[i] / (bw_gbs * 1e3) + 0.1 * k, 0);
    CHECK_U64(ns_linkacc_fit(&ex, &avg, &min), cases[c].want);
    CHECK_U64(min.ok, cases[c].want == NS_LINK_FIT);
    if (cases[c].want == NS_LINK_FIT) CHECK_REL(min.bandwidth_gbs, bw_gbs, 1e-6);
    ns_linkacc_free(&ex);
  }
  /* a line with a negative latency is no link */
  ns_linkacc_init(&ex);
  for (int k = 0; k < 4; k++)
    for (uint64_t sz = 4096; sz <= 65536; sz *= 4) ns_linkacc_add(&ex, sz, (double)sz / 1e3 - 3.0, 0);
  CHECK_U64(ns_linkacc_fit(&ex, &avg, &min), NS_LINK_NOT_LINEAR);
  CHECK_TRUE(!min.ok && !avg.ok);
  /* the fastest time per size, shown instead of a fit */
  ns_link_size shown[NS_LINK_SIZES_SHOWN];
  CHECK_U64(ns_linkacc_sizes(&ex, shown, NS_LINK_SIZES_SHOWN), 3);
  CHECK_U64(shown[0].bytes, 4096);
  CHECK_NEAR(shown[0].min_us, 4.096 - 3.0, 1e-9);
  CHECK_U64(shown[2].n, 4);
  ns_linkacc_free(&ex);
  ns_linkacc_free(&w1);
  ns_linkacc_free(&w2);
  ns_linkacc_free(&one);
  CHECK_DONE();
}
