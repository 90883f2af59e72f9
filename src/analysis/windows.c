/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: aggregation windows.
 *
 * Runs on the thread that owns the ns_analysis. A window collects the
 * operations that *started* in it (time: [start, start + window_sec); count:
 * window_ops starts), together with every child of those operations, so a
 * window never splits an operation from its children: it is closed only
 * once every operation attributed to it is final (or after max_age_ns), and
 * grace_ns after its end so late-arriving starts still find it.
 * Totals for the summary are merged from the same accumulators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

static uint64_t win_ns(const ns_analysis* a) {
  return a->cfg.window_sec > 0 ? (uint64_t)(a->cfg.window_sec * 1e9) : 0;
}

static ns_win* new_window(ns_analysis* a, uint64_t start, uint64_t index) {
  ns_win* grown = ns_array_room(a->wins, &a->capwins, a->nwins, sizeof *grown, 4);
  if (!grown) return a->nwins ? &a->wins[a->nwins - 1] : NULL;
  a->wins = grown;
  if (a->nwins) a->wins[a->nwins - 1].closing = 1;
  ns_win* w = &a->wins[a->nwins++];
  memset(w, 0, sizeof *w);
  w->index = index;
  w->start_ns = start;
  uint64_t len = win_ns(a);
  w->end_ns = len ? start + len : UINT64_MAX;
  a->next_win_index = index + 1;
  return w;
}

static ns_win* find_window(ns_analysis* a, uint64_t index) {
  for (size_t i = a->nwins; i-- > 0;)
    if (a->wins[i].index == index) return &a->wins[i];
  return NULL;
}

static ns_win* current(ns_analysis* a, uint64_t ts) {
  uint64_t len = win_ns(a);
  if (!a->have_origin) {
    a->have_origin = 1;
    a->origin = ts;
  }
  if (a->nwins == 0) {
    uint64_t idx = a->next_win_index, start = ts;
    if (len && ts >= a->origin) {
      idx = (ts - a->origin) / len;
      if (idx < a->next_win_index) idx = a->next_win_index;
      start = a->origin + idx * len;
      if (start > ts) start = ts;
    }
    return new_window(a, start, idx);
  }
  ns_win* cur = &a->wins[a->nwins - 1];
  if (len && ts >= cur->end_ns) {
    uint64_t idx = (ts - a->origin) / len;
    if (idx < a->next_win_index) idx = a->next_win_index;
    return new_window(a, a->origin + idx * len, idx);
  }
  if (a->cfg.window_ops && cur->ops >= a->cfg.window_ops) {
    ns_win* w = new_window(a, ts, a->next_win_index);
    if (w && w != cur && len) w->end_ns = cur->end_ns > ts ? cur->end_ns : ts + len;
    return w;
  }
  return cur;
}

uint64_t ns_win_attach(ns_analysis* a, uint64_t ts) {
  ns_win* w = NULL;
  if (a->nwins && ts < a->wins[a->nwins - 1].start_ns) {
    /* late start from another thread: the open window it belongs to, else the oldest open */
    for (size_t i = 0; i < a->nwins; i++)
      if (ts >= a->wins[i].start_ns && ts < a->wins[i].end_ns) w = &a->wins[i];
    if (!w) w = &a->wins[0];
  } else {
    w = current(a, ts);
  }
  if (!w) return UINT64_MAX;
  w->ops++;
  w->inflight++;
  return w->index;
}

/* ---- accumulators ---- */
static ns_bucket_acc* bucket_for(ns_aggr* g, const ns_op_result* r, uint64_t sb) {
  for (size_t i = 0; i < g->nb; i++) {
    ns_bucket_stats* k = &g->b[i].key;
    if (k->comm == r->comm && k->func == r->func && k->size_bucket == sb && k->batch_ops == r->batch_ops &&
        k->gpu == ns_basis_is_gpu(r->basis) && strcmp(k->func_name, r->func_name) == 0 &&
        strcmp(k->algo, r->algo) == 0 && strcmp(k->proto, r->proto) == 0)
      return &g->b[i];
  }
  ns_bucket_acc* b;
  NS_ARRAY_PUSH(b, g->b, g->capb, g->nb, 8);
  if (!b) return NULL;
  b->key.comm = r->comm;
  b->key.func = r->func;
  b->key.size_bucket = sb;
  b->key.batch_ops = r->batch_ops;
  b->key.gpu = ns_basis_is_gpu(r->basis);
  memcpy(b->key.func_name, r->func_name, NS_STR_LEN);
  memcpy(b->key.algo, r->algo, NS_STR_LEN);
  memcpy(b->key.proto, r->proto, NS_STR_LEN);
  memcpy(b->key.dtype, r->dtype, NS_STR_LEN);
  b->nranks = r->nranks;
  ns_pct_init(&b->pct);
  return b;
}

