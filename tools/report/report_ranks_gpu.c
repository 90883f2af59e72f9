/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: each rank's GPU clock, placed by the
 * collectives' ends (report_ranks_gpu.h).
 *
 * A GPU whose kernels never start promptly after their launch (a GPU-side
 * straggler) has a clock fit as wide as its delay: the launch calls say
 * little about when its kernels began, so its converted times sit anywhere
 * in a bound of milliseconds and its lateness reads a fraction of the truth.
 * The ranks of a collective finish together (each waits for the last one's
 * data), so per rank the median over the collectives of (its GPU end - the
 * collective's median end) is how far its converted GPU times are off. The
 * correction is applied to the ops whose published bound allows it
 * (|correction| <= bound: the truth lies inside the bound, so a larger one
 * means the ends did not agree), when it rests on NS_XRANK_GPU_MIN_COLLS
 * collectives whose ends agree within NS_XRANK_GPU_TIGHT_NS (MAD) and exceeds
 * NS_XRANK_GPU_SIGNIFICANT times its uncertainty. Host times are never moved. */
#include "report/report_ranks_gpu.h"

#include <math.h>
#include <string.h>

#include "report/report_ranks_walk.h"

#define NS_XRANK_GPU_MIN_COLLS 10
#define NS_XRANK_GPU_TIGHT_NS 50000.0
#define NS_XRANK_GPU_SIGNIFICANT 3.0

/* A collective with 3+ ends: where its ends are measured from, and their median. */
typedef struct {
  int16_t func;
  uint64_t seq;
  int64_t base; /* the first end (common ns) */
  double mid;   /* the median of (end - base) */
} ns_xrank_coll_end;

/* Whether m[i] is an op the ends are taken from: its rank's first in the
 * collective (a trace's), if it completed with an end. */
static int end_member(const ns_xrank_member* m, size_t i) {
  const ns_xrank_op* p = m[i].op;
  if ((p->flags & NS_XRANK_FR) || !(p->flags & NS_XRANK_DONE) || !p->end) return 0;
  return !(i > 0 && m[i - 1].rank == m[i].rank);
}

/* One communicator: per collective the median end; then per rank with GPU ends, its offset from those medians
 * (the median over its collectives), and the correction where it holds. 0, or -1 when out of memory. */
static int refine_comm_gpus(ns_xr* x, ns_xrank_comm* c) {
  ns_xrank_cursor k;
  if (ns_xrank_cursor_init(&k, c)) return -1;
  ns_xrank_coll_end* ends = NULL;
  size_t nends = 0, capends = 0, capval = 0;
  double* val = NULL;
  int rc = 0;
  while (ns_xrank_cursor_next(&k)) {
    if (2 * k.nm > capval) {
      free(val);
      capval = 2 * k.nm;
      if (!(val = malloc(capval * sizeof *val))) goto fail;
    }
    size_t n = 0;
    int64_t base = 0;
    for (size_t i = 0; i < k.nm; i++) {
      if (!end_member(k.m, i)) continue;
      int64_t e = ns_xrank_common(x, k.m[i].op, k.m[i].op->end);
      if (!n) base = e;
      val[n++] = (double)(e - base); /* small: exact in a double */
    }
    if (n < 3) continue;
    memcpy(val + n, val, n * sizeof *val);
    qsort(val + n, n, sizeof *val, ns_xrank_by_double);
    if (ns_xrank_grow((void**)&ends, &capends, nends, sizeof *ends)) goto fail;
    ends[nends++] = (ns_xrank_coll_end){
        .func = k.m[0].op->func, .seq = k.m[0].op->seq, .base = base, .mid = ns_xrank_sorted_median(val + n, n)};
  }
  for (uint32_t r = 0; r < c->nranks && nends; r++) {
    ns_xrank_rank* rk = &c->ranks[r];
    if (2 * rk->nops > capval) {
      free(val);
      capval = 2 * rk->nops;
      if (!(val = malloc(capval * sizeof *val))) goto fail;
    }
    size_t n = 0, e = 0;
    for (size_t i = 0; i < rk->nops; i++) {
      const ns_xrank_op* p = &rk->ops[i];
      if (i > 0 && rk->ops[i - 1].func == p->func && rk->ops[i - 1].seq == p->seq) continue; /* one per collective */
      if ((p->flags & NS_XRANK_FR) || !(p->flags & NS_XRANK_DONE) || !p->end || !(p->gpu_err_ns > 0)) continue;
      while (e < nends && ns_xrank_key_less(ends[e].func, ends[e].seq, p->func, p->seq)) e++;
      if (e == nends) break;
      if (ends[e].func != p->func || ends[e].seq != p->seq) continue;
      val[n++] = (double)(ns_xrank_common(x, p, p->end) - ends[e].base) - ends[e].mid;
    }
    if (!n) continue;
    qsort(val, n, sizeof *val, ns_xrank_by_double);
    double med = ns_xrank_sorted_median(val, n);
    for (size_t m = 0; m < n; m++) val[n + m] = fabs(val[m] - med);
    qsort(val + n, n, sizeof *val, ns_xrank_by_double);
    double mad = ns_xrank_sorted_median(val + n, n);
    rk->gpu_found_ns = -med;
    rk->gpu_samples = n;
    rk->gpu_uncert_ns = 1.2533 * 1.4826 * mad / sqrt((double)n);
    if (n >= NS_XRANK_GPU_MIN_COLLS && mad <= NS_XRANK_GPU_TIGHT_NS &&
        fabs(med) > NS_XRANK_GPU_SIGNIFICANT * rk->gpu_uncert_ns) {
      int64_t corr = (int64_t)llround(-med);
      for (size_t i = 0; i < rk->nops; i++) {
        ns_xrank_op* p = &rk->ops[i];
        if (!(p->gpu_err_ns > 0) || fabs(med) > p->gpu_err_ns) continue;
        if (p->arr) p->arr += corr;
        if (p->end) p->end += corr;
        rk->gpu_moved++;
      }
    }
  }
  goto out;
fail:
  rc = -1;
out:
  free(val);
  free(ends);
  ns_xrank_cursor_free(&k);
  return rc;
}

void ns_xrank_refine_gpu_clocks(ns_xr* x) {
  for (size_t i = 0; i < x->ncomms; i++)
    if (x->comms[i].nops && refine_comm_gpus(x, &x->comms[i])) return;
}
