/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: the collectives in order (report_ranks_walk.h). */
#include "report/report_ranks_walk.h"

#include <string.h>

/* Whether p comes before q in a rank's list. */
static int op_before(const ns_xrank_op* p, const ns_xrank_op* q) {
  if (p->func != q->func) return p->func < q->func;
  if (p->seq != q->seq) return p->seq < q->seq;
  return (p->flags & NS_XRANK_FR) < (q->flags & NS_XRANK_FR);
}

/* Sorts v[0, n) stably (ops of one key keep the order they came in); tmp has room for n. Most lists come in order. */
static void sort_ops(ns_xrank_op* v, size_t n, ns_xrank_op* tmp) {
  size_t i = 1;
  while (i < n && !op_before(&v[i], &v[i - 1])) i++;
  if (i >= n) return;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = op_before(&v[b], &v[a]) ? v[b++] : v[a++];
      while (a < mid) tmp[k++] = v[a++];
      while (b < hi) tmp[k++] = v[b++];
    }
    memcpy(v, tmp, n * sizeof *v);
  }
}

static int by_episode(const void* a, const void* b) {
  const ns_xrank_episode *p = a, *q = b;
  if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
  if (p->func != q->func) return p->func < q->func ? -1 : 1;
  if (p->seq != q->seq) return p->seq < q->seq ? -1 : 1;
  if (p->rank != q->rank) return p->rank < q->rank ? -1 : 1;
  return p->order < q->order ? -1 : p->order > q->order; /* the order they were read in */
}

/* Every rank's ops and the episodes in order; 0, or -1 when out of memory. */
int ns_xrank_sort_all(ns_xr* x) {
  size_t most = 0;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++)
      if (x->comms[i].ranks[r].nops > most) most = x->comms[i].ranks[r].nops;
  ns_xrank_op* tmp = malloc((most ? most : 1) * sizeof *tmp);
  if (!tmp) return -1;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++) {
      ns_xrank_rank* rk = &x->comms[i].ranks[r];
      sort_ops(rk->ops, rk->nops, tmp);
    }
  free(tmp);
  if (x->neps) qsort(x->eps, x->neps, sizeof *x->eps, by_episode);
  return 0;
}

/* The episodes of collective (func, seq) of communicator comm: [*lo, *hi) of eps. */
void ns_xrank_episodes_of(const ns_xr* x, uint32_t comm, int16_t func, uint64_t seq, size_t* lo, size_t* hi) {
  size_t a = 0, b = x->neps;
  while (a < b) {
    size_t m = (a + b) / 2;
    const ns_xrank_episode* e = &x->eps[m];
    if (e->comm < comm || (e->comm == comm && (e->func < func || (e->func == func && e->seq < seq))))
      a = m + 1;
    else
      b = m;
  }
  *lo = a;
  while (a < x->neps && x->eps[a].comm == comm && x->eps[a].func == func && x->eps[a].seq == seq) a++;
  *hi = a;
}

/* The first of eps[lo, hi) (one collective's, by rank) of rank r or a higher one. */
size_t ns_xrank_episode_of_rank(const ns_xr* x, size_t lo, size_t hi, int32_t r) {
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (x->eps[m].rank < r)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

#define NS_XRANK_PREFETCH 16 /* ranks ahead */

void ns_xrank_cursor_free(ns_xrank_cursor* k) {
  free(k->ops);
  free(k->nops);
  free(k->at);
  free(k->live);
  free(k->m);
}

/* 0, or -1 when out of memory. */
int ns_xrank_cursor_init(ns_xrank_cursor* k, ns_xrank_comm* c) {
  memset(k, 0, sizeof *k);
  k->c = c;
  size_t n = c->nranks ? c->nranks : 1;
  k->ops = malloc(n * sizeof *k->ops);
  k->nops = malloc(n * sizeof *k->nops);
  k->at = calloc(n, sizeof *k->at);
  k->live = malloc(n * sizeof *k->live);
  if (!k->ops || !k->nops || !k->at || !k->live) {
    ns_xrank_cursor_free(k);
    return -1;
  }
  for (uint32_t r = 0; r < c->nranks; r++) {
    const ns_xrank_rank* rk = &c->ranks[r];
    k->ops[r] = rk->ops;
    k->nops[r] = rk->nops;
    if (!rk->nops) continue;
    if (!k->nlive || ns_xrank_key_less(rk->ops[0].func, rk->ops[0].seq, k->func, k->seq))
      k->func = rk->ops[0].func, k->seq = rk->ops[0].seq;
    k->live[k->nlive++] = r;
  }
  return 0;
}

/* The next collective into k->m; 0 when there is none (or out of memory). One pass over the live ranks
 * takes the collective's ops and finds the next key. */
int ns_xrank_cursor_next(ns_xrank_cursor* k) {
  if (!k->nlive) return 0;
  int16_t f = k->func, nf = 0;
  uint64_t s = k->seq, ns = 0;
  size_t kept = 0;
  int have_next = 0;
  k->nm = 0;
  for (size_t i = 0; i < k->nlive; i++) {
    if (i + NS_XRANK_PREFETCH < k->nlive) { /* each rank's next op is a cache miss of its own: ask for it early */
      uint32_t ahead = k->live[i + NS_XRANK_PREFETCH];
      __builtin_prefetch(&k->ops[ahead][k->at[ahead]]);
    }
    uint32_t r = k->live[i];
    ns_xrank_op* ops = k->ops[r];
    size_t a = k->at[r], end = k->nops[r];
    while (a < end && ops[a].func == f && ops[a].seq == s) {
      if (ns_xrank_grow((void**)&k->m, &k->capm, k->nm, sizeof *k->m)) return 0;
      k->m[k->nm++] = (ns_xrank_member){.rank = (int32_t)r, .op = &ops[a]};
      a++;
    }
    k->at[r] = a;
    if (a == end) continue;
    if (!have_next || ns_xrank_key_less(ops[a].func, ops[a].seq, nf, ns)) nf = ops[a].func, ns = ops[a].seq;
    have_next = 1;
    k->live[kept++] = r;
  }
  k->nlive = kept;
  k->func = nf;
  k->seq = ns;
  return k->nm > 0;
}

/* ---- what the clock refinement needs: each collective's ranks that completed it ---- */

size_t ns_xrank_walk_collectives(void* src, ns_hc_visit fn, void* user) {
  ns_xr* x = src;
  size_t used = 0, cap = 0;
  ns_hc_member* m = NULL;
  for (size_t ci = 0; ci < x->ncomms; ci++) {
    ns_xrank_cursor k;
    if (!x->comms[ci].nops || ns_xrank_cursor_init(&k, &x->comms[ci])) continue;
    while (ns_xrank_cursor_next(&k)) {
      if (k.nm > cap) {
        ns_hc_member* nm = realloc(m, k.nm * sizeof *nm);
        if (!nm) break;
        m = nm;
        cap = k.nm;
      }
      size_t n = 0;
      for (size_t i = 0; i < k.nm; i++) {
        const ns_xrank_op* p = k.m[i].op;
        if ((p->flags & NS_XRANK_FR) || !(p->flags & NS_XRANK_DONE) || !p->arr || !p->end) continue;
        if (i > 0 && k.m[i - 1].rank == k.m[i].rank) continue; /* one per rank */
        m[n++] = (ns_hc_member){.host = x->files[p->file].host_idx, .arr = p->arr, .end = p->end};
      }
      if (n >= 2) used += fn(user, m, n) ? 1 : 0;
    }
    ns_xrank_cursor_free(&k);
  }
  free(m);
  return used;
}
