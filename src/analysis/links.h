/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: per-link regression of transfer time over size.
 *
 * AVG mode: least squares over every (size, time) point, kept as mergeable
 * co-moments (n, means, Sxx, Sxy, Syy; Chan et al. merge), so no point is
 * stored. MIN mode: the fastest time per distinct size (sizes beyond
 * NS_LINK_MAX_SIZES distinct values share log-spaced classes keeping the
 * fastest point; only transfers that did not queue behind an earlier one
 * of their connection), then least squares over the sizes seen at least
 * NS_LINK_MIN_SEEN times (a minimum of one sample is just a noisy sample).
 * No fit (ns_link_stats.nofit says why) from fewer than NS_LINK_FIT_SIZES
 * such sizes, from sizes spanning less than NS_LINK_FIT_SPAN times, or when
 * the line has no positive slope and latency: two sizes always give a line,
 * close sizes a meaningless one. Single-threaded.
 */
#ifndef NCCLSCOPE_ANALYSIS_LINKS_H
#define NCCLSCOPE_ANALYSIS_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/analysis.h"

#define NS_LINK_MAX_SIZES 256

typedef struct {
  double n, mx, my, sxx, sxy, syy;
} ns_moments;

typedef struct {
  uint64_t key;   /* exact size, or a class id once full */
  double x, y;    /* size (bytes) and the fastest time (us) */
  uint64_t n;     /* points seen for this size */
} ns_minpt;

typedef struct {
  ns_moments all;
  ns_minpt* mins; /* sorted by key */
  size_t nmins, cap;
  int classed;    /* too many distinct sizes: keys are log classes */
  uint64_t bytes, steps;
  double time_us_sum;
} ns_linkacc;

void ns_moments_add(ns_moments* m, double x, double y);
void ns_moments_merge(ns_moments* dst, const ns_moments* src);
void ns_moments_fit(const ns_moments* m, ns_regression* out, uint64_t n);

void ns_linkacc_init(ns_linkacc* l);
void ns_linkacc_free(ns_linkacc* l);
/* queued: the transfer waited behind an earlier one of its connection (its
 * time is not the link's): AVG only, not a MIN point. */
void ns_linkacc_add(ns_linkacc* l, uint64_t size, double time_us, int queued);
void ns_linkacc_merge(ns_linkacc* dst, const ns_linkacc* src);
/* Both fits; returns NS_LINK_FIT or why there is none (then neither is ok). */
int ns_linkacc_fit(const ns_linkacc* l, ns_regression* avg, ns_regression* min);
/* The distinct sizes seen; fills out[] with the min(that, max) most frequent, by size. */
uint32_t ns_linkacc_sizes(const ns_linkacc* l, ns_link_size* out, size_t max);

#endif
