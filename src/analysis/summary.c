/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary (nccl-tests style table, slowest links,
 * clock-fit quality) as text and JSON, merged over any number of analyses.
 *
 * Runs on the thread that owns the analyses (the plugin's last finalize on
 * the writer thread, or the CLI). Self-contained JSON output: strings go
 * through util/json_escape.h, non-finite numbers are written as null.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/json_escape.h"

typedef struct {
  ns_row_acc row; /* merged; pct owned */
} sum_row;

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

/* The summary accumulated one analysis at a time (ns_summary_add): the
 * merged rows, the link rows that can be listed (the first max_links of
 * each kind in listing order, and how many there are), the clock fits.
 * Nothing in it refers to an analysis, so each can be destroyed once added. */
typedef struct {
  ns_link_stats s;
  uint64_t comm_id;
} sum_link;

typedef struct {
  uint64_t comm_id;
  int32_t rank;
  char gpu[48];
  ns_clock_fit fit;
  uint64_t verdicts[NS_PT_REASONS];
} sum_clock;

typedef struct {
  uint64_t comm_id;
  char name[64];
} sum_name;

struct ns_summary {
  size_t max_links;
  sum_row* rows;
  size_t nrows, caprows;
  sum_link* ranked; /* the slowest max_links ranked links, in listing order */
  sum_link* other;  /* the first max_links other rows, in listing order */
  size_t nranked_kept, nother_kept, capranked, capother;
  size_t nranked, nlinks; /* every link row added, and those ranked */
  sum_clock* clocks;
  size_t nclocks, capclocks;
  sum_name* names; /* each named communicator once, its first name */
  size_t nnames, capnames;
  uint64_t steps_unanalysed;
};

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
static sum_row* sorted_rows(ns_summary* sm, size_t* n) {
  if (sm->nrows) qsort(sm->rows, sm->nrows, sizeof *sm->rows, row_cmp);
  *n = sm->nrows;
  return sm->rows;
}

/* Figures of a merged row: timed calls exclude warm-up; bandwidth as nccl-tests computes it. */
typedef struct {
  double mean_ns, p50_ns, p99_ns, algbw, busbw, busbw_p50, busbw_p99;
} row_figures;

static row_figures figures(ns_row_acc* r) {
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
static int ranked(const ns_link_stats* s) { return s->is_send && s->channel >= 0 && s->nofit == NS_LINK_FIT; }

static int link_cmp(const void* pa, const void* pb) {
  const sum_link *a = pa, *b = pb;
  int ra = ranked(&a->s), rb = ranked(&b->s);
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
    int rc = ranked(&l.s) ? keep_link(&sm->ranked, &sm->nranked_kept, &sm->capranked, sm->max_links, &l)
                          : keep_link(&sm->other, &sm->nother_kept, &sm->capother, sm->max_links, &l);
    if (rc) {
      ns_aggr_free(&tmp);
      return -1;
    }
    sm->nlinks++;
    sm->nranked += ranked(&l.s) ? 1 : 0;
  }
  ns_aggr_free(&tmp);
  return 0;
}

/* What an unranked row is. */
static const char* link_kind(const ns_link_stats* s) {
  if (!s->is_send) return "receive wait";
  return s->channel < 0 ? "all channels" : "no fit";
}

static const char* basis_name(int b) {
  static const char* const names[] = {"none", "enqueue", "exec", "gpu", "batch"};
  return b >= 0 && b <= NS_BASIS_BATCH ? names[b] : "?";
}

