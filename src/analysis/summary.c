/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary (nccl-tests style table, slowest links,
 * clock-fit quality), merged over any number of analyses: the accumulator.
 * Its text is summary_text.c's, its JSON summary_json.c's.
 *
 * Runs on the thread that owns the analyses (the plugin's last finalize on
 * the writer thread, or the CLI).
 */
#include "analysis/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int row_cmp(const void* pa, const void* pb) {
  const ns_row_acc *a = &((const sum_row*)pa)->row, *b = &((const sum_row*)pb)->row;
  int c = strcmp(a->func_name, b->func_name);
  if (c) return c;
  if (a->comm_id != b->comm_id) return a->comm_id < b->comm_id ? -1 : 1;
  if (a->nranks != b->nranks) return a->nranks < b->nranks ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
  if (a->batch_ops != b->batch_ops) return a->batch_ops < b->batch_ops ? -1 : 1;
  if (a->root != b->root) return a->root < b->root ? -1 : 1;
  if ((c = strcmp(a->dtype, b->dtype))) return c;
  if ((c = strcmp(a->algo, b->algo))) return c;
  return strcmp(a->proto, b->proto);
}

static int same_row(const ns_row_acc* x, const ns_row_acc* s) {
  return x->comm_id == s->comm_id && x->nranks == s->nranks && x->bytes == s->bytes && x->batch_ops == s->batch_ops &&
         x->root == s->root && !strcmp(x->func_name, s->func_name) && !strcmp(x->dtype, s->dtype) &&
         !strcmp(x->algo, s->algo) && !strcmp(x->proto, s->proto);
}

/* One row per (communicator, func, nranks, size, type, algo, proto) over
 * every rank of every analysis added. Each rank's warm-up calls are dropped
 * here (ns_warmup_calls), its other held first calls folded back. */
static int add_rows(ns_summary* sm, const ns_analysis* a) {
  for (size_t j = 0; j < a->nrows; j++) {
    const ns_row_acc* s = &a->rows[j];
    sum_row* d = NULL;
    for (size_t k = 0; k < sm->nrows; k++)
      if (same_row(&sm->rows[k].row, s)) {
        d = &sm->rows[k];
        break;
      }
    if (!d) {
      if (sm->nrows == sm->caprows) {
        size_t nc = sm->caprows ? 2 * sm->caprows : 16;
        sum_row* nr = realloc(sm->rows, nc * sizeof *nr);
        if (!nr) return -1;
        sm->rows = nr;
        sm->caprows = nc;
      }
      d = &sm->rows[sm->nrows++];
      memset(d, 0, sizeof *d);
      d->row = *s;
      ns_pct_init(&d->row.pct);
      d->row.calls = d->row.dur_ns_sum = d->row.warmup = 0;
      d->row.ranks = 0;
      d->row.calls_min = UINT64_MAX;
      d->row.calls_max = 0;
    }
    uint64_t warm = ns_warmup_calls(s->calls), held = s->calls < NS_WARMUP_MAX ? s->calls : NS_WARMUP_MAX;
    for (uint64_t k = warm; k < held; k++) {
      d->row.dur_ns_sum += s->first[k];
      ns_pct_add(&d->row.pct, s->first[k]);
    }
    d->row.ranks++;
    d->row.calls += s->calls;
    d->row.warmup += warm;
    if (s->calls < d->row.calls_min) d->row.calls_min = s->calls;
    if (s->calls > d->row.calls_max) d->row.calls_max = s->calls;
    d->row.dur_ns_sum += s->dur_ns_sum;
    if (s->basis_min < d->row.basis_min) d->row.basis_min = s->basis_min;
    if (s->basis_max > d->row.basis_max) d->row.basis_max = s->basis_max;
    ns_pct_merge(&d->row.pct, &s->pct);
  }
  return 0;
}

/* The merged rows in listing order (sorted in place: the keys are distinct, so the order is total). */
sum_row* ns_sum_sorted_rows(ns_summary* sm, size_t* n) {
  if (sm->nrows) qsort(sm->rows, sm->nrows, sizeof *sm->rows, row_cmp);
  *n = sm->nrows;
  return sm->rows;
}

row_figures ns_sum_figures(ns_row_acc* r) {
  row_figures f;
  uint64_t timed = r->calls - r->warmup;
  double factor = ns_busbw_factor(r->func, r->nranks);
  f.mean_ns = timed ? (double)r->dur_ns_sum / (double)timed : 0;
  f.p50_ns = timed ? ns_pct_get(&r->pct, 0.5) : 0;
  f.p99_ns = timed ? ns_pct_get(&r->pct, 0.99) : 0;
  f.algbw = f.mean_ns > 0 ? (double)r->bytes / f.mean_ns : 0;
  f.busbw = f.algbw * factor;
  f.busbw_p50 = f.p50_ns > 0 ? (double)r->bytes / f.p50_ns * factor : 0;
  f.busbw_p99 = f.p99_ns > 0 ? (double)r->bytes / f.p99_ns * factor : 0;
  return f;
}

