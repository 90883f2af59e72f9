/* ncclscope analysis: the summary (nccl-tests style table, slowest links,
 * clock-fit quality) as text and JSON, merged over any number of analyses.
 *
 * Runs on the thread that owns the analyses (the plugin's last finalize on
 * the writer thread, or the CLI). Self-contained JSON output: strings are
 * escaped here, non-finite numbers are written as null.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

typedef struct {
  ns_row_acc row; /* merged; pct owned */
} sum_row;

static int row_cmp(const void* pa, const void* pb) {
  const ns_row_acc *a = &((const sum_row*)pa)->row, *b = &((const sum_row*)pb)->row;
  int c = strcmp(a->func_name, b->func_name);
  if (c) return c;
  if (a->nranks != b->nranks) return a->nranks < b->nranks ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
  if (a->batch_ops != b->batch_ops) return a->batch_ops < b->batch_ops ? -1 : 1;
  return strcmp(a->dtype, b->dtype);
}

static sum_row* merge_rows(ns_analysis* const* list, size_t n, size_t* out_n) {
  size_t cap = 0, cnt = 0;
  for (size_t i = 0; i < n; i++) cap += list[i]->nrows;
  sum_row* rows = calloc(cap ? cap : 1, sizeof *rows);
  if (!rows) return NULL;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < list[i]->nrows; j++) {
      const ns_row_acc* s = &list[i]->rows[j];
      sum_row* d = NULL;
      for (size_t k = 0; k < cnt; k++) {
        ns_row_acc* x = &rows[k].row;
        if (x->nranks == s->nranks && x->bytes == s->bytes && x->batch_ops == s->batch_ops &&
            !strcmp(x->func_name, s->func_name) && !strcmp(x->dtype, s->dtype)) {
          d = &rows[k];
          break;
        }
      }
      if (!d) {
        d = &rows[cnt++];
        d->row = *s;
        ns_pct_init(&d->row.pct);
        d->row.calls = 0;
        d->row.dur_ns_sum = 0;
      }
      d->row.calls += s->calls;
      d->row.dur_ns_sum += s->dur_ns_sum;
      if (s->basis_min < d->row.basis_min) d->row.basis_min = s->basis_min;
      if (s->basis_max > d->row.basis_max) d->row.basis_max = s->basis_max;
      ns_pct_merge(&d->row.pct, &s->pct);
    }
  }
  qsort(rows, cnt, sizeof *rows, row_cmp);
  *out_n = cnt;
  return rows;
}

static void free_rows(sum_row* rows, size_t n) {
  for (size_t i = 0; i < n; i++) ns_pct_free(&rows[i].row.pct);
  free(rows);
}

typedef struct {
  ns_link_stats s;
  uint64_t comm_id;
} sum_link;

static double link_rank_bw(const ns_link_stats* s) {
  if (s->min.ok) return s->min.bandwidth_gbs;
  if (s->avg.ok) return s->avg.bandwidth_gbs;
  return INFINITY;
}

static int link_cmp(const void* pa, const void* pb) {
  double x = link_rank_bw(&((const sum_link*)pa)->s), y = link_rank_bw(&((const sum_link*)pb)->s);
  return x < y ? -1 : x > y;
}

/* Links over all channels (channel -1), whole run (closed and open windows). */
static sum_link* merge_links(ns_analysis* const* list, size_t n, size_t* out_n) {
  size_t cnt = 0, cap = 0;
  sum_link* out = NULL;
  for (size_t i = 0; i < n; i++) {
    ns_aggr tmp;
    memset(&tmp, 0, sizeof tmp);
    const ns_analysis* a = list[i];
    for (size_t k = 0; k < a->total.nl; k++)
      if (a->total.l[k].key.channel == -1) ns_aggr_link_merge(&tmp, &a->total.l[k]);
    for (size_t w = 0; w < a->nwins; w++)
      for (size_t k = 0; k < a->wins[w].ag.nl; k++)
        if (a->wins[w].ag.l[k].key.channel == -1) ns_aggr_link_merge(&tmp, &a->wins[w].ag.l[k]);
    if (cnt + tmp.nl > cap) {
      cap = (cnt + tmp.nl) * 2;
      sum_link* no = realloc(out, cap * sizeof *no);
      if (!no) {
        ns_aggr_free(&tmp);
        break;
      }
      out = no;
    }
    for (size_t k = 0; k < tmp.nl; k++) {
      ns_link_publish(&tmp.l[k], &out[cnt].s);
      const ns_comm_state* cs = tmp.l[k].key.comm < a->ncomms ? a->comms[tmp.l[k].key.comm] : NULL;
      out[cnt].comm_id = cs ? cs->comm_id : 0;
      cnt++;
    }
    ns_aggr_free(&tmp);
  }
  if (out) qsort(out, cnt, sizeof *out, link_cmp);
  *out_n = cnt;
  return out;
}

static const char* basis_name(int b) {
  static const char* const names[] = {"none", "enqueue", "exec", "gpu", "batch"};
  return b >= 0 && b <= NS_BASIS_BATCH ? names[b] : "?";
}