/* The wide form: one row per (communicator, size, algorithm, protocol, batch), every figure. */
static void text_collectives_wide(sum_row* rows, size_t nr, FILE* out) {
  fprintf(out, "# ncclscope summary: collectives (one row per communicator, size, algorithm and protocol;\n"
               "# time over timed calls: each rank's first min(5, calls/4) calls are warm-up, left out;\n"
               "# bandwidth as nccl-tests computes it: busbw from the mean time, busbw.p50 and busbw.p99 from\n"
               "# the median and the 99th-percentile time)\n"
               "# rows with a batch: ops that shared one kernel batch, whose only GPU time is the batch's; a call\n"
               "# is then one batch, its size the sum of its ops' (NCCL gives every work of a batch one interval)\n");
  fprintf(out, "# %-14s %-18s %6s %14s %13s %9s %-8s %-6s %5s %11s %6s %11s %11s %11s %10s %10s %10s %10s  %-8s %s\n",
          "collective", "commId", "nranks", "size(B)", "count(elems)", "type", "algo", "proto", "ranks", "calls/rank",
          "warmup", "time(us)", "p50(us)", "p99(us)", "algbw", "busbw", "busbw.p50", "busbw.p99", "basis", "batch");
  fprintf(out, "# %-14s %-18s %6s %14s %13s %9s %-8s %-6s %5s %11s %6s %11s %11s %11s %10s %10s %10s %10s\n", "", "",
          "", "", "", "", "", "", "", "", "", "", "", "", "(GB/s)", "(GB/s)", "(GB/s)", "(GB/s)");
  for (size_t i = 0; rows && i < nr; i++) {
    ns_row_acc* r = &rows[i].row;
    row_figures f = figures(r);
    char basis[24], calls[32], comm[24];
    if (r->basis_min == r->basis_max)
      snprintf(basis, sizeof basis, "%s", basis_name(r->basis_min));
    else
      snprintf(basis, sizeof basis, "%s..%s", basis_name(r->basis_min), basis_name(r->basis_max));
    char batch[24] = "-";
    if (r->batch_ops) snprintf(batch, sizeof batch, "%u ops", r->batch_ops);
    if (r->calls_min == r->calls_max)
      snprintf(calls, sizeof calls, "%llu", (unsigned long long)r->calls_min);
    else
      snprintf(calls, sizeof calls, "%llu..%llu", (unsigned long long)r->calls_min, (unsigned long long)r->calls_max);
    snprintf(comm, sizeof comm, "0x%016llx", (unsigned long long)r->comm_id);
    fprintf(out,
            "  %-14s %-18s %6u %14llu %13llu %9s %-8s %-6s %5u %11s %6llu %11.2f %11.2f %11.2f %10.2f %10.2f %10.2f "
            "%10.2f  %-8s %s\n",
            r->func_name[0] ? r->func_name : "?", comm, r->nranks, (unsigned long long)r->bytes,
            (unsigned long long)r->count_elems, ns_dtype_short(r->dtype), r->algo[0] ? r->algo : "-",
            r->proto[0] ? r->proto : "-", r->ranks, calls, (unsigned long long)(r->ranks ? r->warmup / r->ranks : 0),
            f.mean_ns / 1e3, f.p50_ns / 1e3, f.p99_ns / 1e3, f.algbw, f.busbw, f.busbw_p50, f.busbw_p99, basis, batch);
  }
}

/* A communicator's name (NULL: none given), from the first analysis added that has one. */
static const char* comm_name(const ns_summary* sm, uint64_t comm_id) {
  for (size_t i = 0; i < sm->nnames; i++)
    if (sm->names[i].comm_id == comm_id) return sm->names[i].name;
  return NULL;
}

/* Whether two rows differ only in algorithm and protocol (the narrow form folds them into one). */
static int same_but_algo(const ns_row_acc* x, const ns_row_acc* s) {
  return x->comm_id == s->comm_id && x->nranks == s->nranks && x->bytes == s->bytes && x->batch_ops == s->batch_ops &&
         x->root == s->root && !strcmp(x->func_name, s->func_name) && !strcmp(x->dtype, s->dtype);
}

/* A percentile column: the value, or "-" below its minimum of timed calls. */
static void pct_cell(char* buf, size_t n, double ns, uint64_t timed, uint64_t min_calls) {
  if (timed >= min_calls)
    snprintf(buf, n, "%.2f", ns / 1e3);
  else
    snprintf(buf, n, "-");
}