/* Ranked as a link: one channel's send connection with a fit (the send time
 * SendWait -> stop is the link's transfer). Receive times are waits (the peer,
 * the flush, the GPU), an all-channel row mixes connections, and a row
 * without a fit has nothing to rank by. */
int ns_sum_ranked(const ns_link_stats* s) { return s->is_send && s->channel >= 0 && s->nofit == NS_LINK_FIT; }

static int link_cmp(const void* pa, const void* pb) {
  const sum_link *a = pa, *b = pb;
  int ra = ns_sum_ranked(&a->s), rb = ns_sum_ranked(&b->s);
  if (ra != rb) return ra ? -1 : 1;
  if (ra) {
    double x = a->s.min.bandwidth_gbs, y = b->s.min.bandwidth_gbs;
    if (x != y) return x < y ? -1 : 1;
  }
  if (a->comm_id != b->comm_id) return a->comm_id < b->comm_id ? -1 : 1;
  if (a->s.rank != b->s.rank) return a->s.rank < b->s.rank ? -1 : 1;
  if (a->s.peer != b->s.peer) return a->s.peer < b->s.peer ? -1 : 1;
  if (a->s.is_send != b->s.is_send) return a->s.is_send ? -1 : 1;
  return a->s.channel < b->s.channel ? -1 : a->s.channel > b->s.channel;
}

/* l into the kept rows v (n of them, at most max in listing order): after
 * those it does not precede, as a stable sort of every row added would list it. */
static int keep_link(sum_link** pv, size_t* n, size_t* cap, size_t max, const sum_link* l) {
  size_t lo = 0, hi = *n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (link_cmp(l, &(*pv)[mid]) < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo >= max) return 0;
  if (*n == *cap && *n < max) {
    size_t nc = *cap ? 2 * *cap : 16;
    if (nc > max) nc = max;
    sum_link* grown = realloc(*pv, nc * sizeof *grown);
    if (!grown) return -1;
    *pv = grown;
    *cap = nc;
  }
  sum_link* v = *pv;
  size_t keep = *n < max ? *n : max - 1;
  memmove(&v[lo + 1], &v[lo], (keep - lo) * sizeof *v);
  v[lo] = *l;
  *n = keep + 1;
  return 0;
}

/* Every link row of a (per channel and all channels), whole run (closed and
 * open windows): the ranked ones and the others each kept up to max_links. */
static int add_links(ns_summary* sm, const ns_analysis* a) {
  ns_aggr tmp;
  memset(&tmp, 0, sizeof tmp);
  for (size_t k = 0; k < a->total.nl; k++) ns_aggr_link_merge(&tmp, &a->total.l[k]);
  for (size_t w = 0; w < a->nwins; w++)
    for (size_t k = 0; k < a->wins[w].ag.nl; k++) ns_aggr_link_merge(&tmp, &a->wins[w].ag.l[k]);
  for (size_t k = 0; k < tmp.nl; k++) {
    sum_link l;
    ns_link_publish(&tmp.l[k], &l.s);
    const ns_comm_state* cs = tmp.l[k].key.comm < a->ncomms ? a->comms[tmp.l[k].key.comm] : NULL;
    l.comm_id = cs ? cs->comm_id : 0;
    int rc = ns_sum_ranked(&l.s) ? keep_link(&sm->ranked, &sm->nranked_kept, &sm->capranked, sm->max_links, &l)
                          : keep_link(&sm->other, &sm->nother_kept, &sm->capother, sm->max_links, &l);
    if (rc) {
      ns_aggr_free(&tmp);
      return -1;
    }
    sm->nlinks++;
    sm->nranked += ns_sum_ranked(&l.s) ? 1 : 0;
  }
  ns_aggr_free(&tmp);
  return 0;
}

/* a's userTag rows, whole run (closed and open windows), one rank's rows summed into the communicator's. */
static int add_tags(ns_summary* sm, const ns_analysis* a) {
  ns_tag_table tmp;
  memset(&tmp, 0, sizeof tmp);
  int rc = 0;
  for (size_t k = 0; !rc && k < a->total.tags.n; k++) rc = ns_tags_add(&tmp, &a->total.tags.t[k]);
  for (size_t w = 0; !rc && w < a->nwins; w++)
    for (size_t k = 0; !rc && k < a->wins[w].ag.tags.n; k++) rc = ns_tags_add(&tmp, &a->wins[w].ag.tags.t[k]);
  for (size_t k = 0; !rc && k < tmp.n; k++) rc = ns_tags_add(&sm->tags, &tmp.t[k]);
  ns_tags_free(&tmp);
  return rc;
}

static int tag_cmp(const void* pa, const void* pb) {
  const ns_tag_stats *a = pa, *b = pb;
  if (a->comm_id != b->comm_id) return a->comm_id < b->comm_id ? -1 : 1;
  if (a->other != b->other) return a->other ? 1 : -1;
  if (a->dur_ns_sum != b->dur_ns_sum) return a->dur_ns_sum > b->dur_ns_sum ? -1 : 1;
  if (a->ops != b->ops) return a->ops > b->ops ? -1 : 1;
  return a->tag < b->tag ? -1 : a->tag > b->tag;
}

