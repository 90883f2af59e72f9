/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: one timeline for the hosts of a dump directory (see
 * report_clocks.h).
 *
 * A host's map is u = ts + off + drift * (ts - ref), then
 * common(ts) = u + corr + corr_rate * (u - tref):
 * off/drift from its anchors (least squares of realtime - ts over ts when the
 * anchors span at least NS_HC_DRIFT_SPAN_NS and the line passes within
 * NS_HC_ANCHOR_TOL_NS of every one, else their median: on Linux
 * CLOCK_REALTIME - CLOCK_MONOTONIC changes only when the realtime clock is
 * stepped, so anchors off a line mean a step, not a drift), corr and
 * corr_rate from the collectives. The refinement iterates: per collective,
 * each host's median end minus the median of those host medians is one
 * sample of the host's error at that time; the host's correction moves by
 * minus the line through its samples (fit_line: a drift only where the
 * collectives span 1 s and show it beyond 3 standard errors and 2 ppm: a host whose
 * realtime clock drifts with its monotonic one, no NTP, shows it nowhere
 * else); the reference host's correction is then subtracted from all, so it
 * stays on its anchors. Three rounds are plenty (each round only changes
 * which median is the middle one). A host's correction is taken only over
 * NS_HC_MIN_COLLS collectives and when it exceeds NS_HC_SIGNIFICANT times
 * its uncertainty (1.25 x 1.48 x MAD / sqrt(n) of its samples), and only
 * when the ends agree within NS_HC_TIGHT_NS (MAD): ends ms apart (an
 * overloaded host, a model that does not end ranks together) carry biases
 * no median removes. Otherwise its anchors alone place it, and the report
 * says so. */
#include "report/report_clocks.h"

#include "util/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NS_HC_DRIFT_SPAN_NS 1000000000ll /* 1 s of anchors (3 at least) before a drift is fitted ... */
#define NS_HC_ANCHOR_TOL_NS 2000.0        /* ... and taken only if the line explains every anchor this well */
#define NS_HC_ROUNDS 3
#define NS_HC_MIN_COLLS 5       /* collectives before a refinement is taken */
#define NS_HC_SIGNIFICANT 3.0   /* ... and only when it exceeds this many times its uncertainty */
#define NS_HC_TIGHT_NS 50000.0  /* ... and the ends agree this well (MAD): a ring's ranks finish within us */
/* A rate from the collectives is taken only beyond this too: the ends carry
 * biases that change slowly with the load (when callbacks run), which the
 * bins' scatter does not show: under two busy loops on 2 cores
 * e2e.hosts.drift read +0.92 ppm at 11 standard errors where the truth was
 * 0 (the anchors had the drift). A realtime clock under NTP keeps its rate
 * well within it; one without NTP drifts tens of ppm, the case to catch. */
#define NS_HC_RATE_FLOOR 2e-6

typedef struct {
  int64_t ts;  /* an anchor's monotonic ns */
  int64_t off; /* realtime - ts there */
} hc_anchor;

typedef struct {
  double x, y; /* when (common ns - the reference time), the host's error then (ns) */
} hc_pt;

typedef struct {
  char name[256];
  int nfiles;
  hc_anchor* a; /* anchors */
  size_t n, cap;
  /* the fit */
  int64_t ref, base; /* ts of reference, realtime - ts there */
  double drift;      /* d(realtime - ts)/dts */
  int64_t span_ns;
  double spread_ns;  /* the anchors' largest distance from the map (a CLOCK_REALTIME step when large) */
  double corr;       /* ns from the collectives ... */
  double corr_rate;  /* ... + this x (common time - the collectives' reference time): a drift they show */
  /* the refinement */
  hc_pt* samples;   /* per collective: this host's median end - the median over hosts (y), when (x) */
  size_t nsamples, capsamples;
  double fit_a, fit_b; /* the line through them, last round */
  int rate_taken;      /* the collectives showed a drift (fit_b significant) */
  double rate_se;      /* fit_b's standard error (from the bins' scatter about the line) */
  double found_rate;
  double residual_ns, uncert_ns;
  size_t used;
  int applied; /* corr was significant: taken */
  double found; /* the correction the collectives gave, taken or not */
} hc_host;