/* The narrow form, as nccl-tests prints it: one block per communicator, one row per
 * (collective, size, type, root, batch), algorithms and protocols folded together. */
static void text_collectives_narrow(const ns_summary* sm, sum_row* rows, size_t nr, FILE* out) {
  fprintf(out,
          "# ncclscope summary: collectives, per communicator (as nccl-tests prints them; --wide: per algorithm,\n"
          "# protocol and rank count). time: mean over timed calls (each rank's first min(5, calls/4) calls are\n"
          "# warm-up, left out); bandwidth as nccl-tests computes it from it. calls: timed calls of all ranks;\n"
          "# p50 from >= %d of them, p99 from >= %d, else '-'. redop is not in NCCL's profiler events: '-';\n"
          "# root for Broadcast, Reduce. basis: gpu (kernel timers), exec or enqueue (host times), batch N (N ops\n"
          "# shared one kernel batch: a call is the batch, its size the sum of its ops').\n",
          NS_SUMMARY_P50_MIN_CALLS, NS_SUMMARY_P99_MIN_CALLS);
  unsigned char* done = calloc(nr ? nr : 1, 1);
  if (!done) return;
  for (size_t c = 0; c < nr; c++) {
    if (done[c]) continue;
    uint64_t comm_id = rows[c].row.comm_id;
    const char* name = comm_name(sm, comm_id);
    fprintf(out, "\n# communicator 0x%016llx%s%s%s, %u ranks\n", (unsigned long long)comm_id, name ? " (" : "",
            name ? name : "", name ? ")" : "", rows[c].row.nranks);
    fprintf(out, "# %-13s %11s %10s %8s %5s %10s %7s %7s %9s %9s %7s  %s\n", "collective", "size(B)", "count",
            "type", "redop", "time(us)", "algbw", "busbw", "p50(us)", "p99(us)", "calls", "basis");
    fprintf(out, "# %-13s %11s %10s %8s %5s %10s %7s %7s\n", "", "", "", "", "/root", "", "(GB/s)", "(GB/s)");
    for (size_t i = c; i < nr; i++) {
      if (done[i] || rows[i].row.comm_id != comm_id) continue;
      /* this row and the later ones of other algorithms or protocols, folded */
      ns_row_acc r = rows[i].row;
      ns_pct_init(&r.pct);
      ns_pct_merge(&r.pct, &rows[i].row.pct);
      done[i] = 1;
      for (size_t k = i + 1; k < nr; k++) {
        const ns_row_acc* s = &rows[k].row;
        if (done[k] || !same_but_algo(s, &r)) continue;
        done[k] = 1;
        r.calls += s->calls;
        r.warmup += s->warmup;
        r.dur_ns_sum += s->dur_ns_sum;
        if (s->basis_min < r.basis_min) r.basis_min = s->basis_min;
        if (s->basis_max > r.basis_max) r.basis_max = s->basis_max;
        ns_pct_merge(&r.pct, &s->pct);
      }
      row_figures f = figures(&r);
      uint64_t timed = r.calls - r.warmup;
      char p50[24], p99[24], root[24], basis[24];
      pct_cell(p50, sizeof p50, f.p50_ns, timed, NS_SUMMARY_P50_MIN_CALLS);
      pct_cell(p99, sizeof p99, f.p99_ns, timed, NS_SUMMARY_P99_MIN_CALLS);
      if (r.root >= 0)
        snprintf(root, sizeof root, "%lld", (long long)r.root);
      else
        snprintf(root, sizeof root, "-");
      if (r.batch_ops)
        snprintf(basis, sizeof basis, "batch %u", r.batch_ops);
      else if (r.basis_min == r.basis_max)
        snprintf(basis, sizeof basis, "%s", basis_name(r.basis_min));
      else
        snprintf(basis, sizeof basis, "%s..%s", basis_name(r.basis_min), basis_name(r.basis_max));
      fprintf(out, "  %-13s %11llu %10llu %8s %5s %10.2f %7.2f %7.2f %9s %9s %7llu  %s\n",
              r.func_name[0] ? r.func_name : "?", (unsigned long long)r.bytes, (unsigned long long)r.count_elems,
              ns_dtype_short(r.dtype), root, f.mean_ns / 1e3, f.algbw, f.busbw, p50, p99, (unsigned long long)timed,
              basis);
      ns_pct_free(&r.pct);
    }
  }
  free(done);
}