static int link_same(const ns_link_stats* x, const ns_link_stats* k) {
  return x->comm == k->comm && x->rank == k->rank && x->peer == k->peer && x->is_send == k->is_send &&
         x->channel == k->channel;
}

/* A link key's hash (never 0, the map's empty key); keys that collide are
 * told apart by link_same. */
static uint64_t link_hash(const ns_link_stats* k) {
  uint64_t a = ((uint64_t)k->comm << 32) ^ (uint32_t)k->peer;
  uint64_t b = ((uint64_t)(uint32_t)k->rank << 32) ^ ((uint64_t)(uint32_t)k->channel << 1) ^ (k->is_send ? 1u : 0u);
  return (ns_idmap_mix(a) ^ ns_idmap_mix(~b)) | 1;
}

/* The link's accumulator, made on first use. Every step looks its two up
 * (its channel and all channels), and a process with 32 channels, two
 * peers and both directions has 130 of them: a hash lookup, not a scan. */
static ns_link_acc* link_for(ns_aggr* g, const ns_link_stats* k) {
  uint64_t h = link_hash(k);
  uint64_t* at = ns_idmap_get(&g->l_at, h);
  if (at && link_same(&g->l[*at - 1].key, k)) return &g->l[*at - 1];
  if (at) /* another key with this hash holds the index: a scan finds this one */
    for (size_t i = 0; i < g->nl; i++)
      if (link_same(&g->l[i].key, k)) return &g->l[i];
  ns_link_acc* l;
  NS_ARRAY_PUSH(l, g->l, g->capl, g->nl, 8);
  if (!l) return NULL;
  if (!at) {
    int inserted;
    uint64_t* v = ns_idmap_put(&g->l_at, h, &inserted);
    if (v) *v = g->nl; /* index + 1 */
  }
  l->key.comm = k->comm;
  l->key.rank = k->rank;
  l->key.peer = k->peer;
  l->key.is_send = k->is_send;
  l->key.channel = k->channel;
  ns_linkacc_init(&l->acc);
  return l;
}

void ns_aggr_link_merge(ns_aggr* dst, const ns_link_acc* src) {
  ns_link_acc* d = link_for(dst, &src->key);
  if (d) ns_linkacc_merge(&d->acc, &src->acc);
}

static ns_func_stats* func_for(ns_aggr* g, uint32_t comm, int func, uint8_t type) {
  for (size_t i = 0; i < g->nf; i++)
    if (g->f[i].comm == comm && g->f[i].func == func && g->f[i].type == type) return &g->f[i];
  ns_func_stats* f;
  NS_ARRAY_PUSH(f, g->f, g->capf, g->nf, 8);
  if (!f) return NULL;
  f->comm = comm;
  f->func = func;
  f->type = type;
  return f;
}

/* The lateness accumulator of comm serial `comm` in g (created); NULL when out of memory. */
static ns_lateness_stats* lateness_for(ns_aggr* g, uint32_t comm) {
  for (size_t i = 0; i < g->nlate; i++)
    if (g->late[i].comm == comm) return &g->late[i];
  ns_lateness_stats* l;
  NS_ARRAY_PUSH(l, g->late, g->caplate, g->nlate, 4);
  if (!l) return NULL;
  l->comm = comm;
  return l;
}