struct ns_hosts {
  hc_host* v;
  size_t n, cap;
  int refhost;
  int refined;
  int64_t tref; /* common ns: the first collective the refinement saw (corr_rate's origin) */
  int has_tref;
};

ns_hosts* ns_hosts_new(void) { return calloc(1, sizeof(ns_hosts)); }

void ns_hosts_free(ns_hosts* h) {
  if (!h) return;
  for (size_t i = 0; i < h->n; i++) {
    free(h->v[i].a);
    free(h->v[i].samples);
  }
  free(h->v);
  free(h);
}

int ns_hosts_index(ns_hosts* h, const char* name) {
  for (size_t i = 0; i < h->n; i++)
    if (strcmp(h->v[i].name, name) == 0) {
      h->v[i].nfiles++;
      return (int)i;
    }
  hc_host* o;
  NS_ARRAY_PUSH(o, h->v, h->cap, h->n, 8);
  if (!o) return -1;
  snprintf(o->name, sizeof o->name, "%s", name);
  o->nfiles = 1;
  return (int)(h->n - 1);
}

void ns_hosts_anchor(ns_hosts* h, int host, uint64_t ts, int64_t real) {
  if (host < 0 || (size_t)host >= h->n || !ts) return;
  hc_host* o = &h->v[host];
  hc_anchor* grown = ns_array_room(o->a, &o->cap, o->n, sizeof *grown, 16);
  if (!grown) return;
  o->a = grown;
  o->a[o->n++] = (hc_anchor){.ts = (int64_t)ts, .off = real - (int64_t)ts};
}

static int by_i64(const void* a, const void* b) {
  int64_t p = *(const int64_t*)a, q = *(const int64_t*)b;
  return p < q ? -1 : p > q;
}

static int by_double(const void* a, const void* b) {
  double p = *(const double*)a, q = *(const double*)b;
  return p < q ? -1 : p > q;
}

static void fit_host(hc_host* o) {
  o->drift = 0;
  if (!o->n) return;
  int64_t lo = o->a[0].ts, hi = o->a[0].ts;
  for (size_t i = 1; i < o->n; i++) {
    if (o->a[i].ts < lo) lo = o->a[i].ts;
    if (o->a[i].ts > hi) hi = o->a[i].ts;
  }
  o->span_ns = hi - lo;
  o->ref = lo + (hi - lo) / 2;
  int64_t* tmp = malloc(o->n * sizeof *tmp);
  if (!tmp) {
    o->base = o->a[0].off;
    return;
  }
  for (size_t i = 0; i < o->n; i++) tmp[i] = o->a[i].off;
  qsort(tmp, o->n, sizeof *tmp, by_i64);
  o->base = tmp[o->n / 2];
  free(tmp);
  if (o->span_ns < NS_HC_DRIFT_SPAN_NS || o->n < 3) return;
  /* least squares of (off - base) over (ts - ref): small numbers, exact enough in doubles */
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < o->n; i++) {
    double xv = (double)(o->a[i].ts - o->ref), yv = (double)(o->a[i].off - o->base);
    sx += xv, sy += yv, sxx += xv * xv, sxy += xv * yv;
  }
  double n = (double)o->n, den = n * sxx - sx * sx;
  if (den > 0) {
    double drift = (n * sxy - sx * sy) / den, shift = (sy - drift * sx) / n, worst = 0;
    for (size_t i = 0; i < o->n; i++) {
      double r = (double)(o->a[i].off - o->base) - shift - drift * (double)(o->a[i].ts - o->ref);
      if (fabs(r) > worst) worst = fabs(r);
    }
    /* a line that does not explain the anchors (CLOCK_REALTIME stepped during the run): the median stays */
    if (worst <= NS_HC_ANCHOR_TOL_NS) {
      o->drift = drift;
      o->base += (int64_t)llround(shift);
    }
  }
}

