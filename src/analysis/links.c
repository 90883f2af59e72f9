/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: per-link regression of transfer time over size
 * (see links.h). Runs on the thread that owns the ns_analysis.
 *
 * time_us = latency_us + size / (bandwidth_GBs * 1e3): the slope is us per
 * byte, so bandwidth in GB/s (1e9 B/s) is 1e-3 / slope.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/links.h"
#include "util/array.h"

void ns_moments_add(ns_moments* m, double x, double y) {
  m->n += 1;
  double dx = x - m->mx, dy = y - m->my;
  m->mx += dx / m->n;
  m->my += dy / m->n;
  m->sxx += dx * (x - m->mx);
  m->syy += dy * (y - m->my);
  m->sxy += dx * (y - m->my);
}

void ns_moments_merge(ns_moments* dst, const ns_moments* src) {
  if (src->n == 0) return;
  if (dst->n == 0) {
    *dst = *src;
    return;
  }
  double n = dst->n + src->n;
  double dx = src->mx - dst->mx, dy = src->my - dst->my;
  double f = dst->n * src->n / n;
  dst->sxx += src->sxx + dx * dx * f;
  dst->syy += src->syy + dy * dy * f;
  dst->sxy += src->sxy + dx * dy * f;
  dst->mx += dx * src->n / n;
  dst->my += dy * src->n / n;
  dst->n = n;
}

void ns_moments_fit(const ns_moments* m, ns_regression* out, uint64_t n) {
  memset(out, 0, sizeof *out);
  out->n = n;
  if (m->n < 2 || !(m->sxx > 0)) {
    out->latency_us = m->n > 0 ? m->my : 0;
    return;
  }
  double slope = m->sxy / m->sxx;
  out->latency_us = m->my - slope * m->mx;
  out->r2 = m->syy > 0 ? (m->sxy * m->sxy) / (m->sxx * m->syy) : 1.0;
  if (slope > 0) {
    out->bandwidth_gbs = 1e-3 / slope;
    out->ok = 1;
  }
}

void ns_linkacc_init(ns_linkacc* l) { memset(l, 0, sizeof *l); }

void ns_linkacc_free(ns_linkacc* l) {
  free(l->mins);
  memset(l, 0, sizeof *l);
}

/* 16 classes per power of two once there are too many distinct sizes. */
static uint64_t size_class(uint64_t s) {
  if (s < 16) return s;
  int e = 63 - __builtin_clzll(s);
  return ((uint64_t)e << 4) | ((s >> (e - 4)) & 15);
}

static void min_put(ns_linkacc* l, uint64_t key, double x, double y, uint64_t n) {
  size_t lo;
  NS_LOWER_BOUND(lo, l->nmins, i, l->mins[i].key < key);
  if (lo < l->nmins && l->mins[lo].key == key) {
    l->mins[lo].n += n;
    if (y < l->mins[lo].y) {
      l->mins[lo].x = x;
      l->mins[lo].y = y;
    }
    return;
  }
  ns_minpt* grown = ns_array_room(l->mins, &l->cap, l->nmins, sizeof *grown, 8);
  if (!grown) return; /* allocation failure: the MIN fit loses this size */
  l->mins = grown;
  memmove(l->mins + lo + 1, l->mins + lo, (l->nmins - lo) * sizeof *l->mins);
  l->mins[lo] = (ns_minpt){key, x, y, n};
  l->nmins++;
}

static void to_classes(ns_linkacc* l) {
  ns_minpt* old = l->mins;
  size_t n = l->nmins;
  l->mins = NULL;
  l->nmins = l->cap = 0;
  l->classed = 1;
  for (size_t i = 0; i < n; i++) min_put(l, size_class((uint64_t)old[i].x), old[i].x, old[i].y, old[i].n);
  free(old);
}

static void min_add(ns_linkacc* l, uint64_t size, double x, double y, uint64_t n) {
  if (!l->classed && l->nmins >= NS_LINK_MAX_SIZES) to_classes(l);
  min_put(l, l->classed ? size_class(size) : size, x, y, n);
}