static void text_collectives(ns_analysis* const* list, size_t n, FILE* out) {
  size_t nr = 0;
  sum_row* rows = merge_rows(list, n, &nr);
  fprintf(out, "# ncclscope summary: collectives (time = mean per call; bandwidth as nccl-tests computes it)\n");
  fprintf(out, "# rows with a batch: ops that shared one kernel batch, whose only GPU time is the batch's; a call\n");
  fprintf(out, "# is then one batch, its size the sum of its ops' (NCCL gives every work of a batch one interval)\n");
  fprintf(out, "# %-14s %6s %14s %13s %9s %8s %11s %11s %11s %10s %10s  %-8s %s\n", "collective", "nranks", "size(B)",
          "count(elems)", "type", "calls", "time(us)", "p50(us)", "p99(us)", "algbw", "busbw", "basis", "batch");
  fprintf(out, "# %-14s %6s %14s %13s %9s %8s %11s %11s %11s %10s %10s\n", "", "", "", "", "", "", "", "", "",
          "(GB/s)", "(GB/s)");
  for (size_t i = 0; rows && i < nr; i++) {
    ns_row_acc* r = &rows[i].row;
    double mean_ns = r->calls ? (double)r->dur_ns_sum / (double)r->calls : 0;
    double alg = mean_ns > 0 ? (double)r->bytes / mean_ns : 0;
    double bus = alg * ns_busbw_factor(r->func, r->nranks);
    char basis[24];
    if (r->basis_min == r->basis_max)
      snprintf(basis, sizeof basis, "%s", basis_name(r->basis_min));
    else
      snprintf(basis, sizeof basis, "%s..%s", basis_name(r->basis_min), basis_name(r->basis_max));
    char batch[24] = "-";
    if (r->batch_ops) snprintf(batch, sizeof batch, "%u ops", r->batch_ops);
    fprintf(out, "  %-14s %6u %14llu %13llu %9s %8llu %11.2f %11.2f %11.2f %10.2f %10.2f  %-8s %s\n",
            r->func_name[0] ? r->func_name : "?", r->nranks, (unsigned long long)r->bytes,
            (unsigned long long)r->count_elems, ns_dtype_short(r->dtype), (unsigned long long)r->calls, mean_ns / 1e3,
            ns_pct_get(&r->pct, 0.5) / 1e3, ns_pct_get(&r->pct, 0.99) / 1e3, alg, bus, basis, batch);
  }
  free_rows(rows, nr);
}

static void text_links(ns_analysis* const* list, size_t n, size_t max_links, FILE* out) {
  size_t nl = 0;
  sum_link* links = merge_links(list, n, &nl);
  fprintf(out, "\n# slowest links (MIN-mode regression: time = latency + size / bandwidth)\n");
  fprintf(out, "# %-18s %6s %6s %4s %10s %14s %10s %11s %6s %10s %11s %6s\n", "commId", "rank", "peer", "dir", "steps",
          "bytes", "lat(us)", "bw(GB/s)", "R2", "avg lat", "avg bw", "avg R2");
  for (size_t i = 0; links && i < nl && i < max_links; i++) {
    const ns_link_stats* s = &links[i].s;
    fprintf(out, "  0x%016llx %6d %6d %4s %10llu %14llu %10.2f %11.2f %6.3f %10.2f %11.2f %6.3f\n",
            (unsigned long long)links[i].comm_id, s->rank, s->peer, s->is_send ? "send" : "recv",
            (unsigned long long)s->steps, (unsigned long long)s->bytes, s->min.latency_us, s->min.bandwidth_gbs,
            s->min.r2, s->avg.latency_us, s->avg.bandwidth_gbs, s->avg.r2);
  }
  free(links);
}

/* The communicators with a clock fit, over every analysis of the list:
 * for (fit_iter it = {0}; next_fit(list, n, &it);) uses it.cs and it.fit. */
typedef struct {
  size_t a, c;
  const ns_comm_state* cs;
  ns_clock_fit fit;
} fit_iter;

static int next_fit(ns_analysis* const* list, size_t n, fit_iter* it) {
  for (; it->a < n; it->a++, it->c = 0)
    while (it->c < list[it->a]->ncomms) {
      const ns_comm_state* cs = list[it->a]->comms[it->c++];
      if (!cs) continue;
      const ns_clockfit* cf = ns_an_clock(list[it->a], cs);
      if (!cf) continue;
      ns_cf_get(cf, &it->fit);
      if (!it->fit.valid) continue;
      it->cs = cs;
      return 1;
    }
  return 0;
}

static void text_clocks(ns_analysis* const* list, size_t n, FILE* out) {
  fprintf(out, "\n# GPU clock fit (gpu = t + offset + drift*(t - ref)); error = bound on |converted - true|\n");
  fprintf(out, "# %-18s %6s %10s %24s %12s %12s %8s\n", "commId", "rank", "samples", "offset(us)", "drift(ppm)",
          "error(us)", "resets");
  for (fit_iter it = {0}; next_fit(list, n, &it);) {
    const ns_clock_fit* f = &it.fit;
    char err[32];
    if (f->bounded)
      snprintf(err, sizeof err, "%.3f", f->error_ns / 1e3);
    else
      snprintf(err, sizeof err, "unbounded");
    fprintf(out, "  0x%016llx %6d %10llu %24.3f %12.4f %12s %8llu\n", (unsigned long long)it.cs->comm_id,
            it.cs->rank, (unsigned long long)f->samples, (double)f->offset_ns / 1e3, f->drift_ppm, err,
            (unsigned long long)f->resets);
  }
}

