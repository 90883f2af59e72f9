/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: percentile sketch of durations.
 *
 * Exact order statistics up to NS_PCT_EXACT values; beyond that a log-linear
 * histogram (128 sub-buckets per power of two: relative error < 0.4 % with
 * midpoint reporting). Mergeable. Single-threaded (owner of the analysis).
 */
#ifndef NCCLSCOPE_ANALYSIS_PERCENTILES_H
#define NCCLSCOPE_ANALYSIS_PERCENTILES_H

#include <stddef.h>
#include <stdint.h>

#define NS_PCT_EXACT 1024

typedef struct {
  uint64_t n;
  uint64_t max, min;
  uint64_t* vals;   /* exact mode: n values, NULL in sketch mode */
  size_t cap;
  uint64_t sorted;  /* exact mode: vals is in order when this is n (ns_pct_get sorts it) */
  uint32_t* hist;   /* sketch mode: counts for indexes [hlo, hlo + hlen) */
  int32_t hlo;
  size_t hlen;
} ns_pct;

void ns_pct_init(ns_pct* p);
void ns_pct_free(ns_pct* p);
void ns_pct_add(ns_pct* p, uint64_t v);
void ns_pct_merge(ns_pct* dst, const ns_pct* src);
/* q in [0,1]: nearest-rank percentile (the ceil(q*n)-th smallest value). 0 if empty. */
double ns_pct_get(ns_pct* p, double q);
int ns_pct_exact(const ns_pct* p);

#endif
