/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: one line of windows.jsonl per closed window, exactly
 * what the other outputs export after it (cumulative counters and
 * histograms, the window's gauges), so offline tools see what a collector
 * saw. Fields: docs/metrics.md, "windows.jsonl". Writer thread. */
#include "sinks/outputs.h"

static void labels(ns_json* j, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  const ns_mres* r = ns_metrics_res(m, p->res);
  nsj_key(j, "labels");
  nsj_obj_begin(j);
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  for (unsigned k = 0; k < ni; k++) nsj_kstr(j, ik[k], iv[k]);
  if (p->res == 0) {
    nsj_kstr(j, "pid", r->rank_str);
  } else {
    nsj_kstr(j, "comm", r->comm_hex);
    nsj_kstr(j, "rank", r->rank_str);
  }
  for (unsigned k = 0; k < p->nlabels; k++) nsj_kstr(j, p->labels[k].key, p->labels[k].val);
  nsj_obj_end(j);
}

static void point(ns_json* j, const ns_metrics* m, const ns_mprocess* proc, const ns_mfamily* fam,
                  const ns_mpoint* pt) {
  nsj_obj_begin(j);
  labels(j, m, proc, pt);
  if (fam->d->kind == NS_MK_HISTOGRAM) {
    nsj_ku64(j, "count", pt->count);
    nsj_key(j, "sum");
    ns_sink_json_f64(j, pt->sum);
    nsj_key(j, "buckets");
    nsj_arr_begin(j);
    for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) nsj_u64(j, pt->buckets[k]);
    nsj_arr_end(j);
    nsj_key(j, "bounds");
    nsj_arr_begin(j);
    for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) ns_sink_json_f64(j, ns_metrics_bound_s(k));
    nsj_arr_end(j);
  } else {
    nsj_key(j, "value");
    ns_sink_json_f64(j, pt->value);
  }
  nsj_obj_end(j);
}

void ns_jsonl_window(const ns_metrics* m, const ns_mprocess* p, ns_buf* b) {
  static const char* const type[] = {"counter", "gauge", "histogram"};
  ns_json* j = nsj_new_buf(b);
  if (!j) return;
  nsj_obj_begin(j);
  nsj_ku64(j, "window", ns_metrics_window_index(m));
  nsj_ku64(j, "startUnixNs", ns_metrics_win_start_unix_ns(m));
  nsj_ku64(j, "endUnixNs", ns_metrics_end_unix_ns(m));
  nsj_ku64(j, "cumulativeSinceUnixNs", ns_metrics_start_unix_ns(m));
  nsj_kstr(j, "host", p->host ? p->host : "");
  nsj_ku64(j, "pid", p->pid);
  nsj_ku64(j, "series", ns_metrics_series(m));
  nsj_ku64(j, "refused", ns_metrics_refused(m));
  nsj_key(j, "communicators");
  nsj_arr_begin(j);
  for (size_t r = 1; r < ns_metrics_nres(m); r++) {
    const ns_mres* res = ns_metrics_res(m, r);
    nsj_obj_begin(j);
    nsj_kstr(j, "comm", res->comm_hex);
    nsj_ki64(j, "rank", res->rank);
    nsj_ku64(j, "nranks", res->nranks);
    nsj_kstr(j, "gpuUuid", res->uuid);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
  nsj_key(j, "metrics");
  nsj_arr_begin(j);
  for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
    const ns_mfamily* fam = ns_metrics_family(m, f);
    if (!fam->n) continue;
    nsj_obj_begin(j);
    nsj_kstr(j, "name", fam->d->prom);
    nsj_kstr(j, "otel", fam->d->otel);
    nsj_kstr(j, "type", type[fam->d->kind]);
    nsj_kstr(j, "unit", fam->d->unit);
    nsj_key(j, "points");
    nsj_arr_begin(j);
    for (size_t i = 0; i < fam->n; i++) point(j, m, p, fam, &fam->p[i]);
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
  nsj_free(j);
}