void ns_linkacc_add(ns_linkacc* l, uint64_t size, double time_us, int queued) {
  ns_moments_add(&l->all, (double)size, time_us);
  if (!queued) min_add(l, size, (double)size, time_us, 1);
  l->bytes += size;
  l->steps++;
  l->time_us_sum += time_us;
}

void ns_linkacc_merge(ns_linkacc* dst, const ns_linkacc* src) {
  ns_moments_merge(&dst->all, &src->all);
  for (size_t i = 0; i < src->nmins; i++) min_add(dst, (uint64_t)src->mins[i].x, src->mins[i].x, src->mins[i].y, src->mins[i].n);
  dst->bytes += src->bytes;
  dst->steps += src->steps;
  dst->time_us_sum += src->time_us_sum;
}

const char* ns_link_nofit_reason(int nofit) {
  switch (nofit) {
    case NS_LINK_FIT: return "";
    case NS_LINK_FEW_SIZES: return "fewer than 3 sizes seen 4 times";
    case NS_LINK_NARROW: return "sizes span less than 4x";
    case NS_LINK_NOT_LINEAR: return "time does not grow with size from a positive latency";
    default: return "?";
  }
}

/* The sizes a fit may use: count, smallest, largest. */
static size_t fit_sizes(const ns_linkacc* l, uint64_t need, double* lo, double* hi) {
  size_t q = 0;
  *lo = INFINITY;
  *hi = 0;
  for (size_t i = 0; i < l->nmins; i++) {
    if (l->mins[i].n < need) continue;
    q++;
    *lo = fmin(*lo, l->mins[i].x);
    *hi = fmax(*hi, l->mins[i].x);
  }
  return q;
}

static int valid(const ns_regression* r) { return r->ok && r->latency_us >= 0; }

int ns_linkacc_fit(const ns_linkacc* l, ns_regression* avg, ns_regression* min) {
  ns_moments_fit(&l->all, avg, l->steps);
  ns_moments m;
  memset(&m, 0, sizeof m);
  uint64_t used = 0;
  for (size_t i = 0; i < l->nmins; i++) {
    if (l->mins[i].n < NS_LINK_MIN_SEEN) continue;
    ns_moments_add(&m, l->mins[i].x, l->mins[i].y);
    used++;
  }
  ns_moments_fit(&m, min, used);
  double lo, hi, alo, ahi;
  size_t q = fit_sizes(l, NS_LINK_MIN_SEEN, &lo, &hi);
  size_t all = fit_sizes(l, 1, &alo, &ahi);
  /* AVG needs the sizes too, though not repeated ones: it averages */
  if (all < NS_LINK_FIT_SIZES || ahi < NS_LINK_FIT_SPAN * alo || !valid(avg)) avg->ok = 0;
  int why = NS_LINK_FIT;
  if (q < NS_LINK_FIT_SIZES)
    why = NS_LINK_FEW_SIZES;
  else if (hi < NS_LINK_FIT_SPAN * lo)
    why = NS_LINK_NARROW;
  else if (!valid(min))
    why = NS_LINK_NOT_LINEAR;
  if (why != NS_LINK_FIT) min->ok = avg->ok = 0;
  return why;
}

uint32_t ns_linkacc_sizes(const ns_linkacc* l, ns_link_size* out, size_t max) {
  /* the max most frequent, kept in size order (mins is sorted by key, i.e. by size) */
  size_t k = 0;
  for (size_t i = 0; i < l->nmins; i++) {
    ns_link_size s = {(uint64_t)l->mins[i].x, l->mins[i].y, l->mins[i].n};
    if (k < max) {
      out[k++] = s;
      continue;
    }
    size_t least = 0; /* replace the least frequent if this one is more frequent */
    for (size_t j = 1; j < k; j++)
      if (out[j].n < out[least].n) least = j;
    if (s.n <= out[least].n) continue;
    memmove(out + least, out + least + 1, (k - least - 1) * sizeof *out);
    out[k - 1] = s;
  }
  return (uint32_t)l->nmins;
}
