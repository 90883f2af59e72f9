/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: GPU timer -> trace clock fit for one GPU context.
 *
 * Runs on the thread that owns the ns_analysis (the plugin's writer thread
 * or the CLI). Method (docs/metrics.md has the long form):
 *
 * Relative coordinates from the first sample: x = cpu - ref_cpu (seconds in
 * the constraints, ns in conversions), y = gpu - ref_gpu (ns, integer
 * subtraction first so nothing is lost to the Unix-epoch-sized values).
 * Model: the GPU timer's continuous value is v(x) = x + f(x) with
 * f(x) = c + d*x (c offset in ns, d drift in ns/s) and a reading is
 * floor(v / q) * q, so reading <= v < reading + q.
 *  - "after" sample (callback at cpu saw reading g of an earlier GPU event):
 *    v(event) >= y and event <= cpu, v increasing  =>  f(x) >= y - x.
 *  - "before" sample (Coll start at cpu precedes the kernel that read g):
 *    v(event) < y + q and event >= cpu           =>  f(x) <= y + q - x.
 * Every sample is a half-plane in (c, d); with |d| <= max drift the feasible
 * set is a convex polygon kept explicitly (clipped by each new sample). The
 * true line is inside it whatever the lag distribution, so the conversion's
 * interval [min over vertices, max over vertices] always contains the truth:
 * that is the published bound. Where in it the point estimate sits (the
 * lean) follows how closely each side's samples hug their edge: see
 * update_lean. Samples are also kept in time bins (the
 * tightest of each side per bin) so old ones can be forgotten (max age) and
 * the polygon rebuilt; contradictory samples (empty polygon: a clock jump or a
 * wrong association) restart the fit from the newest bins and are counted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/clockfit.h"
#include "util/array.h"

#define CF_BOX_C 1e15       /* initial |c| range, ns (about 11 days) */
#define CF_TOL 0.5          /* ns: a constraint violated by less is made tangent */
#define CF_NUM_SLACK 1.0    /* ns: floating point margin added to every bound */
#define CF_MAX_BINS 256
#define CF_WIDTH0 1000000ull /* first bin width: 1 ms */
#define CF_CALLBACK_FLOOR 1000.0 /* ns: the shortest lag assumed for the point estimate (never for the bound) */

int ns_cf_init(ns_clockfit* cf, double quantum_ns, double max_drift_ppm, double slack_ns, double max_age_sec) {
  memset(cf, 0, sizeof *cf);
  cf->quantum_ns = quantum_ns > 0 ? quantum_ns : 1.0;
  cf->dmax = (max_drift_ppm > 0 ? max_drift_ppm : 500.0) * 1000.0;
  cf->slack_ns = slack_ns > 0 ? slack_ns : 0.0;
  cf->max_age_ns = max_age_sec > 0 ? (uint64_t)(max_age_sec * 1e9) : 0;
  cf->width_ns = CF_WIDTH0;
  cf->cap = CF_MAX_BINS;
  cf->bins = calloc(cf->cap, sizeof *cf->bins);
  cf->vcap = 2 * CF_MAX_BINS + 16; /* clipping adds at most one vertex per constraint */
  cf->vc = malloc(cf->vcap * sizeof(double));
  cf->vd = malloc(cf->vcap * sizeof(double));
  cf->tmp = malloc(2 * cf->vcap * sizeof(double));
  cf->resid = malloc(cf->cap * sizeof(double));
  cf->lean = 0.5;
  if (!cf->bins || !cf->vc || !cf->vd || !cf->tmp || !cf->resid) {
    ns_cf_free(cf);
    return -1;
  }
  return 0;
}

void ns_cf_free(ns_clockfit* cf) {
  free(cf->bins);
  free(cf->vc);
  free(cf->vd);
  free(cf->tmp);
  free(cf->resid);
  memset(cf, 0, sizeof *cf);
}

static void poly_box(ns_clockfit* cf) {
  static const double sc[4] = {-1, 1, 1, -1}, sd[4] = {-1, -1, 1, 1};
  for (int i = 0; i < 4; i++) {
    cf->vc[i] = sc[i] * CF_BOX_C;
    cf->vd[i] = sd[i] * cf->dmax;
  }
  cf->nv = 4;
  cf->have_after = cf->have_before = 0;
}