int ns_analysis_summary_text(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  size_t max_links = opt && opt->max_links ? opt->max_links : 10;
  unsigned sec = opt && opt->sections ? opt->sections : ~0u;
  if (sec & NS_SUMMARY_COLLECTIVES) text_collectives(list, n, out);
  if (sec & NS_SUMMARY_LINKS) text_links(list, n, max_links, out);
  if (sec & NS_SUMMARY_CLOCKS) text_clocks(list, n, out);
  return ferror(out) ? -1 : 0;
}

static void json_str(FILE* out, const char* s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void json_num(FILE* out, double v) {
  if (isfinite(v))
    fprintf(out, "%.6g", v);
  else
    fputs("null", out);
}

int ns_analysis_summary_json(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  size_t max_links = opt && opt->max_links ? opt->max_links : 10;
  size_t nr = 0, nl = 0;
  sum_row* rows = merge_rows(list, n, &nr);
  fputs("{\"collectives\":[", out);
  for (size_t i = 0; rows && i < nr; i++) {
    ns_row_acc* r = &rows[i].row;
    double mean_ns = r->calls ? (double)r->dur_ns_sum / (double)r->calls : 0;
    double alg = mean_ns > 0 ? (double)r->bytes / mean_ns : 0;
    fputs(i ? ",{\"func\":" : "{\"func\":", out);
    json_str(out, r->func_name);
    fprintf(out, ",\"nranks\":%u,\"bytes\":%llu,\"count\":%llu,\"dtype\":", r->nranks, (unsigned long long)r->bytes,
            (unsigned long long)r->count_elems);
    json_str(out, r->dtype);
    fprintf(out, ",\"calls\":%llu,\"timeUs\":", (unsigned long long)r->calls);
    json_num(out, mean_ns / 1e3);
    fputs(",\"p50Us\":", out);
    json_num(out, ns_pct_get(&r->pct, 0.5) / 1e3);
    fputs(",\"p90Us\":", out);
    json_num(out, ns_pct_get(&r->pct, 0.9) / 1e3);
    fputs(",\"p99Us\":", out);
    json_num(out, ns_pct_get(&r->pct, 0.99) / 1e3);
    fputs(",\"maxUs\":", out);
    json_num(out, (double)r->pct.max / 1e3);
    fputs(",\"algbwGBs\":", out);
    json_num(out, alg);
    fputs(",\"busbwGBs\":", out);
    json_num(out, alg * ns_busbw_factor(r->func, r->nranks));
    fprintf(out, ",\"basis\":\"%s\",\"batchOps\":%u}", basis_name(r->basis_max), r->batch_ops);
  }
  free_rows(rows, nr);
  fputs("],\"slowestLinks\":[", out);
  sum_link* links = merge_links(list, n, &nl);
  for (size_t i = 0; links && i < nl && i < max_links; i++) {
    const ns_link_stats* s = &links[i].s;
    fprintf(out, "%s{\"commId\":\"0x%llx\",\"rank\":%d,\"peer\":%d,\"isSend\":%s,\"steps\":%llu,\"bytes\":%llu",
            i ? "," : "", (unsigned long long)links[i].comm_id, s->rank, s->peer, s->is_send ? "true" : "false",
            (unsigned long long)s->steps, (unsigned long long)s->bytes);
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
  free(links);
  fputs("],\"clocks\":[", out);
  int first = 1;
  for (fit_iter it = {0}; next_fit(list, n, &it);) {
    const ns_clock_fit* f = &it.fit;
    /* exact µs with 3 decimals from integer ns; the sign is printed apart so
     * that offsets in (-1 µs, 0) keep it */
    unsigned long long mag = f->offset_ns < 0 ? 0ull - (unsigned long long)f->offset_ns : (unsigned long long)f->offset_ns;
    fprintf(out, "%s{\"commId\":\"0x%llx\",\"rank\":%d,\"samples\":%llu,\"gpuClockOffsetUs\":%s%llu.%03llu",
            first ? "" : ",", (unsigned long long)it.cs->comm_id, it.cs->rank, (unsigned long long)f->samples,
            f->offset_ns < 0 ? "-" : "", mag / 1000, mag % 1000);
    fputs(",\"gpuClockDriftPpm\":", out);
    json_num(out, f->drift_ppm);
    fputs(",\"gpuClockErrorUs\":", out);
    json_num(out, f->error_ns / 1e3);
    fprintf(out, ",\"refUs\":%llu.%03llu,\"resets\":%llu}", (unsigned long long)(f->ref_cpu_ns / 1000),
            (unsigned long long)(f->ref_cpu_ns % 1000), (unsigned long long)f->resets);
    first = 0;
  }
  fputs("]}\n", out);
  return ferror(out) ? -1 : 0;
}