/* How far the anchors lie from the map (the collectives' correction aside). */
static void anchor_spread(hc_host* o) {
  o->spread_ns = 0;
  for (size_t i = 0; i < o->n; i++) {
    double r = fabs((double)(o->a[i].off - o->base) - o->drift * (double)(o->a[i].ts - o->ref));
    if (r > o->spread_ns) o->spread_ns = r;
  }
}

void ns_hosts_fit(ns_hosts* h) {
  int best = -1;
  for (size_t i = 0; i < h->n; i++) {
    fit_host(&h->v[i]);
    anchor_spread(&h->v[i]);
    h->v[i].corr = 0;
    h->v[i].corr_rate = 0;
    if (best < 0 || h->v[i].nfiles > h->v[best].nfiles) best = (int)i;
  }
  h->refhost = best < 0 ? 0 : best;
}

int64_t ns_hosts_common(const ns_hosts* h, int host, int64_t ts) {
  if (host < 0 || (size_t)host >= h->n) return ts;
  const hc_host* o = &h->v[host];
  int64_t u = ts + o->base + (int64_t)llround(o->drift * (double)(ts - o->ref));
  return u + (int64_t)llround(o->corr + o->corr_rate * (double)(u - h->tref));
}

/* ---- refinement ---- */

typedef struct {
  ns_hosts* h;
  double* med;   /* per host: median end in this collective (scratch) */
  double* buf;   /* scratch, bufcap */
  size_t bufcap;
  int* count;
  size_t* at; /* per host: where its members go in buf (scratch) */
} refine_ctx;

static void add_sample(hc_host* o, double v, double t) {
  hc_pt* grown = ns_array_room(o->samples, &o->capsamples, o->nsamples, sizeof *grown, 256);
  if (!grown) return;
  o->samples = grown;
  o->samples[o->nsamples++] = (hc_pt){.x = t, .y = v};
}

