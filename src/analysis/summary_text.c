/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary as text (summary.h): the plugin's losses,
 * the collectives (narrow as nccl-tests prints them, or wide), the slowest
 * links, the GPU clock fits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"

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
    row_figures f = ns_sum_figures(r);
    char basis[24], calls[32], comm[24];
    if (r->basis_min == r->basis_max)
      snprintf(basis, sizeof basis, "%s", ns_sum_basis_name(r->basis_min));
    else
      snprintf(basis, sizeof basis, "%s..%s", ns_sum_basis_name(r->basis_min), ns_sum_basis_name(r->basis_max));
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
      row_figures f = ns_sum_figures(&r);
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
        snprintf(basis, sizeof basis, "%s", ns_sum_basis_name(r.basis_min));
      else
        snprintf(basis, sizeof basis, "%s..%s", ns_sum_basis_name(r.basis_min), ns_sum_basis_name(r.basis_max));
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
  sum_row* rows = ns_sum_sorted_rows(sm, &nr);
  if (wide)
    text_collectives_wide(rows, nr, out);
  else
    text_collectives_narrow(sm, rows, nr, out);
}

/* A row's main part, then its tail: on the same line when both fit in
 * NS_SUMMARY_NARROW columns (or wide), else on the next line, indented. */
static void row_tail(FILE* out, int wide, int main_len, const char* tail) {
  if (!tail[0]) {
    fputc('\n', out);
    return;
  }
  if (wide || main_len + 2 + (int)strlen(tail) <= NS_SUMMARY_NARROW)
    fprintf(out, "  %s\n", tail);
  else
    fprintf(out, "\n      %s\n", tail);
}

static void text_links(const ns_summary* sm, size_t max_links, int wide, FILE* out) {
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
  if (wide)
    fprintf(out, "# %-18s %6s %6s %4s %4s %10s %14s %-13s %10s %11s  %s\n", "commId", "rank", "peer", "dir", "ch",
            "steps", "bytes", "what", "lat(us)", "bw(GB/s)", "fastest per size / why no fit");
  else
    fprintf(out, "# %-18s %5s %5s %4s %3s %8s %12s %-13s %8s %8s  %s\n", "commId", "rank", "peer", "dir", "ch", "steps",
            "bytes", "what", "lat(us)", "bw(GB/s)", "per size; why");
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
    char tail[512];
    snprintf(tail, sizeof tail, "%s%s%s", per, s->nofit && per[0] ? "; " : "", ns_link_nofit_reason(s->nofit));
    int n = fprintf(out,
                    wide ? "  0x%016llx %6d %6d %4s %4d %10llu %14llu %-13s %10s %11s"
                         : "  0x%016llx %5d %5d %4s %3d %8llu %12llu %-13s %8s %8s",
                    (unsigned long long)links[i].comm_id, s->rank, s->peer, s->is_send ? "send" : "recv", s->channel,
                    (unsigned long long)s->steps, (unsigned long long)s->bytes, ns_sum_link_kind(s), lat, bw);
    row_tail(out, wide, n, tail);
  }
  if (nl - nr > shown) fprintf(out, "  (%zu more)\n", nl - nr - shown);
}

