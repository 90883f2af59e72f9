/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: one line of windows.jsonl per closed window, exactly
 * what the other outputs export after it (cumulative counters and
 * histograms, the window's gauges), so offline tools see what a collector
 * saw. Fields: docs/metrics.md, "windows.jsonl". Writer thread. */
#include <inttypes.h>

#include "sinks/outputs.h"

static void labels(ns_buf* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  const ns_mres* r = ns_metrics_res(m, p->res);
  ns_buf_str(b, "\"labels\":{");
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  for (unsigned k = 0; k < ni; k++) {
    ns_buf_json_str(b, ik[k]);
    ns_buf_str(b, ":");
    ns_buf_json_str(b, iv[k]);
    ns_buf_str(b, ",");
  }
  if (p->res == 0) {
    ns_buf_str(b, "\"pid\":");
    ns_buf_json_str(b, r->rank_str);
  } else {
    ns_buf_str(b, "\"comm\":");
    ns_buf_json_str(b, r->comm_hex);
    ns_buf_str(b, ",\"rank\":");
    ns_buf_json_str(b, r->rank_str);
  }
  for (unsigned k = 0; k < p->nlabels; k++) {
    ns_buf_str(b, ",");
    ns_buf_json_str(b, p->labels[k].key);
    ns_buf_str(b, ":");
    ns_buf_json_str(b, p->labels[k].val);
  }
  ns_buf_str(b, "}");
}

void ns_jsonl_window(const ns_metrics* m, const ns_mprocess* p, ns_buf* b) {
  static const char* const type[] = {"counter", "gauge", "histogram"};
  ns_buf_printf(b, "{\"window\":%" PRIu64 ",\"startUnixNs\":%" PRIu64 ",\"endUnixNs\":%" PRIu64
                    ",\"cumulativeSinceUnixNs\":%" PRIu64 ",\"host\":",
                 ns_metrics_window_index(m), ns_metrics_win_start_unix_ns(m), ns_metrics_end_unix_ns(m),
                 ns_metrics_start_unix_ns(m));
  ns_buf_json_str(b, p->host ? p->host : "");
  ns_buf_printf(b, ",\"pid\":%u,\"series\":%u,\"refused\":%u,\"communicators\":[", p->pid, ns_metrics_series(m),
                 ns_metrics_refused(m));
  for (size_t r = 1; r < ns_metrics_nres(m); r++) {
    const ns_mres* res = ns_metrics_res(m, r);
    ns_buf_str(b, r > 1 ? ",{\"comm\":" : "{\"comm\":");
    ns_buf_json_str(b, res->comm_hex);
    ns_buf_printf(b, ",\"rank\":%d,\"nranks\":%u,\"gpuUuid\":", res->rank, res->nranks);
    ns_buf_json_str(b, res->uuid);
    ns_buf_str(b, "}");
  }
  ns_buf_str(b, "],\"metrics\":[");
  int first_f = 1;
  for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
    const ns_mfamily* fam = ns_metrics_family(m, f);
    if (!fam->n) continue;
    ns_buf_str(b, first_f ? "{\"name\":" : ",{\"name\":");
    first_f = 0;
    ns_buf_json_str(b, fam->d->prom);
    ns_buf_str(b, ",\"otel\":");
    ns_buf_json_str(b, fam->d->otel);
    ns_buf_printf(b, ",\"type\":\"%s\",\"unit\":", type[fam->d->kind]);
    ns_buf_json_str(b, fam->d->unit);
    ns_buf_str(b, ",\"points\":[");
    for (size_t i = 0; i < fam->n; i++) {
      const ns_mpoint* pt = &fam->p[i];
      ns_buf_str(b, i ? ",{" : "{");
      labels(b, m, p, pt);
      if (fam->d->kind == NS_MK_HISTOGRAM) {
        ns_buf_printf(b, ",\"count\":%" PRIu64 ",\"sum\":", pt->count);
        ns_buf_json_double(b, pt->sum);
        ns_buf_str(b, ",\"buckets\":[");
        for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) ns_buf_printf(b, "%s%" PRIu64, k ? "," : "", pt->buckets[k]);
        ns_buf_str(b, "],\"bounds\":[");
        for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) {
          if (k) ns_buf_str(b, ",");
          ns_buf_json_double(b, ns_metrics_bound_s(k));
        }
        ns_buf_str(b, "]");
      } else {
        ns_buf_str(b, ",\"value\":");
        ns_buf_json_double(b, pt->value);
      }
      ns_buf_str(b, "}");
    }
    ns_buf_str(b, "]}");
  }
  ns_buf_str(b, "]}\n");
}