void ns_aggr_free(ns_aggr* g) {
  for (size_t i = 0; i < g->nb; i++) ns_pct_free(&g->b[i].pct);
  for (size_t i = 0; i < g->nl; i++) ns_linkacc_free(&g->l[i].acc);
  free(g->b);
  free(g->l);
  ns_idmap_free(&g->l_at);
  free(g->f);
  free(g->late);
  ns_tags_free(&g->tags);
  memset(g, 0, sizeof *g);
}

uint64_t ns_size_bucket(uint64_t bytes) {
  if (!bytes) return 0;
  unsigned log2 = 63u - (unsigned)__builtin_clzll(bytes);
  return 1ull << (log2 & ~1u);
}

uint64_t ns_hist_bound_ns(unsigned i) { return 8000ull << (2 * i); }

unsigned ns_hist_index(uint64_t dur_ns) {
  unsigned i = 0;
  while (i < NS_HIST_BOUNDS && dur_ns > ns_hist_bound_ns(i)) i++;
  return i;
}

static void copy_name(char* dst, const char* src) {
  snprintf(dst, NS_STR_LEN, "%s", src ? src : "");
}

static void row_add(ns_analysis* a, const ns_op_result* r) {
  ns_row_acc* row = NULL;
  const char* algo = r->algo ? r->algo : "";
  const char* proto = r->proto ? r->proto : "";
  int64_t root = r->func == NS_FUNC_BROADCAST || r->func == NS_FUNC_REDUCE ? r->root_or_peer : -1;
  for (size_t i = 0; i < a->nrows; i++) {
    ns_row_acc* x = &a->rows[i];
    if (x->comm == r->comm && x->nranks == r->nranks && x->bytes == r->bytes && x->batch_ops == r->batch_ops &&
        x->root == root &&
        strcmp(x->func_name, r->func_name) == 0 && strcmp(x->dtype, r->dtype) == 0 &&
        strncmp(x->algo, algo, NS_STR_LEN - 1) == 0 && strncmp(x->proto, proto, NS_STR_LEN - 1) == 0) {
      row = x;
      break;
    }
  }
  if (!row) {
    NS_ARRAY_PUSH(row, a->rows, a->caprows, a->nrows, 16);
    if (!row) return;
    row->func = r->func;
    memcpy(row->func_name, r->func_name, NS_STR_LEN);
    memcpy(row->dtype, r->dtype, NS_STR_LEN);
    copy_name(row->algo, algo);
    copy_name(row->proto, proto);
    row->comm = r->comm;
    row->comm_id = r->comm_id;
    row->rank = r->rank;
    row->nranks = r->nranks;
    row->bytes = r->bytes;
    row->count_elems = r->count;
    row->batch_ops = r->batch_ops;
    row->root = root;
    row->basis_min = row->basis_max = r->basis;
    ns_pct_init(&row->pct);
  }
  if (row->calls < NS_WARMUP_MAX) {
    row->first[row->calls] = r->dur_ns;
  } else {
    row->dur_ns_sum += r->dur_ns;
    ns_pct_add(&row->pct, r->dur_ns);
  }
  row->calls++;
  if (r->basis < row->basis_min) row->basis_min = r->basis;
  if (r->basis > row->basis_max) row->basis_max = r->basis;
}

/* The window an op of window index `window` counts in: its own, else (force-closed) the newest; NULL if none. */
static ns_win* win_for(ns_analysis* a, uint64_t window) {
  ns_win* w = find_window(a, window);
  if (!w && a->nwins) w = &a->wins[a->nwins - 1]; /* its window was force-closed */
  return w;
}

/* One call into its window's bucket and the summary row. */
static void aggregate(ns_analysis* a, ns_win* w, const ns_op_result* r) {
  if (!w && a->nwins) w = &a->wins[a->nwins - 1]; /* its window was force-closed */
  if (w) {
    ns_bucket_acc* b = bucket_for(&w->ag, r, ns_size_bucket(r->bytes));
    if (b) {
      b->count++;
      b->bytes += r->bytes;
      b->dur_ns_sum += r->dur_ns;
      ns_pct_add(&b->pct, r->dur_ns);
    }
  }
  row_add(a, r);
}

