/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP/HTTP JSON encoding (http/json) of the metrics
 * model: an ExportMetricsServiceRequest as the OTLP specification maps it
 * to JSON (lowerCamelCase fields, 64-bit integers as decimal strings, enums
 * as numbers). Writer thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/outputs.h"

static void u64(ns_buf* b, uint64_t v) { ns_buf_printf(b, "\"%" PRIu64 "\"", v); }

static void any_value(ns_buf* b, int is_int, int64_t i, const char* s) {
  if (is_int) ns_buf_printf(b, "{\"intValue\":\"%" PRId64 "\"}", i);
  else {
    ns_buf_str(b, "{\"stringValue\":");
    ns_buf_json_str(b, s);
    ns_buf_str(b, "}");
  }
}

static void key_value(ns_buf* b, int* first, const char* key, int is_int, int64_t i, const char* s) {
  ns_buf_str(b, *first ? "{\"key\":" : ",{\"key\":");
  *first = 0;
  ns_buf_json_str(b, key);
  ns_buf_str(b, ",\"value\":");
  any_value(b, is_int, i, s);
  ns_buf_str(b, "}");
}

/* ,"attributes":[...]: the identity labels of the point's resource (ns_mident), then its own */
static void point_attrs(ns_buf* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  ns_buf_str(b, ",\"attributes\":[");
  int first = 1;
  for (unsigned k = 0; k < ni; k++) key_value(b, &first, ik[k], 0, 0, iv[k]);
  for (unsigned k = 0; k < p->nlabels; k++) {
    int is_int = 0;
    const char* key = ns_otlp_attr_key(p->labels[k].key, &is_int);
    key_value(b, &first, key, is_int, strtoll(p->labels[k].val, NULL, 10), p->labels[k].val);
  }
  ns_buf_str(b, "]");
}

static void metric(ns_buf* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mfamily* fam, uint32_t res) {
  const ns_mdesc* d = fam->d;
  ns_buf_str(b, "{\"name\":");
  ns_buf_json_str(b, d->otel);
  ns_buf_str(b, ",\"description\":");
  ns_buf_json_str(b, d->help);
  ns_buf_str(b, ",\"unit\":");
  ns_buf_json_str(b, d->unit);
  static const char* const kind[] = {"sum", "gauge", "histogram"};
  ns_buf_printf(b, ",\"%s\":{\"dataPoints\":[", kind[d->kind]);
  int first = 1;
  for (size_t i = 0; i < fam->n; i++) {
    const ns_mpoint* p = &fam->p[i];
    if (p->res != res) continue;
    ns_buf_str(b, first ? "{" : ",{");
    first = 0;
    if (d->kind != NS_MK_GAUGE) {
      ns_buf_str(b, "\"startTimeUnixNano\":");
      u64(b, ns_metrics_start_unix_ns(m));
      ns_buf_str(b, ",");
    }
    ns_buf_str(b, "\"timeUnixNano\":");
    u64(b, ns_metrics_time_unix_ns(m));
    point_attrs(b, m, proc, p);
    if (d->kind == NS_MK_HISTOGRAM) {
      ns_buf_str(b, ",\"count\":");
      u64(b, p->count);
      ns_buf_str(b, ",\"sum\":");
      ns_buf_json_double(b, p->sum);
      ns_buf_str(b, ",\"bucketCounts\":[");
      for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) {
        if (k) ns_buf_str(b, ",");
        u64(b, p->buckets[k]);
      }
      ns_buf_str(b, "],\"explicitBounds\":[");
      for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) {
        if (k) ns_buf_str(b, ",");
        ns_buf_json_double(b, ns_metrics_bound_s(k));
      }
      ns_buf_str(b, "]");
    } else if (d->is_int) {
      ns_buf_printf(b, ",\"asInt\":\"%" PRId64 "\"", (int64_t)p->value);
    } else {
      ns_buf_str(b, ",\"asDouble\":");
      ns_buf_json_double(b, p->value);
    }
    ns_buf_str(b, "}");
  }
  ns_buf_str(b, "]");
  if (d->kind == NS_MK_COUNTER) ns_buf_str(b, ",\"aggregationTemporality\":2,\"isMonotonic\":true");
  if (d->kind == NS_MK_HISTOGRAM) ns_buf_str(b, ",\"aggregationTemporality\":2");
  ns_buf_str(b, "}}");
}

void ns_otlp_json(const ns_metrics* m, const ns_mprocess* p, ns_buf* b) {
  ns_buf_str(b, "{\"resourceMetrics\":[");
  int first_res = 1;
  for (size_t r = 0; r < ns_metrics_nres(m); r++) {
    int any = 0;
    for (size_t f = 0; f < ns_metrics_nfamilies(m) && !any; f++)
      any = ns_otlp_has_points(ns_metrics_family(m, f), (uint32_t)r);
    if (!any) continue;
    ns_buf_str(b, first_res ? "{\"resource\":{\"attributes\":[" : ",{\"resource\":{\"attributes\":[");
    first_res = 0;
    ns_mattr attrs[NS_M_RES_ATTRS];
    size_t na = ns_otlp_resource(m, p, r, attrs, NS_M_RES_ATTRS);
    int first = 1;
    for (size_t i = 0; i < na; i++) key_value(b, &first, attrs[i].key, attrs[i].is_int, attrs[i].i, attrs[i].s);
    ns_buf_str(b, "]},\"scopeMetrics\":[{\"scope\":{\"name\":\"ncclscope\",\"version\":");
    ns_buf_json_str(b, p->version ? p->version : "");
    ns_buf_str(b, "},\"metrics\":[");
    int first_m = 1;
    for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
      const ns_mfamily* fam = ns_metrics_family(m, f);
      if (!ns_otlp_has_points(fam, (uint32_t)r)) continue;
      if (!first_m) ns_buf_str(b, ",");
      first_m = 0;
      metric(b, m, p, fam, (uint32_t)r);
    }
    ns_buf_str(b, "]}]}");
  }
  ns_buf_str(b, "]}");
}
