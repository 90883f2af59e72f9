/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: percentile sketch of durations (see percentiles.h).
 * Runs on the thread that owns the ns_analysis.
 *
 * Definition: the p-th percentile of n values is the ceil(p*n)-th smallest
 * (nearest rank; p = 0 gives the minimum). Exact while n <= NS_PCT_EXACT;
 * then every value v >= 128 maps to bucket (e, m) with e = floor(log2 v) and
 * m = the 7 bits below the leading one; the bucket's midpoint is reported,
 * so the relative error is below 1/256.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/percentiles.h"
#include "util/array.h"

#define SUB_BITS 7

void ns_pct_init(ns_pct* p) { memset(p, 0, sizeof *p); }

void ns_pct_free(ns_pct* p) {
  free(p->vals);
  free(p->hist);
  memset(p, 0, sizeof *p);
}

static int32_t bucket_of(uint64_t v) {
  if (v < (1u << SUB_BITS)) return (int32_t)v; /* exact small values */
  int e = 63 - __builtin_clzll(v);
  uint64_t m = (v >> (e - SUB_BITS)) & ((1u << SUB_BITS) - 1);
  return (int32_t)(((e - SUB_BITS + 1) << SUB_BITS) + (int64_t)m);
}

static double bucket_mid(int32_t b) {
  if (b < (1 << SUB_BITS)) return (double)b;
  int e = (b >> SUB_BITS) + SUB_BITS - 1;
  uint64_t m = (uint64_t)(b & ((1 << SUB_BITS) - 1));
  double lo = (double)((1ull << e) + (m << (e - SUB_BITS)));
  double w = (double)(1ull << (e - SUB_BITS));
  return lo + w / 2;
}

static int hist_add(ns_pct* p, int32_t b, uint32_t cnt) {
  if (!p->hist) {
    p->hist = calloc(64, sizeof *p->hist);
    if (!p->hist) return -1;
    p->hlo = b;
    p->hlen = 64;
  }
  if (b < p->hlo || b >= p->hlo + (int32_t)p->hlen) {
    int32_t lo = b < p->hlo ? b : p->hlo;
    int32_t hi = b >= p->hlo + (int32_t)p->hlen ? b + 1 : p->hlo + (int32_t)p->hlen;
    size_t len = (size_t)(hi - lo) + 32;
    uint32_t* h = calloc(len, sizeof *h);
    if (!h) return -1;
    memcpy(h + (p->hlo - lo), p->hist, p->hlen * sizeof *h);
    free(p->hist);
    p->hist = h;
    p->hlo = lo;
    p->hlen = len;
  }
  p->hist[b - p->hlo] += cnt;
  return 0;
}

static void to_sketch(ns_pct* p) {
  for (size_t i = 0; i < p->n && p->vals; i++) hist_add(p, bucket_of(p->vals[i]), 1);
  free(p->vals);
  p->vals = NULL;
  p->cap = 0;
}

void ns_pct_add(ns_pct* p, uint64_t v) {
  if (p->n == 0 || v > p->max) p->max = v;
  if (p->n == 0 || v < p->min) p->min = v;
  if (!p->hist && p->n < NS_PCT_EXACT) {
    uint64_t* grown = ns_array_room(p->vals, &p->cap, p->n, sizeof *grown, 16);
    if (!grown) {
      to_sketch(p);
      goto sketch;
    }
    p->vals = grown;
    p->vals[p->n++] = v;
    return;
  }
  if (!p->hist) to_sketch(p);
sketch:
  hist_add(p, bucket_of(v), 1);
  p->n++;
}

void ns_pct_merge(ns_pct* dst, const ns_pct* src) {
  if (src->n == 0) return;
  if (!src->hist) {
    for (size_t i = 0; i < src->n; i++) ns_pct_add(dst, src->vals[i]);
    return;
  }
  if (!dst->hist) to_sketch(dst);
  for (size_t i = 0; i < src->hlen; i++)
    if (src->hist[i]) hist_add(dst, src->hlo + (int32_t)i, src->hist[i]);
  if (dst->n == 0 || src->max > dst->max) dst->max = src->max;
  if (dst->n == 0 || src->min < dst->min) dst->min = src->min;
  dst->n += src->n;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

double ns_pct_get(ns_pct* p, double q) {
  if (p->n == 0) return 0;
  if (q <= 0) return (double)p->min;
  if (q >= 1) return (double)p->max;
  double r = q * (double)p->n - 1e-9; /* ceil, immune to 0.9 * 10 = 9.000000000000002 */
  uint64_t rank = (uint64_t)r;
  if ((double)rank < r) rank++;
  if (rank < 1) rank = 1;
  if (!p->hist) {
    if (p->sorted != p->n) qsort(p->vals, p->n, sizeof *p->vals, cmp_u64);
    p->sorted = p->n; /* windows ask for three percentiles of one set */
    return (double)p->vals[rank - 1];
  }
  uint64_t seen = 0;
  for (size_t i = 0; i < p->hlen; i++) {
    seen += p->hist[i];
    if (seen >= rank) {
      double v = bucket_mid(p->hlo + (int32_t)i);
      if (v > (double)p->max) v = (double)p->max;
      if (v < (double)p->min) v = (double)p->min;
      return v;
    }
  }
  return (double)p->max;
}

int ns_pct_exact(const ns_pct* p) { return p->hist == NULL; }
