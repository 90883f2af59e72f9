/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: GPU timer -> trace clock fit for one GPU context.
 *
 * Single-threaded (the thread that owns the ns_analysis). See clockfit.c
 * and docs/metrics.md for the method and why the bound is honest.
 */
#ifndef NCCLSCOPE_ANALYSIS_CLOCKFIT_H
#define NCCLSCOPE_ANALYSIS_CLOCKFIT_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/analysis.h"

typedef struct {
  int64_t key;         /* floor((cpu - ref_cpu) / width) */
  int has_after, has_before;
  double after_x, after_z;   /* tightest "GPU event at or before cpu" sample */
  double before_x, before_z; /* tightest "GPU event at or after cpu" sample (z already + quantum) */
} ns_cf_bin;

typedef struct {
  int init;
  uint64_t ref_cpu, ref_gpu;
  double quantum_ns, dmax, slack_ns; /* dmax in ns/s (= ppm * 1000) */
  uint64_t max_age_ns;
  uint64_t width_ns;
  ns_cf_bin* bins; /* sorted by key */
  size_t nbins, cap;
  double *vc, *vd; /* polygon of feasible (c [ns], d [ns/s]) lines, convex, ccw or cw */
  size_t nv, vcap;
  double* tmp;     /* clipping scratch (2 * vcap) */
  int have_after, have_before;
  uint64_t samples, resets;
  uint64_t rejected; /* "before" samples dropped: they contradicted the callbacks (and the fit) */
  uint64_t newest_cpu;
  /* Where the point estimate sits between the two sides of the polygon: 0 on
   * the callbacks' edge, 1 on the launches' edge (0.5 until both sides have
   * samples). Recomputed every 1024th sample, when the fit restarts, and
   * with each of its first 32 bins. */
  double lean;
  double* resid; /* scratch for the lean: one residual per bin (cap) */
} ns_clockfit;

int ns_cf_init(ns_clockfit* cf, double quantum_ns, double max_drift_ppm, double slack_ns, double max_age_sec);
void ns_cf_free(ns_clockfit* cf);
/* The GPU event with timer value gpu happened at or before cpu (a callback). */
void ns_cf_add_after(ns_clockfit* cf, uint64_t cpu, uint64_t gpu);
/* The GPU event with timer value gpu happened at or after cpu (its Coll start). */
void ns_cf_add_before(ns_clockfit* cf, uint64_t cpu, uint64_t gpu);
/* Trace-clock time of a timer value: a point of the set of times consistent
 * with the samples, leaning towards the side whose samples hug their edge
 * (clockfit.c); err = its largest distance to either end of that set
 * (INFINITY if not bounded), so the set lies within cpu +- err. */
int ns_cf_convert(const ns_clockfit* cf, uint64_t gpu, uint64_t* cpu, double* err);
void ns_cf_get(const ns_clockfit* cf, ns_clock_fit* out);

#endif