/* Every op, batched or not, timed or not: counts, bytes and the time histogram. */
static void count_op(ns_win* w, const ns_op_result* r) {
  ns_func_stats* f = w ? func_for(&w->ag, r->comm, r->func, r->type) : NULL;
  if (!f) return;
  f->ops++;
  f->bytes += r->bytes;
  if (r->flags & NS_OPF_INCOMPLETE) f->incomplete++;
  if (r->basis != NS_BASIS_NONE) {
    f->timed++;
    if (ns_basis_is_gpu(r->basis)) f->gpu_timed++;
    f->hist[ns_hist_index(r->dur_ns)]++;
    f->dur_ns_sum += r->dur_ns;
  }
  if (r->user_tag) ns_tags_op(&w->ag.tags, r);
}

/* A collective compared across the local ranks (lateness.c), in the window of the op that completed it. */
static void count_lateness(ns_win* w, const ns_late_cmp* c) {
  for (uint32_t i = 0; w && i < c->n; i++) {
    ns_lateness_stats* l = lateness_for(&w->ag, c->comm[i]);
    if (!l) continue;
    l->comm_id = c->comm_id;
    l->rank = c->rank[i];
    l->compared++;
    if (c->last[i]) l->last++;
    l->lateness_ns_sum += c->late_ns[i];
    if (c->late_ns[i] > l->lateness_ns_max) l->lateness_ns_max = c->late_ns[i];
    if (!c->gpu) continue;
    l->gpu_compared++;
    if (c->last[i]) l->gpu_last++;
    l->gpu_lateness_ns_sum += c->late_ns[i];
  }
}

void ns_win_op_done(ns_analysis* a, const ns_op_result* r) {
  ns_win* w = find_window(a, r->window);
  count_op(win_for(a, r->window), r);
  ns_late_cmp cmp;
  if (ns_late_op(a, r, &cmp)) count_lateness(win_for(a, r->window), &cmp); /* before the op leaves its window */
  if (w && w->inflight > 0) w->inflight--;
  /* a batched op counts in its batch's call (ns_win_batch_done), not on its own */
  if (r->basis != NS_BASIS_NONE && !(r->flags & NS_OPF_BATCHED)) aggregate(a, w, r);
}

void ns_win_batch_done(ns_analysis* a, const ns_op_result* batch) { aggregate(a, find_window(a, batch->window), batch); }

void ns_win_op_dropped(ns_analysis* a, uint64_t window) {
  ns_win* w = find_window(a, window);
  if (w && w->inflight > 0) w->inflight--;
}

void ns_win_step(ns_analysis* a, uint64_t window, const ns_link_stats* key, uint64_t size, double time_us,
                 int queued, ns_link_cache* cache) {
  ns_win* w = window != UINT64_MAX ? find_window(a, window) : NULL;
  if (!w) w = a->nwins ? &a->wins[a->nwins - 1] : current(a, a->now);
  if (!w) return;
  ns_aggr* g = &w->ag;
  ns_link_cache none = {0};
  if (!cache) cache = &none;
  /* A window's links only grow (indexes stay), and its index is never
   * reused: the cache holds while its window is the step's. */
  if (cache->window != w->index + 1) {
    ns_link_stats k = *key;
    ns_link_acc* l = link_for(g, &k);
    k.channel = -1;
    size_t one = l ? (size_t)(l - g->l) : 0; /* link_for may move g->l */
    ns_link_acc* all = l ? link_for(g, &k) : NULL;
    if (!all) return;
    cache->window = w->index + 1;
    cache->channel = (uint32_t)one + 1;
    cache->all = (uint32_t)(all - g->l) + 1;
  }
  ns_linkacc_add(&g->l[cache->channel - 1].acc, size, time_us, queued);
  ns_linkacc_add(&g->l[cache->all - 1].acc, size, time_us, queued);
}

void ns_link_publish(const ns_link_acc* l, ns_link_stats* out) {
  *out = l->key;
  out->bytes = l->acc.bytes;
  out->steps = l->acc.steps;
  out->time_us_sum = l->acc.time_us_sum;
  out->nofit = ns_linkacc_fit(&l->acc, &out->avg, &out->min);
  out->nsizes = ns_linkacc_sizes(&l->acc, out->sizes, NS_LINK_SIZES_SHOWN);
}