/* Clips the polygon by sgn * (c + x d) <= sgn * h. Returns 0 if empty. */
static int poly_clip(ns_clockfit* cf, double x, double h, double sgn) {
  size_t n = cf->nv;
  double smin = INFINITY, smax = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double s = sgn * (cf->vc[i] + x * cf->vd[i] - h);
    if (s < smin) smin = s;
    if (s > smax) smax = s;
  }
  if (smin > CF_TOL) return 0;
  /* Every vertex inside: the clip below would rebuild the same polygon (no
   * shift, no crossing). Most samples of a settled fit end here. */
  if (smax <= 0) return 1;
  double shift = smin > 0 ? smin : 0; /* within tolerance: make it tangent */
  double* oc = cf->tmp;
  double* od = cf->tmp + cf->vcap;
  size_t m = 0;
  for (size_t i = 0; i < n && m + 2 <= cf->vcap; i++) {
    size_t j = (i + 1) % n;
    double si = sgn * (cf->vc[i] + x * cf->vd[i] - h) - shift;
    double sj = sgn * (cf->vc[j] + x * cf->vd[j] - h) - shift;
    if (si <= 0) {
      oc[m] = cf->vc[i];
      od[m] = cf->vd[i];
      m++;
    }
    if ((si < 0 && sj > 0) || (si > 0 && sj < 0)) {
      double t = si / (si - sj);
      oc[m] = cf->vc[i] + t * (cf->vc[j] - cf->vc[i]);
      od[m] = cf->vd[i] + t * (cf->vd[j] - cf->vd[i]);
      m++;
    }
  }
  /* drop consecutive duplicates so degenerate clips do not grow the polygon */
  size_t k = 0;
  for (size_t i = 0; i < m; i++) {
    if (k > 0 && fabs(oc[i] - cf->vc[k - 1]) < 1e-6 && fabs(od[i] - cf->vd[k - 1]) < 1e-9) continue;
    cf->vc[k] = oc[i];
    cf->vd[k] = od[i];
    k++;
  }
  while (k > 1 && fabs(cf->vc[k - 1] - cf->vc[0]) < 1e-6 && fabs(cf->vd[k - 1] - cf->vd[0]) < 1e-9) k--;
  if (k == 0) return 0;
  cf->nv = k;
  return 1;
}

/* Rebuilds the polygon from bins[first..]. The "after" samples go first:
 * a callback always follows the GPU time it carries, whichever work that
 * time belongs to, so they are never wrong (short of a clock jump or a
 * drift beyond the prior: then 0 is returned). A "before" sample that
 * contradicts them, or them and the "before" samples already in, is
 * dropped from its bin and counted in `rejected`: it claims a GPU time
 * later than the callbacks allow (a pTimer of another, earlier work). */
static int rebuild_from(ns_clockfit* cf, size_t first) {
  poly_box(cf);
  for (size_t i = first; i < cf->nbins; i++) {
    const ns_cf_bin* b = &cf->bins[i];
    if (!b->has_after) continue;
    if (!poly_clip(cf, b->after_x, b->after_z, -1.0)) return 0;
    cf->have_after = 1;
  }
  for (size_t i = first; i < cf->nbins; i++) {
    ns_cf_bin* b = &cf->bins[i];
    if (!b->has_before) continue;
    if (poly_clip(cf, b->before_x, b->before_z, 1.0)) {
      cf->have_before = 1;
    } else {
      b->has_before = 0;
      cf->rejected++;
    }
  }
  return 1;
}

/* The k-th smallest of v[0..n) (Hoare's selection; reorders v). */
static double select_kth(double* v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = v[lo + (hi - lo) / 2];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return v[k];
  }
  return v[k];
}

/* Median over the bins of one side's residual: how far that side's tightest
 * sample of each bin lies from the polygon's edge on that side (>= 0). */
static double side_residual(ns_clockfit* cf, int before) {
  size_t n = 0;
  for (size_t i = 0; i < cf->nbins; i++) {
    const ns_cf_bin* b = &cf->bins[i];
    if (before ? !b->has_before : !b->has_after) continue;
    double x = before ? b->before_x : b->after_x, z = before ? b->before_z : b->after_z;
    double edge = before ? -INFINITY : INFINITY; /* the polygon's highest (before) or lowest (after) f at x */
    for (size_t v = 0; v < cf->nv; v++) {
      double f = cf->vc[v] + x * cf->vd[v];
      edge = before ? fmax(edge, f) : fmin(edge, f);
    }
    cf->resid[n++] = fmax(0.0, before ? z - edge : edge - z);
  }
  if (n == 0) return 0;
  double upper = select_kth(cf->resid, n, n / 2);
  if (n % 2) return upper;
  /* the lower middle: the largest of the half select_kth left below */
  double lower = cf->resid[0];
  for (size_t i = 1; i < n / 2; i++) lower = fmax(lower, cf->resid[i]);
  return (lower + upper) / 2;
}