static void text_collectives(ns_summary* sm, int wide, FILE* out) {
  size_t nr = 0;
  sum_row* rows = sorted_rows(sm, &nr);
  if (wide)
    text_collectives_wide(rows, nr, out);
  else
    text_collectives_narrow(sm, rows, nr, out);
}

static void text_links(const ns_summary* sm, size_t max_links, FILE* out) {
  size_t nl = sm->nlinks, nr = sm->nranked;
  const sum_link* ranked_links = sm->ranked;
  fprintf(out, "\n# slowest links: one channel's send connection, SendWait -> stop per step, fitted in MIN mode\n");
  uint64_t shed = sm->steps_unanalysed;
  if (shed)
    fprintf(out, "# %llu ProxySteps are in the trace but not in these rows: the writer fell behind and left them out\n"
                 "# of its live analysis (NCCLSCOPE_SHED_FILL); `ncclscope report` on the trace counts every step\n",
            (unsigned long long)shed);
  fprintf(out, "# (time = latency + size / bandwidth through the fastest time of each size) from >= %d sizes seen\n",
          NS_LINK_FIT_SIZES);
  fprintf(out, "# >= %d times spanning >= %gx; slowest first. Rows that measure no link are below, never ranked.\n",
          NS_LINK_MIN_SEEN, NS_LINK_FIT_SPAN);
  fprintf(out, "# %-18s %6s %6s %4s %10s %14s %10s %11s %6s %6s\n", "commId", "rank", "peer", "ch", "steps", "bytes",
          "lat(us)", "bw(GB/s)", "R2", "sizes");
  for (size_t i = 0; i < sm->nranked_kept && i < max_links; i++) {
    const ns_link_stats* s = &ranked_links[i].s;
    fprintf(out, "  0x%016llx %6d %6d %4d %10llu %14llu %10.2f %11.2f %6.3f %6llu\n",
            (unsigned long long)ranked_links[i].comm_id, s->rank, s->peer, s->channel, (unsigned long long)s->steps,
            (unsigned long long)s->bytes, s->min.latency_us, s->min.bandwidth_gbs, s->min.r2,
            (unsigned long long)s->min.n);
  }
  if (nr > max_links) fprintf(out, "  (%zu more)\n", nr - max_links);
  fprintf(out, "\n# not ranked: receive waits (RecvWait -> stop: the peer, the transfer, the flush and the GPU; no\n");
  fprintf(out, "# link estimate), all channels of a peer together, and links without a fit (why, and the fastest\n");
  fprintf(out, "# time per size instead: bytes:us, the most frequent sizes)\n");
  fprintf(out, "# %-18s %6s %6s %4s %4s %10s %14s %-13s %10s %11s  %s\n", "commId", "rank", "peer", "dir", "ch", "steps",
          "bytes", "what", "lat(us)", "bw(GB/s)", "fastest per size / why no fit");
  size_t shown = 0;
  const sum_link* links = sm->other;
  for (size_t i = 0; i < sm->nother_kept && shown < max_links; i++, shown++) {
    const ns_link_stats* s = &links[i].s;
    char lat[16] = "-", bw[16] = "-", per[320];
    if (s->nofit == NS_LINK_FIT) {
      snprintf(lat, sizeof lat, "%.2f", s->min.latency_us);
      snprintf(bw, sizeof bw, "%.2f", s->min.bandwidth_gbs);
    }
    size_t len = 0;
    per[0] = '\0';
    for (uint32_t k = 0; k < s->nsizes && k < NS_LINK_SIZES_SHOWN && len < sizeof per; k++)
      len += (size_t)snprintf(per + len, sizeof per - len, "%s%llu:%.2f", k ? " " : "",
                              (unsigned long long)s->sizes[k].bytes, s->sizes[k].min_us);
    fprintf(out, "  0x%016llx %6d %6d %4s %4d %10llu %14llu %-13s %10s %11s  %s%s%s\n",
            (unsigned long long)links[i].comm_id, s->rank, s->peer, s->is_send ? "send" : "recv", s->channel,
            (unsigned long long)s->steps, (unsigned long long)s->bytes, link_kind(s), lat, bw, per,
            s->nofit ? "; " : "", ns_link_nofit_reason(s->nofit));
  }
  if (nl - nr > shown) fprintf(out, "  (%zu more)\n", nl - nr - shown);
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
static int drift_known(const ns_clock_fit* f) { return f->bounded && f->drift_err_ppm <= DRIFT_KNOWN_PPM; }

static void text_clocks(const ns_summary* sm, FILE* out) {
  fprintf(out, "\n# GPU clock fit per GPU (gpu = t + offset + drift*(t - ref)); error = bound on |converted - true|\n");
  fprintf(out, "# over the samples' span. Samples: KernelCh callbacks (after the GPU time they carry) and launch\n");
  fprintf(out, "# calls and receive handovers (before it) of ops whose pTimers are their own; rejected: those that\n");
  fprintf(out, "# contradicted the callbacks. foreign: ops whose pTimers may be another work's (work-counter\n");
  fprintf(out, "# drift / ring overrun / before their launch): their GPU times are published unbounded.\n");
  fprintf(out, "# %-18s %6s %-22s %10s %24s %20s %12s %8s %6s %s\n", "commId", "rank", "gpu", "samples", "offset(us)",
          "drift(ppm)", "error(us)", "rejected", "resets", "foreign (drift/overrun/causal)");
  size_t drifted = 0;
  for (size_t i = 0; i < sm->nclocks; i++) {
    const sum_clock* k = &sm->clocks[i];
    const ns_clock_fit* f = &k->fit;
    const uint64_t* v = k->verdicts;
    char err[32], drift[32];
    if (f->bounded)
      snprintf(err, sizeof err, "%.3f", f->error_ns / 1e3);
    else
      snprintf(err, sizeof err, "unbounded");
    if (drift_known(f))
      snprintf(drift, sizeof drift, "%.3f+-%.3f", f->drift_ppm, f->drift_err_ppm);
    else
      snprintf(drift, sizeof drift, "unknown");
    fprintf(out, "  0x%016llx %6d %-22s %10llu %24.3f %20s %12s %8llu %6llu %llu (%llu/%llu/%llu)\n",
            (unsigned long long)k->comm_id, k->rank, k->gpu, (unsigned long long)f->samples,
            (double)f->offset_ns / 1e3, drift, err, (unsigned long long)f->rejected, (unsigned long long)f->resets,
            (unsigned long long)f->ops_foreign, (unsigned long long)v[NS_PT_DRIFT],
            (unsigned long long)v[NS_PT_OVERRUN], (unsigned long long)v[NS_PT_CAUSAL]);
    drifted += v[NS_PT_DRIFT] ? 1 : 0;
  }
  /* what a user can do about the commonest loss of GPU times (docs/metrics.md, "Whose time a pTimer is") */
  if (drifted)
    fprintf(out,
            "# %zu (communicator, rank) row(s) above lost GPU times to work-counter drift: a work NCCL gives no profiler\n"
            "# op ran on them (a Broadcast with no Coll, which NCCL 2.29+ runs through the AllGatherV scheduler:\n"
            "# PyTorch DDP broadcasts its model at start; or a send/recv to the rank itself), so every later\n"
            "# pTimer may be another work's. Their times and bandwidth fall back to the host's (exec basis).\n"
            "# NCCL_ALLGATHERV_ENABLE=0 avoids the Broadcast case.\n",
            drifted);
}

/* The plugin's own losses: the summary's first lines. */
static void text_recording(const ns_summary_recording* r, FILE* out) {
  int complete = !r->records_dropped && !r->bytes_lost;
  if (complete && !r->steps_unanalysed) {
    fprintf(out, "# recording: complete: %llu events recorded, nothing dropped, every byte written\n\n",
            (unsigned long long)r->events);
    return;
  }
  fprintf(out, "# recording: %s: %llu events recorded; %llu records dropped (ring full: starts, stops, states);\n"
               "#   %llu trace bytes lost to write errors (%llu whole blocks, %llu write error(s)); %llu ProxySteps\n"
               "#   not in the figures below (`ncclscope report` on the trace analyses them)\n\n",
          complete ? "complete" : "INCOMPLETE", (unsigned long long)r->events, (unsigned long long)r->records_dropped,
          (unsigned long long)r->bytes_lost, (unsigned long long)r->blocks_lost, (unsigned long long)r->write_errors,
          (unsigned long long)r->steps_unanalysed);
}

static size_t max_links_of(const ns_summary_options* opt) { return opt && opt->max_links ? opt->max_links : 10; }

ns_summary* ns_summary_new(const ns_summary_options* opt) {
  ns_summary* sm = calloc(1, sizeof *sm);
  if (sm) sm->max_links = max_links_of(opt);
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
  if (add_rows(sm, a) || add_links(sm, a) || add_clocks(sm, a) || add_names(sm, a)) return -1;
  sm->steps_unanalysed += a->st.steps_unanalysed;
  return 0;
}

/* The summary of a list of analyses, by the accumulator; -1 when out of memory. */
static ns_summary* summary_of(ns_analysis* const* list, size_t n, const ns_summary_options* opt) {
  ns_summary* sm = ns_summary_new(opt);
  for (size_t i = 0; sm && i < n; i++)
    if (ns_summary_add(sm, list[i])) {
      ns_summary_free(sm);
      return NULL;
    }
  return sm;
}

int ns_summary_text(ns_summary* sm, const ns_summary_options* opt, FILE* out) {
  size_t max_links = max_links_of(opt);
  if (max_links > sm->max_links) max_links = sm->max_links;
  unsigned sec = opt && opt->sections ? opt->sections : ~0u;
  if (opt && opt->recording) text_recording(opt->recording, out);
  if (sec & NS_SUMMARY_COLLECTIVES) text_collectives(sm, opt && opt->wide, out);
  if (sec & NS_SUMMARY_LINKS) text_links(sm, max_links, out);
  if (sec & NS_SUMMARY_CLOCKS) text_clocks(sm, out);
  return ferror(out) ? -1 : 0;
}

int ns_analysis_summary_text(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  ns_summary* sm = summary_of(list, n, opt);
  int rc = sm ? ns_summary_text(sm, opt, out) : -1;
  ns_summary_free(sm);
  return rc;
}

static void json_num(FILE* out, double v) {
  if (isfinite(v))
    fprintf(out, "%.6g", v);
  else
    fputs("null", out);
}

/* One link row; kind: NULL for a ranked link, else what the row is. */
static void json_link(FILE* out, const sum_link* l, int comma, const char* kind) {
  const ns_link_stats* s = &l->s;
  fprintf(out, "%s{\"commId\":\"0x%llx\",\"rank\":%d,\"peer\":%d,\"isSend\":%s,\"channel\":%d,\"steps\":%llu,"
          "\"bytes\":%llu", comma ? "," : "", (unsigned long long)l->comm_id, s->rank, s->peer,
          s->is_send ? "true" : "false", s->channel, (unsigned long long)s->steps, (unsigned long long)s->bytes);
  if (kind) {
    fputs(",\"kind\":", out);
    ns_json_write_str(out, kind, 0);
  }
  fputs(",\"noFit\":", out);
  if (s->nofit)
    ns_json_write_str(out, ns_link_nofit_reason(s->nofit), 0);
  else
    fputs("null", out);
  fprintf(out, ",\"sizes\":%u,\"minPerSize\":[", s->nsizes);
  for (uint32_t k = 0; k < s->nsizes && k < NS_LINK_SIZES_SHOWN; k++) {
    fprintf(out, "%s{\"bytes\":%llu,\"minUs\":", k ? "," : "", (unsigned long long)s->sizes[k].bytes);
    json_num(out, s->sizes[k].min_us);
    fprintf(out, ",\"n\":%llu}", (unsigned long long)s->sizes[k].n);
  }
  fputc(']', out);
  const ns_regression* m[2] = {&s->min, &s->avg};
  const char* nm[2] = {"min", "avg"};
  for (int k = 0; k < 2; k++) {
    fprintf(out, ",\"%s\":{\"points\":%llu,\"ok\":%s,\"latencyUs\":", nm[k], (unsigned long long)m[k]->n,
            m[k]->ok ? "true" : "false");
    json_num(out, m[k]->latency_us);
    fputs(",\"bandwidthGBs\":", out);
    json_num(out, m[k]->bandwidth_gbs);
    fputs(",\"r2\":", out);
    json_num(out, m[k]->r2);
    fputc('}', out);
  }
  fputc('}', out);
}

int ns_summary_json(ns_summary* sm, const ns_summary_options* opt, FILE* out) {
  size_t max_links = max_links_of(opt);
  if (max_links > sm->max_links) max_links = sm->max_links;
  size_t nr = 0;
  sum_row* rows = sorted_rows(sm, &nr);
  fputs("{\"collectives\":[", out);
  for (size_t i = 0; rows && i < nr; i++) {
    ns_row_acc* r = &rows[i].row;
    row_figures f = figures(r);
    fputs(i ? ",{\"func\":" : "{\"func\":", out);
    ns_json_write_str(out, r->func_name, 0);
    fprintf(out, ",\"nranks\":%u,\"bytes\":%llu,\"count\":%llu,\"dtype\":", r->nranks,
            (unsigned long long)r->bytes, (unsigned long long)r->count_elems);
    ns_json_write_str(out, r->dtype, 0);
    fprintf(out, ",\"commId\":\"0x%llx\"", (unsigned long long)r->comm_id);
    if (r->root >= 0) fprintf(out, ",\"root\":%lld", (long long)r->root);
    fputs(",\"algo\":", out);
    ns_json_write_str(out, r->algo, 0);
    fputs(",\"proto\":", out);
    ns_json_write_str(out, r->proto, 0);
    fprintf(out, ",\"ranks\":%u,\"calls\":%llu,\"callsPerRankMin\":%llu,\"callsPerRankMax\":%llu,"
                 "\"warmupCalls\":%llu,\"timedCalls\":%llu,\"timeUs\":",
            r->ranks, (unsigned long long)r->calls, (unsigned long long)r->calls_min, (unsigned long long)r->calls_max,
            (unsigned long long)r->warmup, (unsigned long long)(r->calls - r->warmup));
    json_num(out, f.mean_ns / 1e3);
    fputs(",\"p50Us\":", out);
    json_num(out, f.p50_ns / 1e3);
    fputs(",\"p90Us\":", out);
    json_num(out, r->calls > r->warmup ? ns_pct_get(&r->pct, 0.9) / 1e3 : 0);
    fputs(",\"p99Us\":", out);
    json_num(out, f.p99_ns / 1e3);
    fputs(",\"maxUs\":", out);
    json_num(out, (double)r->pct.max / 1e3);
    fputs(",\"algbwGBs\":", out);
    json_num(out, f.algbw);
    fputs(",\"busbwGBs\":", out);
    json_num(out, f.busbw);
    fputs(",\"busbwP50GBs\":", out);
    json_num(out, f.busbw_p50);
    fputs(",\"busbwP99GBs\":", out);
    json_num(out, f.busbw_p99);
    fprintf(out, ",\"basis\":\"%s\",\"batchOps\":%u}", basis_name(r->basis_max), r->batch_ops);
  }
  fputs("],\"slowestLinks\":[", out);
  for (size_t i = 0; i < sm->nranked_kept && i < max_links; i++) json_link(out, &sm->ranked[i], i > 0, NULL);
  /* how many rows slowestLinks would have without the max_links cut (report.html says what it omits) */
  fprintf(out, "],\"rankedLinks\":%zu,\"otherLinks\":[", sm->nranked);
  for (size_t i = 0; i < sm->nother_kept && i < max_links; i++)
    json_link(out, &sm->other[i], i > 0, link_kind(&sm->other[i].s));
  fprintf(out, "],\"stepsNotAnalysed\":%llu,\"clocks\":[", (unsigned long long)sm->steps_unanalysed);
  int first = 1;
  for (size_t i = 0; i < sm->nclocks; i++) {
    const sum_clock* k = &sm->clocks[i];
    const ns_clock_fit* f = &k->fit;
    const uint64_t* v = k->verdicts;
    /* exact µs with 3 decimals from integer ns; the sign is printed apart so
     * that offsets in (-1 µs, 0) keep it */
    unsigned long long mag = f->offset_ns < 0 ? 0ull - (unsigned long long)f->offset_ns : (unsigned long long)f->offset_ns;
    fprintf(out, "%s{\"commId\":\"0x%llx\",\"rank\":%d,\"gpu\":", first ? "" : ",",
            (unsigned long long)k->comm_id, k->rank);
    ns_json_write_str(out, k->gpu, 0);
    fprintf(out, ",\"samples\":%llu,\"gpuClockOffsetUs\":%s%llu.%03llu", (unsigned long long)f->samples,
            f->offset_ns < 0 ? "-" : "", mag / 1000, mag % 1000);
    int known = drift_known(f);
    fputs(",\"gpuClockDriftPpm\":", out);
    json_num(out, known ? f->drift_ppm : NAN);
    fputs(",\"gpuClockDriftErrPpm\":", out);
    json_num(out, known ? f->drift_err_ppm : NAN);
    fputs(",\"gpuClockErrorUs\":", out);
    json_num(out, f->error_ns / 1e3);
    fprintf(out, ",\"refUs\":%llu.%03llu,\"resets\":%llu,\"rejectedSamples\":%llu", (unsigned long long)(f->ref_cpu_ns / 1000),
            (unsigned long long)(f->ref_cpu_ns % 1000), (unsigned long long)f->resets, (unsigned long long)f->rejected);
    fprintf(out, ",\"opsPtimerOwn\":%llu,\"opsPtimerForeign\":{\"drift\":%llu,\"overrun\":%llu,\"causal\":%llu}}",
            (unsigned long long)v[NS_PT_OWN], (unsigned long long)v[NS_PT_DRIFT], (unsigned long long)v[NS_PT_OVERRUN],
            (unsigned long long)v[NS_PT_CAUSAL]);
    first = 0;
  }
  fputc(']', out);
  if (opt && opt->recording) {
    const ns_summary_recording* r = opt->recording;
    /* its steps not analysed are the top-level stepsNotAnalysed */
    fprintf(out, ",\"recording\":{\"events\":%llu,\"recordsDropped\":%llu,\"bytesLostToWriteErrors\":%llu,"
                 "\"blocksLost\":%llu,\"writeErrors\":%llu,\"complete\":%s}",
            (unsigned long long)r->events, (unsigned long long)r->records_dropped, (unsigned long long)r->bytes_lost,
            (unsigned long long)r->blocks_lost, (unsigned long long)r->write_errors,
            !r->records_dropped && !r->bytes_lost ? "true" : "false");
  }
  fputs("}\n", out);
  return ferror(out) ? -1 : 0;
}

int ns_analysis_summary_json(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  ns_summary* sm = summary_of(list, n, opt);
  int rc = sm ? ns_summary_json(sm, opt, out) : -1;
  ns_summary_free(sm);
  return rc;
}