ns_tag_stats* ns_sum_sorted_tags(ns_summary* sm, size_t* n) {
  ns_tags_sort(&sm->tags, tag_cmp);
  *n = sm->tags.n;
  return sm->tags.t;
}

/* What an unranked row is. */
const char* ns_sum_link_kind(const ns_link_stats* s) {
  if (!s->is_send) return "receive wait";
  return s->channel < 0 ? "all channels" : "no fit";
}

const char* ns_sum_basis_name(int b) {
  static const char* const names[] = {"none", "enqueue", "exec", "gpu", "batch"};
  return b >= 0 && b <= NS_BASIS_BATCH ? names[b] : "?";
}

/* The communicators of a with a clock fit, in serial order, with their GPU
 * (communicators of one GPU share one fit): its UUID, else the proxy thread
 * its KernelCh came from. */
static int add_clocks(ns_summary* sm, ns_analysis* a) {
  for (size_t c = 0; c < a->ncomms; c++) {
    const ns_comm_state* cs = a->comms[c];
    ns_clock_fit fit;
    if (!cs || !ns_analysis_clock_fit(a, cs->comm, &fit)) continue;
    if (sm->nclocks == sm->capclocks) {
      size_t nc = sm->capclocks ? 2 * sm->capclocks : 16;
      sum_clock* grown = realloc(sm->clocks, nc * sizeof *grown);
      if (!grown) return -1;
      sm->clocks = grown;
      sm->capclocks = nc;
    }
    sum_clock* k = &sm->clocks[sm->nclocks++];
    const ns_gpu_state* gpu = a->gpus[cs->gpu];
    k->comm_id = cs->comm_id;
    k->rank = cs->rank;
    k->fit = fit;
    memcpy(k->verdicts, cs->pt.verdicts, sizeof k->verdicts);
    if (gpu->uuid[0])
      snprintf(k->gpu, sizeof k->gpu, "%.40s", gpu->uuid);
    else
      snprintf(k->gpu, sizeof k->gpu, "proxy tid %u", gpu->proxy_tid);
  }
  return 0;
}

/* Whether the samples pin the drift down: GPU clocks drift by a few ppm, so
 * a range wider than +-10 ppm (a span of samples too short) says nothing,
 * and the drift is published as unknown. The fit's bounds hold either way. */
#define DRIFT_KNOWN_PPM 10.0
int ns_sum_drift_known(const ns_clock_fit* f) { return f->bounded && f->drift_err_ppm <= DRIFT_KNOWN_PPM; }

size_t ns_sum_max_links(const ns_summary_options* opt) { return opt && opt->max_links ? opt->max_links : 10; }

ns_summary* ns_summary_new(const ns_summary_options* opt) {
  ns_summary* sm = calloc(1, sizeof *sm);
  if (!sm) return NULL;
  sm->max_links = ns_sum_max_links(opt);
  sm->tags.by_id = 1;
  return sm;
}

void ns_summary_free(ns_summary* sm) {
  if (!sm) return;
  for (size_t i = 0; i < sm->nrows; i++) ns_pct_free(&sm->rows[i].row.pct);
  free(sm->rows);
  free(sm->ranked);
  free(sm->other);
  free(sm->clocks);
  free(sm->names);
  ns_tags_free(&sm->tags);
  free(sm);
}

/* The names of a's communicators that the summary has no name for yet. */
static int add_names(ns_summary* sm, const ns_analysis* a) {
  for (size_t c = 0; c < a->ncomms; c++) {
    const ns_comm_state* cs = a->comms[c];
    if (!cs || !cs->name[0]) continue;
    size_t k = 0;
    while (k < sm->nnames && sm->names[k].comm_id != cs->comm_id) k++;
    if (k < sm->nnames) continue;
    if (sm->nnames == sm->capnames) {
      size_t nc = sm->capnames ? 2 * sm->capnames : 8;
      sum_name* nn = realloc(sm->names, nc * sizeof *nn);
      if (!nn) return -1;
      sm->names = nn;
      sm->capnames = nc;
    }
    sum_name* d = &sm->names[sm->nnames++];
    d->comm_id = cs->comm_id;
    snprintf(d->name, sizeof d->name, "%s", cs->name);
  }
  return 0;
}

int ns_summary_add(ns_summary* sm, ns_analysis* a) {
  if (add_rows(sm, a) || add_links(sm, a) || add_tags(sm, a) || add_clocks(sm, a) || add_names(sm, a)) return -1;
  sm->steps_unanalysed += a->st.steps_unanalysed;
  return 0;
}

/* The summary of a list of analyses, by the accumulator; -1 when out of memory. */
ns_summary* ns_sum_of(ns_analysis* const* list, size_t n, const ns_summary_options* opt) {
  ns_summary* sm = ns_summary_new(opt);
  for (size_t i = 0; sm && i < n; i++)
    if (ns_summary_add(sm, list[i])) {
      ns_summary_free(sm);
      return NULL;
    }
  return sm;
}