static double median_of(double* v, size_t n) {
  qsort(v, n, sizeof *v, by_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One collective: per host its median end (on the common timeline, relative
 * to the first member's, so the numbers stay small), and each host's
 * sample: its median minus the median of the host medians. */
static int visit(void* user, const ns_hc_member* m, size_t n) {
  refine_ctx* c = user;
  ns_hosts* h = c->h;
  if (n > c->bufcap) {
    double* nb = realloc(c->buf, n * sizeof *nb);
    if (!nb) return 0;
    c->buf = nb;
    c->bufcap = n;
  }
  int64_t base = ns_hosts_common(h, m[0].host, m[0].end);
  if (!h->has_tref) h->tref = base, h->has_tref = 1;
  /* the members' ends grouped by host, each host's in member order (a counting sort: one pass, not one per host) */
  size_t nh = 0;
  for (size_t hi = 0; hi < h->n; hi++) c->count[hi] = 0;
  for (size_t i = 0; i < n; i++)
    if (m[i].host >= 0 && (size_t)m[i].host < h->n) c->count[m[i].host]++;
  for (size_t hi = 0, at = 0; hi < h->n; hi++) c->at[hi] = at, at += (size_t)c->count[hi];
  for (size_t i = 0; i < n; i++)
    if (m[i].host >= 0 && (size_t)m[i].host < h->n)
      c->buf[c->at[m[i].host]++] = (double)(ns_hosts_common(h, m[i].host, m[i].end) - base);
  for (size_t hi = 0; hi < h->n; hi++) {
    size_t k = (size_t)c->count[hi];
    if (k) c->med[hi] = median_of(c->buf + c->at[hi] - k, k), nh++;
  }
  if (nh < 2) return 0;
  size_t k = 0;
  for (size_t hi = 0; hi < h->n; hi++)
    if (c->count[hi]) c->buf[k++] = c->med[hi];
  double mid = median_of(c->buf, k);
  double when = (double)(base - h->tref) + mid;
  for (size_t hi = 0; hi < h->n; hi++)
    if (c->count[hi]) add_sample(&h->v[hi], c->med[hi] - mid, when);
  return 1;
}

/* The host's error as a line over time, a + b x (x: stimes), robustly: the
 * samples sorted by time in up to NS_HC_BINS bins of equal count, a
 * Theil-Sen line through the bins' medians; its slope is kept only over
 * NS_HC_DRIFT_SPAN_NS, 4+ bins, and when it exceeds NS_HC_SIGNIFICANT times
 * its standard error; a is then the median of (y - b x). Scratch: 2n. */
#define NS_HC_BINS 16
#define NS_HC_BIN_MIN 8 /* samples per bin */
static int by_x(const void* a, const void* b) {
  double p = ((const hc_pt*)a)->x, q = ((const hc_pt*)b)->x;
  return p < q ? -1 : p > q;
}

static void fit_line(hc_host* o, hc_pt* pt, double* tmp) {
  size_t n = o->nsamples;
  memcpy(pt, o->samples, n * sizeof *pt);
  qsort(pt, n, sizeof *pt, by_x);
  size_t nb = n / NS_HC_BIN_MIN;
  if (nb > NS_HC_BINS) nb = NS_HC_BINS;
  double b = 0;
  o->rate_taken = 0;
  o->rate_se = 0;
  if (nb >= 4 && pt[n - 1].x - pt[0].x >= (double)NS_HC_DRIFT_SPAN_NS) {
    double bx[NS_HC_BINS], by[NS_HC_BINS], sx = 0, sy = 0;
    for (size_t i = 0; i < nb; i++) {
      size_t lo = i * n / nb, hi = (i + 1) * n / nb;
      for (size_t k = lo; k < hi; k++) tmp[k - lo] = pt[k].x;
      bx[i] = median_of(tmp, hi - lo);
      for (size_t k = lo; k < hi; k++) tmp[k - lo] = pt[k].y;
      by[i] = median_of(tmp, hi - lo);
      sx += bx[i], sy += by[i];
    }
    double mx = sx / (double)nb, my = sy / (double)nb, sxx = 0, sxy = 0;
    for (size_t i = 0; i < nb; i++) sxx += (bx[i] - mx) * (bx[i] - mx), sxy += (bx[i] - mx) * (by[i] - my);
    if (sxx > 0) {
      /* Theil-Sen: the median of the slopes between every two bins (a few bins biased, by the GPU clock fits
       * still settling at the start of a run, do not tilt it as they tilt least squares) */
      double sl[NS_HC_BINS * (NS_HC_BINS - 1) / 2];
      size_t ns = 0;
      for (size_t i = 0; i < nb; i++)
        for (size_t j = i + 1; j < nb; j++)
          if (bx[j] > bx[i]) sl[ns++] = (by[j] - by[i]) / (bx[j] - bx[i]);
      double slope = ns ? median_of(sl, ns) : sxy / sxx, rss = 0;
      for (size_t i = 0; i < nb; i++) tmp[i] = by[i] - slope * (bx[i] - mx);
      double at = median_of(tmp, nb);
      for (size_t i = 0; i < nb; i++) {
        double r = by[i] - at - slope * (bx[i] - mx);
        rss += r * r;
      }
      double se = sqrt(rss / (double)(nb - 2) / sxx);
      o->rate_se = se;
      if (fabs(slope) > NS_HC_SIGNIFICANT * se && fabs(slope) > NS_HC_RATE_FLOOR) b = slope, o->rate_taken = 1;
    }
  }
  for (size_t k = 0; k < n; k++) tmp[k] = pt[k].y - b * pt[k].x;
  o->fit_a = median_of(tmp, n);
  o->fit_b = b;
}

void ns_hosts_refine(ns_hosts* h, ns_hc_walk walk, void* src) {
  if (h->n < 2) return;
  refine_ctx c = {.h = h};
  c.med = calloc(h->n, sizeof *c.med);
  c.count = calloc(h->n, sizeof *c.count);
  c.at = calloc(h->n, sizeof *c.at);
  c.bufcap = h->n > 256 ? h->n : 256;
  c.buf = malloc(c.bufcap * sizeof *c.buf);
  hc_pt* pt = NULL;
  double* tmp = NULL;
  if (!c.med || !c.count || !c.at || !c.buf) goto out;
  for (int round = 0; round < NS_HC_ROUNDS; round++) {
    for (size_t i = 0; i < h->n; i++) h->v[i].nsamples = 0;
    size_t used = walk(src, visit, &c);
    if (!used) break;
    size_t most = 0;
    for (size_t i = 0; i < h->n; i++)
      if (h->v[i].nsamples > most) most = h->v[i].nsamples;
    free(pt);
    free(tmp);
    pt = malloc(most * sizeof *pt);
    tmp = malloc(most * sizeof *tmp);
    if (!pt || !tmp) break;
    for (size_t i = 0; i < h->n; i++) {
      hc_host* o = &h->v[i];
      o->used = o->nsamples;
      if (!o->nsamples) continue;
      fit_line(o, pt, tmp);
      o->corr -= o->fit_a;
      o->corr_rate -= o->fit_b;
    }
    double ref = h->v[h->refhost].corr, ref_rate = h->v[h->refhost].corr_rate;
    for (size_t i = 0; i < h->n; i++) h->v[i].corr -= ref, h->v[i].corr_rate -= ref_rate;
    h->refined = 1;
  }
  /* what is left: the samples of the last round about its line */
  for (size_t i = 0; i < h->n && tmp; i++) {
    hc_host* o = &h->v[i];
    if (!o->nsamples) continue;
    for (size_t k = 0; k < o->nsamples; k++)
      tmp[k] = fabs(o->samples[k].y - o->fit_a - o->fit_b * o->samples[k].x);
    double mad = median_of(tmp, o->nsamples);
    o->residual_ns = mad;
    o->uncert_ns = 1.2533 * 1.4826 * mad / sqrt((double)o->nsamples);
    /* a correction inside its own noise is not taken: the anchors stay (hosts whose CLOCK_REALTIME agrees
     * to a microsecond would otherwise inherit the noise of the collectives' ends) */
    o->applied = o->nsamples >= NS_HC_MIN_COLLS && mad <= NS_HC_TIGHT_NS &&
                 (fabs(o->corr) > NS_HC_SIGNIFICANT * o->uncert_ns || o->rate_taken);
    o->found = o->corr;
    o->found_rate = o->corr_rate;
    if (!o->applied) o->corr = 0, o->corr_rate = 0;
  }
out:
  free(pt);
  free(tmp);
  free(c.med);
  free(c.count);
  free(c.at);
  free(c.buf);
}

/* ---- output ---- */

/* The host's monotonic clock minus the reference host's, when the host's reads t. */
static int64_t offset_at(const ns_hosts* h, size_t i, int64_t t) {
  int64_t c = ns_hosts_common(h, (int)i, t);
  /* the reference host's ts that maps to the same common time (its map is nearly ts + const) */
  const hc_host* r = &h->v[h->refhost];
  int64_t tr = c - (r->base + (int64_t)llround(r->corr));
  for (int k = 0; k < 3; k++) tr -= ns_hosts_common(h, h->refhost, tr) - c;
  return t - tr;
}

/* ... at the host's anchor reference */
static int64_t offset_to_ref(const ns_hosts* h, size_t i) { return offset_at(h, i, h->v[i].ref); }

/* How much faster the host's clock runs than the reference host's, ppm (over its anchors' span, or 1 s). */
static double rate_to_ref(const ns_hosts* h, size_t i) {
  const hc_host* o = &h->v[i];
  int64_t half = o->span_ns > 2000000000ll ? o->span_ns / 2 : 1000000000ll;
  return (double)(offset_at(h, i, o->ref + half) - offset_at(h, i, o->ref - half)) / (double)(2 * half) * 1e6;
}

void ns_hosts_text(const ns_hosts* h, int wide, FILE* out) {
  fprintf(out, "\n# hosts: clocks aligned from CLOCK_REALTIME anchors, refined from the collectives (reference: %s)\n",
              h->n ? h->v[h->refhost].name : "none");
  if (wide)
    fprintf(out, "# %-24s %5s %8s %20s %10s %11s %14s %12s %13s %11s\n", "host", "files", "anchors", "clock - ref(us)",
            "rate(ppm)", "spread(us)", "refined by(us)", "residual(us)", "uncertain(us)", "collectives");
  else
    fprintf(out, "# %-20s %5s %7s %16s %9s %10s %11s %10s %10s %6s\n", "host", "files", "anchors", "clock-ref(us)",
            "rate(ppm)", "spread(us)", "refined(us)", "resid(us)", "uncert(us)", "colls");
  fprintf(out, "#   (rate: how much faster than the reference host's clock; spread: the anchors' largest distance\n"
               "#   from the fit, large after a CLOCK_REALTIME step; refined by: from the collectives' ends, '-' after\n"
               "#   it: within its noise, not taken)\n");
  for (size_t i = 0; i < h->n; i++) {
    const hc_host* o = &h->v[i];
    fprintf(out,
            wide ? "  %-24s %5d %8zu %20.3f %10.3f %11.3f %13.3f%c %12.3f %13.3f %11zu\n"
                 : "  %-20s %5d %7zu %16.3f %9.3f %10.3f %10.3f%c %10.3f %10.3f %6zu\n",
            o->name, o->nfiles, o->n, (double)offset_to_ref(h, i) / 1e3, rate_to_ref(h, i), o->spread_ns / 1e3,
            o->found / 1e3, o->applied || !o->used ? ' ' : '-', o->residual_ns / 1e3, o->uncert_ns / 1e3, o->used);
  }
}

void ns_hosts_json(const ns_hosts* h, ns_json* j) {
  nsj_key(j, "hosts");
  nsj_arr_begin(j);
  for (size_t i = 0; i < h->n; i++) {
    const hc_host* o = &h->v[i];
    nsj_obj_begin(j);
    nsj_kstr(j, "host", o->name);
    nsj_kbool(j, "reference", (int)i == h->refhost);
    nsj_ku64(j, "files", (uint64_t)o->nfiles);
    nsj_ku64(j, "anchors", o->n);
    nsj_ki64(j, "clockOffsetNs", offset_to_ref(h, i));
    nsj_ki64(j, "clockOffsetAtNs", o->ref);
    nsj_kf64(j, "clockRatePpm", rate_to_ref(h, i));
    nsj_kf64(j, "driftPpm", o->drift * 1e6);
    nsj_kf64(j, "anchorSpanSec", (double)o->span_ns / 1e9);
    nsj_kf64(j, "anchorSpreadNs", o->spread_ns);
    nsj_kf64(j, "refinedNs", o->found);
    /* how much faster the collectives say this clock runs than its anchors do (the map takes it out) */
    nsj_kf64(j, "refinedRatePpm", -o->found_rate * 1e6);
    nsj_kf64(j, "refinedRateErrorPpm", o->rate_se * 1e6); /* its standard error */
    nsj_kbool(j, "refinementTaken", o->applied);
    nsj_kf64(j, "residualNs", o->residual_ns);
    nsj_kf64(j, "uncertaintyNs", o->uncert_ns);
    nsj_ku64(j, "collectives", o->used);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}