/* Where the point estimate sits inside the polygon. Each side's samples
 * are the truth plus a lag (>= 0), and the polygon's edge on a side is its
 * tightest sample, off the truth by that side's shortest lag, which no
 * sample reveals: the midpoint is the estimate whose worst case is least.
 * But the two sides differ by nature. A kernel starts several µs after its
 * launch call began at the very least, while the proxy spins on the pTimers
 * the GPU writes to host memory: on real NCCL 2.28 (one H100) the callbacks
 * trailed the GPU time by under a µs at their tightest while kernels started
 * 6-60 µs after their launch call, and the midpoint was off by the whole
 * half-width (docs/validation/2026-11-26-h100-nccl2.28.9.md). The lean
 * tells which case a fit is in: the callbacks' median residual over the sum
 * of both sides' (each side's tightest sample per time bin, measured from
 * that side's edge), a timer quantum added to each so that sides alike, or
 * a single bin, give 0.5. Well below 0.5 the callbacks hug their edge and
 * the estimate moves towards it (back_from_callbacks). The bound never depends
 * on it: a conversion's error is its distance to the farther end. */
static void update_lean(ns_clockfit* cf) {
  cf->lean = 0.5;
  if (!cf->have_after || !cf->have_before || cf->nv == 0) return;
  double eps = cf->quantum_ns;
  double ra = side_residual(cf, 0) + eps, rb = side_residual(cf, 1) + eps;
  cf->lean = ra / (ra + rb);
}

/* How far before the callbacks' edge (the latest time they allow) the
 * estimate sits, for a set of times `width` wide: the midpoint while the
 * callbacks are less than twice as tight as the launches (lean >= 1/3);
 * the lean's share of the width once they are three times as tight
 * (lean <= 1/4), linear between. Never closer to that edge than
 * CF_CALLBACK_FLOOR plus half a timer quantum: a callback cannot follow the
 * GPU time it carries more closely than the GPU's write takes to reach host
 * memory and the proxy's next poll, and a reading lies up to a quantum
 * below the time. Never past the midpoint towards the launches: a kernel
 * starts some µs after its launch call at the very least (the launch
 * itself), so their edge is never the closer one by nature. */
static double back_from_callbacks(const ns_clockfit* cf, double width) {
  double l = cf->lean, share = l <= 0.25 ? l : l < 1.0 / 3 ? 3 * l - 0.5 : 0.5;
  return fmin(fmax(share * width, CF_CALLBACK_FLOOR + cf->quantum_ns / 2), width / 2);
}

static void drop_oldest(ns_clockfit* cf, size_t k) {
  if (k > cf->nbins) k = cf->nbins;
  memmove(cf->bins, cf->bins + k, (cf->nbins - k) * sizeof *cf->bins);
  cf->nbins -= k;
}

