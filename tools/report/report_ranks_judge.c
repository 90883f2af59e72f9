/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: each collective judged across its ranks
 * (report_ranks_judge.h).
 *
 * Outliers (lateness): a rank is named when its median lateness is at least
 * NS_XR_LATE_FLOOR_NS and more than NS_XR_LATE_MADS robust deviations (1.4826
 * x the median absolute deviation of all ranks' medians) above the median
 * rank, over at least NS_XR_LATE_MIN_OPS collectives, and it arrived last
 * more often than chance (NS_XR_LAST_Z_MIN: with 8 ranks the deviation of
 * the medians is a poor scale, and one rank of a starved process stands out
 * by it alone); or, with the same
 * floor, when it arrived last at so many collectives that chance (each rank
 * last as often) is NS_XR_LAST_Z standard deviations away: on a loaded host
 * the ranks' medians scatter by milliseconds, and the deviation rule alone
 * misses a rank that is late at nearly every collective. The floor keeps the
 * launch jitter of a busy host (tens to a few hundred us) from naming anyone
 * when no rank is late. */
#include "report/report_ranks_judge.h"

#include <math.h>
#include <string.h>

#include "report/report_ranks_walk.h"

static void push_late(ns_xrank_rank* r, double v, double bound) {
  if (!r->late) {
    r->late = malloc((r->nops ? r->nops : 1) * sizeof *r->late);
    r->late_bound = malloc((r->nops ? r->nops : 1) * sizeof *r->late_bound);
    if (!r->late || !r->late_bound) {
      free(r->late);
      free(r->late_bound);
      r->late = NULL;
      r->late_bound = NULL;
      return;
    }
  }
  if (r->n >= r->nops) return; /* one per collective it posted: never */
  r->late[r->n] = v;
  r->late_bound[r->n++] = (float)bound;
}

/* Whether rank r of c posted anything of func after seq (its ops are in
 * order: the last one of func has the largest seq). */
static int posted_later(const ns_xrank_comm* c, int16_t func, uint64_t seq, int32_t r) {
  const ns_xrank_rank* rk = &c->ranks[r];
  size_t a = 0, b = rk->nops;
  while (a < b) { /* the first op of a later func */
    size_t m = (a + b) / 2;
    if (rk->ops[m].func <= func)
      a = m + 1;
    else
      b = m;
  }
  return a > 0 && rk->ops[a - 1].func == func && rk->ops[a - 1].seq > seq;
}

/* One collective of communicator c (index ci): its ops m[0, nm), by rank.
 * Scratch: t and late have room for 2 x nranks, who, bnd and seen for nranks;
 * seen is all 0 before and after. */
static void one_collective(ns_xr* x, ns_xrank_comm* c, uint32_t ci, const ns_xrank_member* m, size_t nm, int64_t* t,
                           double* late, int32_t* who, double* bnd, uint8_t* seen) {
  size_t n = 0, episodes = 0;
  double waited = 0;
  int16_t func = m[0].op->func;
  uint64_t seq = m[0].op->seq;
  size_t elo, ehi;
  ns_xrank_episodes_of(x, ci, func, seq, &elo, &ehi);
  /* seen per rank: 1 posted (a START), 2 never finished, 4 stuck past the hang timeout (an episode) */
  for (size_t i = 0; i < nm; i++) {
    const ns_xrank_op* p = m[i].op;
    int32_t r = m[i].rank;
    uint8_t was = seen[r];
    seen[r] |= (uint8_t)(1 | (p->flags & NS_XRANK_STUCK ? 2 : 0) | (p->flags & NS_XRANK_EPISODE ? 4 : 0) |
                         ((p->flags & (NS_XRANK_DONE | NS_XRANK_FR)) == (NS_XRANK_DONE | NS_XRANK_FR) ? 16 : 0));
    if (p->flags & NS_XRANK_EPISODE) continue;
    /* one arrival per rank: its trace's (sorted first), not a flight record's or a replay's */
    if ((was & 1) || !p->arr || n >= c->nranks) continue;
    who[n] = r;
    bnd[n] = p->gpu_err_ns;
    t[n++] = ns_xrank_common(x, p, p->arr);
  }
  /* a rank whose flight record says it completed it was not stuck (an episode the record's writer did not
   * mark cleared); a trace's end of it does not say so: a rank that gave up ends it too */
  for (size_t i = 0; i < nm; i++)
    if (seen[m[i].rank] & 16) seen[m[i].rank] &= (uint8_t)~6u;
  size_t posted = 0;
  for (size_t i = 0; i < nm; i++) {
    int32_t r = m[i].rank;
    if (seen[r] & 8) continue; /* 8: counted */
    seen[r] |= 8;
    posted++;
    if (!(seen[r] & 4)) continue;
    episodes++;
    for (size_t e = ns_xrank_episode_of_rank(x, elo, ehi, r); e < ehi && x->eps[e].rank == r; e++)
      if (x->eps[e].waited > waited) waited = x->eps[e].waited;
  }
  for (size_t i = 0; i < nm; i++) seen[m[i].rank] &= 7;
  /* the last collective each rank completed (not one it was stuck in) */
  for (size_t i = 0; i < nm; i++) {
    const ns_xrank_op* p = m[i].op;
    if (!(p->flags & NS_XRANK_DONE) || (seen[m[i].rank] & 6)) continue;
    ns_xrank_rank* r = &c->ranks[m[i].rank];
    int64_t e = ns_xrank_common(x, p, p->end ? p->end : p->arr);
    if (!r->has_last || e > r->last_end) r->has_last = 1, r->last_end = e, r->last_func = p->func, r->last_seq = p->seq;
  }
  /* crossRank and lateness: the collectives seen with 2+ arrivals */
  if (n >= 2) {
    size_t last = 0, first = 0;
    for (size_t k = 1; k < n; k++) {
      if (t[k] >= t[last]) last = k;
      if (t[k] < t[first]) first = k;
    }
    int64_t second = INT64_MIN;
    for (size_t k = 0; k < n; k++)
      if (k != last && t[k] > second) second = t[k];
    c->compared++;
    if (n < c->nranks) c->partial++;
    uint64_t spread = (uint64_t)(t[last] - t[first]);
    c->spread_sum_ns += spread;
    if (spread > c->spread_max_ns) c->spread_max_ns = spread;
    c->ranks[who[last]].last_count++;
    c->ranks[who[last]].gap_sum_ns += (uint64_t)(t[last] - second);
    for (size_t k = 0; k < n; k++) late[k] = (double)(t[k] - t[first]); /* small: exact in a double */
    memcpy(late + n, late, n * sizeof *late);
    qsort(late + n, n, sizeof *late, ns_xrank_by_double);
    double med = n % 2 ? late[n + n / 2] : (late[n + n / 2 - 1] + late[n + n / 2]) / 2;
    for (size_t k = 0; k < n; k++) push_late(&c->ranks[who[k]], late[k] - med, bnd[k]);
    c->ops_late++;
  }
  /* a hang? a rank of a complete record that posted neither this nor anything later of its function */
  int never = 0;
  if (posted && posted < c->nranks)
    for (uint32_t r = 0; r < c->nranks; r++)
      if (!seen[r] && c->ranks[r].clean && !posted_later(c, func, seq, (int32_t)r)) never++;
  int64_t when = INT64_MAX;
  for (size_t k = 0; k < n; k++)
    if (t[k] < when) when = t[k];
  if (episodes || never) c->hang_candidates++;
  /* the earliest one is the hang; later ones follow from it */
  if ((episodes || never) && !(c->hang && when >= c->hang_arr)) {
    c->hang = 1;
    c->hang_func = func;
    c->hang_seq = seq;
    c->hang_arr = when;
    c->hang_by_fr = episodes > 0;
    c->hang_waited = waited;
    if (!c->posted) c->posted = malloc(c->nranks * sizeof *c->posted);
    if (c->posted) {
      for (uint32_t r = 0; r < c->nranks; r++) c->posted[r] = INT64_MIN;
      for (size_t k = 0; k < n; k++) c->posted[who[k]] = t[k];
    }
    for (uint32_t r = 0; r < c->nranks; r++) {
      ns_xrank_rank* rk = &c->ranks[r];
      uint8_t sr = seen[r]; /* 0 for a rank with no op in it */
      if (sr & 6)
        c->state[r] = NS_XRANK_S_STUCK;
      else if (sr & 1)
        c->state[r] = NS_XRANK_S_DONE;
      else if (rk->clean)
        c->state[r] = NS_XRANK_S_NEVER;
      else
        c->state[r] = NS_XRANK_S_UNKNOWN;
      rk->waits_for[0] = 0;
    }
    for (size_t e = elo; e < ehi; e++)
      snprintf(c->ranks[x->eps[e].rank].waits_for, sizeof c->ranks[x->eps[e].rank].waits_for, "%s",
               x->eps[e].waits_for);
  }
  for (size_t i = 0; i < nm; i++) seen[m[i].rank] = 0;
}

/* Per rank: median and p99 lateness, the median bound of its arrivals; the outliers. */
static void stats_of(ns_xrank_comm* c) {
  double* m = calloc(c->nranks ? c->nranks : 1, sizeof *m);
  size_t nm = 0, most = 0;
  for (uint32_t r = 0; r < c->nranks; r++)
    if (c->ranks[r].n > most) most = c->ranks[r].n;
  double* v = malloc((most ? most : 1) * sizeof *v);
  for (uint32_t r = 0; r < c->nranks && v; r++) {
    ns_xrank_rank* rk = &c->ranks[r];
    if (!rk->n) continue;
    for (size_t i = 0; i < rk->n; i++) v[i] = rk->late_bound[i];
    qsort(v, rk->n, sizeof *v, ns_xrank_by_double); /* INFINITY sorts last */
    rk->bound_median_ns = ns_xrank_sorted_median(v, rk->n);
    for (size_t i = 0; i < rk->n; i++) v[i] = rk->late[i];
    qsort(v, rk->n, sizeof *v, ns_xrank_by_double);
    rk->median_ns = ns_xrank_sorted_median(v, rk->n);
    size_t k = (size_t)(0.99 * (double)rk->n);
    rk->p99_ns = v[k < rk->n ? k : rk->n - 1];
    if (m) m[nm++] = rk->median_ns;
  }
  free(v);
  if (!m || nm < 3) {
    free(m);
    return;
  }
  qsort(m, nm, sizeof *m, ns_xrank_by_double);
  double mid = m[nm / 2];
  for (size_t i = 0; i < nm; i++) m[i] = fabs(m[i] - mid);
  qsort(m, nm, sizeof *m, ns_xrank_by_double);
  double sigma = 1.4826 * m[nm / 2];
  free(m);
  for (uint32_t r = 0; r < c->nranks; r++) {
    ns_xrank_rank* rk = &c->ranks[r];
    double over = rk->median_ns - mid;
    /* how unlikely its share of being last is if every rank were last as often (binomial, p = 1/ranks seen) */
    double p = 1.0 / (double)nm, np = (double)c->compared * p;
    double z = np > 0 ? ((double)rk->last_count - np) / sqrt(np * (1 - p)) : 0;
    rk->outlier = rk->n >= NS_XR_LATE_MIN_OPS && over >= NS_XR_LATE_FLOOR_NS &&
                  ((over > NS_XR_LATE_MADS * sigma && z >= NS_XR_LAST_Z_MIN) || z >= NS_XR_LAST_Z);
  }
}

/* Marks the ranks whose record is complete, walks every communicator's collectives, then the per rank statistics. */
void ns_xrank_judge(ns_xr* x) {
  size_t max_ranks = 1;
  for (size_t i = 0; i < x->ncomms; i++)
    if (x->comms[i].nranks > max_ranks) max_ranks = x->comms[i].nranks;
  int64_t* t = malloc(max_ranks * sizeof *t);
  double* late = malloc(2 * max_ranks * sizeof *late);
  int32_t* who = malloc(max_ranks * sizeof *who);
  double* bnd = malloc(max_ranks * sizeof *bnd);
  uint8_t* seen = calloc(max_ranks, 1);
  if (!t || !late || !who || !bnd || !seen) goto out;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++) {
      ns_xrank_rank* rk = &x->comms[i].ranks[r];
      if (rk->has_trace && rk->file >= 0 && x->files[rk->file].clean_end) rk->clean = 1;
    }
  for (size_t i = 0; i < x->ncomms; i++) {
    ns_xrank_comm* c = &x->comms[i];
    ns_xrank_cursor k;
    if (!c->nops || ns_xrank_cursor_init(&k, c)) continue;
    if (!c->state) c->state = calloc(c->nranks, 1);
    while (c->state && ns_xrank_cursor_next(&k)) one_collective(x, c, (uint32_t)i, k.m, k.nm, t, late, who, bnd, seen);
    ns_xrank_cursor_free(&k);
  }
  for (size_t i = 0; i < x->ncomms; i++) {
    stats_of(&x->comms[i]);
    x->nhangs += x->comms[i].hang;
  }
out:
  free(t);
  free(late);
  free(who);
  free(bnd);
  free(seen);
}
