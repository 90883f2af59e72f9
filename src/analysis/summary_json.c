/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary as JSON (summary.h). Self-contained JSON
 * output: strings go through util/json_escape.h, non-finite numbers are
 * written as null. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/summary.h"
#include "util/json_escape.h"

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
  size_t max_links = ns_sum_max_links(opt);
  if (max_links > sm->max_links) max_links = sm->max_links;
  size_t nr = 0;
  sum_row* rows = ns_sum_sorted_rows(sm, &nr);
  fputs("{\"collectives\":[", out);
  for (size_t i = 0; rows && i < nr; i++) {
    ns_row_acc* r = &rows[i].row;
    row_figures f = ns_sum_figures(r);
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
    fprintf(out, ",\"basis\":\"%s\",\"batchOps\":%u}", ns_sum_basis_name(r->basis_max), r->batch_ops);
  }
  fputs("],\"slowestLinks\":[", out);
  for (size_t i = 0; i < sm->nranked_kept && i < max_links; i++) json_link(out, &sm->ranked[i], i > 0, NULL);
  /* how many rows slowestLinks would have without the max_links cut (report.html says what it omits) */
  fprintf(out, "],\"rankedLinks\":%zu,\"otherLinks\":[", sm->nranked);
  for (size_t i = 0; i < sm->nother_kept && i < max_links; i++)
    json_link(out, &sm->other[i], i > 0, ns_sum_link_kind(&sm->other[i].s));
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
    int known = ns_sum_drift_known(f);
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
  fputs("],\"tags\":[", out);
  size_t nt = 0;
  const ns_tag_stats* t = ns_sum_sorted_tags(sm, &nt);
  for (size_t i = 0; i < nt; i++) {
    fprintf(out, "%s{\"commId\":\"0x%llx\",\"tag\":", i ? "," : "", (unsigned long long)t[i].comm_id);
    if (t[i].other)
      fputs("\"other\"", out);
    else
      fprintf(out, "\"%llu\"", (unsigned long long)t[i].tag); /* a string: a 64-bit tag is past a double's 2^53 */
    fprintf(out, ",\"ranks\":%u,\"ops\":%llu,\"bytes\":%llu,\"timedOps\":%llu,\"totalTimeUs\":%llu.%03llu}", t[i].ranks,
            (unsigned long long)t[i].ops, (unsigned long long)t[i].bytes, (unsigned long long)t[i].timed,
            (unsigned long long)(t[i].dur_ns_sum / 1000), (unsigned long long)(t[i].dur_ns_sum % 1000));
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
  ns_summary* sm = ns_sum_of(list, n, opt);
  int rc = sm ? ns_summary_json(sm, opt, out) : -1;
  ns_summary_free(sm);
  return rc;
}