/* Restart after a contradiction: keep the newest bins that agree. */
static void recover(ns_clockfit* cf) {
  cf->resets++;
  while (cf->nbins > 1) {
    drop_oldest(cf, (cf->nbins + 1) / 2);
    if (rebuild_from(cf, 0)) return;
  }
  cf->nbins = 0;
  poly_box(cf);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static void merge_bins(ns_clockfit* cf) {
  size_t k = 0;
  cf->width_ns *= 2;
  for (size_t i = 0; i < cf->nbins; i++) {
    ns_cf_bin b = cf->bins[i];
    b.key = floor_div(b.key, 2);
    if (k > 0 && cf->bins[k - 1].key == b.key) {
      ns_cf_bin* t = &cf->bins[k - 1];
      if (b.has_after && (!t->has_after || b.after_z > t->after_z)) {
        t->has_after = 1;
        t->after_x = b.after_x;
        t->after_z = b.after_z;
      }
      if (b.has_before && (!t->has_before || b.before_z < t->before_z)) {
        t->has_before = 1;
        t->before_x = b.before_x;
        t->before_z = b.before_z;
      }
    } else {
      cf->bins[k++] = b;
    }
  }
  cf->nbins = k;
}

static ns_cf_bin* bin_for(ns_clockfit* cf, int64_t dx_ns) {
  for (;;) {
    int64_t key = floor_div(dx_ns, (int64_t)cf->width_ns);
    size_t lo;
    if (cf->nbins && cf->bins[cf->nbins - 1].key <= key) /* samples come in time order: the newest bin, or after it */
      lo = cf->bins[cf->nbins - 1].key == key ? cf->nbins - 1 : cf->nbins;
    else
      NS_LOWER_BOUND(lo, cf->nbins, i, cf->bins[i].key < key);
    if (lo < cf->nbins && cf->bins[lo].key == key) return &cf->bins[lo];
    if (cf->nbins < cf->cap) {
      memmove(cf->bins + lo + 1, cf->bins + lo, (cf->nbins - lo) * sizeof *cf->bins);
      cf->nbins++;
      memset(&cf->bins[lo], 0, sizeof cf->bins[lo]);
      cf->bins[lo].key = key;
      return &cf->bins[lo];
    }
    merge_bins(cf);
  }
}

/* Forgets bins older than max age (relative to the newest sample). */
static void expire(ns_clockfit* cf) {
  if (cf->max_age_ns == 0 || cf->nbins == 0) return;
  int64_t newest = (int64_t)(cf->newest_cpu - cf->ref_cpu);
  size_t k = 0;
  while (k + 1 < cf->nbins && newest - (cf->bins[k].key + 1) * (int64_t)cf->width_ns > (int64_t)cf->max_age_ns) k++;
  if (k == 0) return;
  drop_oldest(cf, k);
  if (!rebuild_from(cf, 0)) recover(cf);
}

static void add_sample(ns_clockfit* cf, uint64_t cpu, uint64_t gpu, int before) {
  if (!cf->bins) return;
  if (!cf->init) {
    cf->init = 1;
    cf->ref_cpu = cpu;
    cf->ref_gpu = gpu;
    cf->newest_cpu = cpu;
    poly_box(cf);
  }
  cf->samples++;
  size_t nbins_was = cf->nbins;
  uint64_t resets_was = cf->resets;
  int64_t dx = (int64_t)(cpu - cf->ref_cpu);
  int64_t dy = (int64_t)(gpu - cf->ref_gpu);
  double x = (double)dx * 1e-9;
  double z = (double)(dy - dx);
  if (before) z += cf->quantum_ns;
  if (cpu > cf->newest_cpu) cf->newest_cpu = cpu;
  if (cf->max_age_ns && (int64_t)(cf->newest_cpu - cpu) > (int64_t)cf->max_age_ns) return; /* too old */

  if (cf->nv + 2 >= cf->vcap && !rebuild_from(cf, 0)) recover(cf); /* bins bound the vertex count */
  if (before) {
    /* checked against the polygon first: a contradicting sample is not kept */
    if (!poly_clip(cf, x, z, 1.0)) {
      cf->rejected++;
      return;
    }
    cf->have_before = 1;
    ns_cf_bin* b = bin_for(cf, dx);
    if (!b->has_before || z < b->before_z) {
      b->has_before = 1;
      b->before_x = x;
      b->before_z = z;
    }
  } else {
    ns_cf_bin* b = bin_for(cf, dx);
    /* The polygon holds every bin's tightest callback (to within CF_TOL),
     * and f moves by at most dmax * |x - x'| between two times: a callback
     * looser than its bin's by more than that is implied, and clipping by it
     * would change nothing. Most callbacks of a settled fit end here. */
    if (b->has_after && z + cf->dmax * fabs(x - b->after_x) + 2 * CF_TOL <= b->after_z) {
      /* implied */
    } else {
      if (!b->has_after || z > b->after_z) {
        b->has_after = 1;
        b->after_x = x;
        b->after_z = z;
      }
      if (poly_clip(cf, x, z, -1.0))
        cf->have_after = 1;
      else if (!rebuild_from(cf, 0)) /* a "before" sample in use was wrong: rebuild without it */
        recover(cf);
    }
  }
  expire(cf);
  /* the lean is a slow statistic, O(bins x vertices) to compute: refreshed
   * every 1024th sample, after a restart, and while the fit is young (its
   * first 32 bins), when every bin moves it */
  if ((cf->samples & 1023) == 0 || cf->resets != resets_was || (cf->nbins != nbins_was && cf->nbins <= 32))
    update_lean(cf);
}

void ns_cf_add_after(ns_clockfit* cf, uint64_t cpu, uint64_t gpu) { add_sample(cf, cpu, gpu, 0); }
void ns_cf_add_before(ns_clockfit* cf, uint64_t cpu, uint64_t gpu) { add_sample(cf, cpu, gpu, 1); }

static int bounded(const ns_clockfit* cf) { return cf->have_after && cf->have_before; }

int ns_cf_convert(const ns_clockfit* cf, uint64_t gpu, uint64_t* cpu, double* err) {
  if (!cf->init || cf->nv == 0) return 0;
  double y = (double)(int64_t)(gpu - cf->ref_gpu);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < cf->nv; i++) {
    double s = 1.0 + cf->vd[i] * 1e-9;
    double a = (y - cf->vc[i]) / s;
    double b = (y + cf->quantum_ns - cf->vc[i]) / s;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  double back = back_from_callbacks(cf, hi - lo);
  double e = fmax(back, (hi - lo) - back) + CF_NUM_SLACK + cf->slack_ns;
  if (!bounded(cf) || !(e < 1e12)) {
    /* one-sided: report the latest time consistent with the callbacks (the tight side) */
    double best = -INFINITY;
    for (size_t i = 0; i < cf->nv; i++) {
      double s = 1.0 + cf->vd[i] * 1e-9, a = (y - cf->vc[i]) / s;
      if (cf->vc[i] > -CF_BOX_C / 2 && a > best) best = a;
    }
    double mid = isfinite(best) ? best : (lo + hi) / 2;
    if (!isfinite(mid)) return 0;
    *cpu = cf->ref_cpu + (uint64_t)(int64_t)llround(mid);
    *err = INFINITY;
    return 1;
  }
  /* hi is the latest time the callbacks allow, lo the earliest the launches do */
  *cpu = cf->ref_cpu + (uint64_t)(int64_t)llround(hi - back);
  *err = e;
  return 1;
}

void ns_cf_get(const ns_clockfit* cf, ns_clock_fit* out) {
  memset(out, 0, sizeof *out);
  if (!cf->init || cf->nv == 0) return;
  out->valid = 1;
  out->samples = cf->samples;
  out->resets = cf->resets;
  out->rejected = cf->rejected;
  out->ref_cpu_ns = cf->ref_cpu;
  double x1 = INFINITY, x2 = -INFINITY;
  for (size_t i = 0; i < cf->nbins; i++) {
    const ns_cf_bin* b = &cf->bins[i];
    if (b->has_after) x1 = fmin(x1, b->after_x), x2 = fmax(x2, b->after_x);
    if (b->has_before) x1 = fmin(x1, b->before_x), x2 = fmax(x2, b->before_x);
  }
  if (!isfinite(x1)) x1 = x2 = 0;
  double f1lo = INFINITY, f1hi = -INFINITY, f2lo = INFINITY, f2hi = -INFINITY, dlo = INFINITY, dhi = -INFINITY;
  for (size_t i = 0; i < cf->nv; i++) {
    double f1 = cf->vc[i] + cf->vd[i] * x1, f2 = cf->vc[i] + cf->vd[i] * x2;
    f1lo = fmin(f1lo, f1), f1hi = fmax(f1hi, f1);
    f2lo = fmin(f2lo, f2), f2hi = fmax(f2hi, f2);
    dlo = fmin(dlo, cf->vd[i]), dhi = fmax(dhi, cf->vd[i]);
  }
  double c, d;
  /* f's lowest value is the callbacks' edge (the latest CPU time) */
  if (x2 - x1 > 1e-6) {
    double m1 = f1lo + back_from_callbacks(cf, f1hi - f1lo), m2 = f2lo + back_from_callbacks(cf, f2hi - f2lo);
    d = (m2 - m1) / (x2 - x1);
    c = m1 - d * x1;
  } else {
    d = (dlo + dhi) / 2;
    c = f1lo + back_from_callbacks(cf, f1hi - f1lo) - d * x1;
  }
  if (!bounded(cf)) {
    /* one-sided: the lowest line still consistent with the callbacks */
    c = f1lo > -CF_BOX_C / 2 ? f1lo : 0;
    d = 0;
  }
  double e = 0;
  for (size_t i = 0; i < cf->nv; i++) {
    e = fmax(e, fabs(c + d * x1 - (cf->vc[i] + cf->vd[i] * x1)));
    e = fmax(e, fabs(c + d * x2 - (cf->vc[i] + cf->vd[i] * x2)));
  }
  e = e * (1.0 + cf->dmax * 1e-9) + cf->quantum_ns / 2 + CF_NUM_SLACK + cf->slack_ns;
  out->bounded = bounded(cf) && e < 1e12;
  out->error_ns = out->bounded ? e : INFINITY;
  /* readings sit q/2 below the continuous value on average */
  double off = c - cf->quantum_ns / 2;
  out->offset_ns = (int64_t)(cf->ref_gpu - cf->ref_cpu) + (int64_t)llround(off);
  out->drift_ppm = d / 1000.0;
  /* what the samples say about the drift: half the range of feasible drifts
   * (the prior's whole range until samples far enough apart pin it down) */
  out->drift_err_ppm = out->bounded ? (dhi - dlo) / 2 / 1000.0 : INFINITY;
  out->first_ns = cf->ref_cpu + (uint64_t)(int64_t)llround(x1 * 1e9);
  out->last_ns = cf->ref_cpu + (uint64_t)(int64_t)llround(x2 * 1e9);
}