static void text_clocks(const ns_summary* sm, int wide, FILE* out) {
  fprintf(out, "\n# GPU clock fit per GPU (gpu = t + offset + drift*(t - ref)); error = bound on |converted - true|\n");
  fprintf(out, "# over the samples' span. Samples: KernelCh callbacks (after the GPU time they carry) and launch\n");
  fprintf(out, "# calls and receive handovers (before it) of ops whose pTimers are their own; rejected: those that\n");
  fprintf(out, "# contradicted the callbacks. foreign: ops whose pTimers may be another work's (work-counter\n");
  fprintf(out, "# drift / ring overrun / before their launch): their GPU times are published unbounded.\n");
  if (wide)
    fprintf(out, "# %-18s %6s %-22s %10s %24s %20s %12s %8s %6s %s\n", "commId", "rank", "gpu", "samples", "offset(us)",
            "drift(ppm)", "error(us)", "rejected", "resets", "foreign (drift/overrun/causal)");
  else
    fprintf(out, "# %-18s %5s %8s %20s %16s %10s %4s %4s %s  %s\n", "commId", "rank", "samples", "offset(us)",
            "drift(ppm)", "error(us)", "rej", "rst", "foreign(d/o/c)", "gpu");
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
    if (ns_sum_drift_known(f))
      snprintf(drift, sizeof drift, "%.3f+-%.3f", f->drift_ppm, f->drift_err_ppm);
    else
      snprintf(drift, sizeof drift, "unknown");
    if (wide)
      fprintf(out, "  0x%016llx %6d %-22s %10llu %24.3f %20s %12s %8llu %6llu %llu (%llu/%llu/%llu)\n",
              (unsigned long long)k->comm_id, k->rank, k->gpu, (unsigned long long)f->samples,
              (double)f->offset_ns / 1e3, drift, err, (unsigned long long)f->rejected, (unsigned long long)f->resets,
              (unsigned long long)f->ops_foreign, (unsigned long long)v[NS_PT_DRIFT],
              (unsigned long long)v[NS_PT_OVERRUN], (unsigned long long)v[NS_PT_CAUSAL]);
    else
      row_tail(
          out, 0,
          fprintf(out, "  0x%016llx %5d %8llu %20.3f %16s %10s %4llu %4llu %llu(%llu/%llu/%llu)",
                  (unsigned long long)k->comm_id, k->rank, (unsigned long long)f->samples, (double)f->offset_ns / 1e3,
                  drift, err, (unsigned long long)f->rejected, (unsigned long long)f->resets,
                  (unsigned long long)f->ops_foreign, (unsigned long long)v[NS_PT_DRIFT],
                  (unsigned long long)v[NS_PT_OVERRUN], (unsigned long long)v[NS_PT_CAUSAL]),
          k->gpu);
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

/* The operations by userTag, when any call carried one. */
static void text_tags(ns_summary* sm, FILE* out) {
  size_t n = 0;
  const ns_tag_stats* t = ns_sum_sorted_tags(sm, &n);
  if (!n) return;
  fprintf(out, "\n# operations by userTag (the application's tag of a call, NCCL 2.31+), the most time first. A\n");
  fprintf(out, "# communicator keeps its %d smallest tags, the rest in `other`. time: of the timed operations (a\n",
          NS_TAGS_MAX);
  fprintf(out, "# batched one's is its batch's, not counted); mean: time / timed\n");
  fprintf(out, "# %-18s %20s %6s %10s %16s %10s %12s %10s\n", "commId", "tag", "ranks", "ops", "bytes", "timed",
          "time(ms)", "mean(us)");
  for (size_t i = 0; i < n; i++) {
    char tag[24];
    if (t[i].other)
      snprintf(tag, sizeof tag, "other");
    else
      snprintf(tag, sizeof tag, "%llu", (unsigned long long)t[i].tag);
    double mean_us = t[i].timed ? (double)t[i].dur_ns_sum / (double)t[i].timed / 1e3 : 0;
    fprintf(out, "  0x%016llx %20s %6u %10llu %16llu %10llu %12.3f %10.2f\n", (unsigned long long)t[i].comm_id, tag,
            t[i].ranks, (unsigned long long)t[i].ops, (unsigned long long)t[i].bytes, (unsigned long long)t[i].timed,
            (double)t[i].dur_ns_sum / 1e6, mean_us);
  }
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

int ns_summary_text(ns_summary* sm, const ns_summary_options* opt, FILE* out) {
  size_t max_links = ns_sum_max_links(opt);
  if (max_links > sm->max_links) max_links = sm->max_links;
  unsigned sec = opt && opt->sections ? opt->sections : ~0u;
  if (opt && opt->recording) text_recording(opt->recording, out);
  if (sec & NS_SUMMARY_COLLECTIVES) {
    text_collectives(sm, opt && opt->wide, out);
    text_tags(sm, out);
  }
  int wide = opt && opt->wide;
  if (sec & NS_SUMMARY_LINKS) text_links(sm, max_links, wide, out);
  if (sec & NS_SUMMARY_CLOCKS) text_clocks(sm, wide, out);
  return ferror(out) ? -1 : 0;
}

int ns_analysis_summary_text(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  ns_summary* sm = ns_sum_of(list, n, opt);
  int rc = sm ? ns_summary_text(sm, opt, out) : -1;
  ns_summary_free(sm);
  return rc;
}