static void publish(ns_analysis* a, ns_win* w) {
  ns_bucket_stats* bs = w->ag.nb ? calloc(w->ag.nb, sizeof *bs) : NULL;
  ns_link_stats* ls = w->ag.nl ? calloc(w->ag.nl, sizeof *ls) : NULL;
  for (size_t i = 0; bs && i < w->ag.nb; i++) {
    ns_bucket_acc* b = &w->ag.b[i];
    bs[i] = b->key;
    bs[i].count = b->count;
    bs[i].bytes = b->bytes;
    bs[i].p50_us = ns_pct_get(&b->pct, 0.50) / 1e3;
    bs[i].p90_us = ns_pct_get(&b->pct, 0.90) / 1e3;
    bs[i].p99_us = ns_pct_get(&b->pct, 0.99) / 1e3;
    bs[i].max_us = (double)b->pct.max / 1e3;
    bs[i].mean_us = b->count ? (double)b->dur_ns_sum / (double)b->count / 1e3 : 0;
    bs[i].pct_exact = ns_pct_exact(&b->pct);
    bs[i].algbw_gbs = ns_algbw_gbs(b->bytes, b->dur_ns_sum);
    bs[i].busbw_gbs = bs[i].algbw_gbs * ns_busbw_factor(b->key.func, b->nranks);
  }
  for (size_t i = 0; ls && i < w->ag.nl; i++) ns_link_publish(&w->ag.l[i], &ls[i]);
  ns_window_clock* cs = a->ncomms ? calloc(a->ncomms, sizeof *cs) : NULL;
  size_t ncs = 0;
  for (uint32_t c = 0; cs && c < a->ncomms; c++)
    if (ns_analysis_clock_fit(a, c, &cs[ncs].fit)) cs[ncs++].comm = c;
  ns_window pub;
  memset(&pub, 0, sizeof pub);
  pub.index = w->index;
  pub.start_ns = w->start_ns;
  pub.end_ns = w->end_ns;
  pub.ops = w->ops;
  pub.n_buckets = bs ? w->ag.nb : 0;
  pub.buckets = bs;
  pub.n_links = ls ? w->ag.nl : 0;
  pub.links = ls;
  pub.n_funcs = w->ag.nf;
  pub.funcs = w->ag.f;
  pub.n_lateness = w->ag.nlate;
  pub.lateness = w->ag.late;
  pub.n_tags = w->ag.tags.n;
  pub.tags = w->ag.tags.t;
  pub.n_clocks = ncs;
  pub.clocks = cs;
  pub.steps_unanalysed = a->st.steps_unanalysed;
  if (a->cfg.on_window) a->cfg.on_window(a->cfg.user, &pub);
  free(bs);
  free(ls);
  free(cs);
}

static void close_window(ns_analysis* a, size_t i) {
  ns_win* w = &a->wins[i];
  publish(a, w);
  for (size_t k = 0; k < w->ag.nl; k++) ns_aggr_link_merge(&a->total, &w->ag.l[k]);
  for (size_t k = 0; k < w->ag.tags.n; k++) (void)ns_tags_add(&a->total.tags, &w->ag.tags.t[k]);
  ns_aggr_free(&w->ag);
  memmove(a->wins + i, a->wins + i + 1, (a->nwins - i - 1) * sizeof *a->wins);
  a->nwins--;
  a->st.windows++;
}

void ns_win_scan(ns_analysis* a, int flush) {
  ns_late_scan(a, flush);
  /* Windows are published in the order they opened (windows.jsonl, the
   * cumulative metrics): the oldest closes first, and a later window waits
   * for it, max_age_ns at most. */
  while (a->nwins) {
    ns_win* w = &a->wins[0];
    int newest = a->nwins == 1;
    uint64_t end = w->end_ns;
    if (!newest && a->wins[1].start_ns < end) end = a->wins[1].start_ns; /* count-closed */
    int ended = end != UINT64_MAX && a->now >= end + a->cfg.grace_ns;
    if (!newest && end == UINT64_MAX) ended = 1;
    int forced = end != UINT64_MAX && a->now > end + a->cfg.max_age_ns;
    if (!flush && !forced && !(ended && w->inflight == 0)) break;
    close_window(a, 0);
  }
}
