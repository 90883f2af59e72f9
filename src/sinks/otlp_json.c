/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP/HTTP JSON encoding (http/json) of the metrics
 * model: an ExportMetricsServiceRequest as the OTLP specification maps it
 * to JSON (lowerCamelCase fields, 64-bit integers as decimal strings, enums
 * as numbers). Writer thread. */
#include <stdlib.h>

#include "sinks/outputs.h"

static void key_value(ns_json* j, const char* key, int is_int, int64_t i, const char* s) {
  nsj_obj_begin(j);
  nsj_kstr(j, "key", key);
  nsj_key(j, "value");
  nsj_obj_begin(j);
  if (is_int) {
    nsj_ki64_str(j, "intValue", i);
  } else {
    nsj_kstr(j, "stringValue", s);
  }
  nsj_obj_end(j);
  nsj_obj_end(j);
}

/* "attributes":[...]: the identity labels of the point's resource (ns_mident), then its own */
static void point_attrs(ns_json* j, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  nsj_key(j, "attributes");
  nsj_arr_begin(j);
  for (unsigned k = 0; k < ni; k++) key_value(j, ik[k], 0, 0, iv[k]);
  for (unsigned k = 0; k < p->nlabels; k++) {
    int is_int = 0;
    const char* key = ns_otlp_attr_key(p->labels[k].key, &is_int);
    key_value(j, key, is_int, strtoll(p->labels[k].val, NULL, 10), p->labels[k].val);
  }
  nsj_arr_end(j);
}

static void data_point(ns_json* j, const ns_metrics* m, const ns_mprocess* proc, const ns_mdesc* d,
                       const ns_mpoint* p) {
  nsj_obj_begin(j);
  if (d->kind != NS_MK_GAUGE) nsj_ku64_str(j, "startTimeUnixNano", ns_metrics_start_unix_ns(m));
  nsj_ku64_str(j, "timeUnixNano", ns_metrics_time_unix_ns(m));
  point_attrs(j, m, proc, p);
  if (d->kind == NS_MK_HISTOGRAM) {
    nsj_ku64_str(j, "count", p->count);
    nsj_key(j, "sum");
    ns_sink_json_f64(j, p->sum);
    nsj_key(j, "bucketCounts");
    nsj_arr_begin(j);
    for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) nsj_u64_str(j, p->buckets[k]);
    nsj_arr_end(j);
    nsj_key(j, "explicitBounds");
    nsj_arr_begin(j);
    for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) ns_sink_json_f64(j, ns_metrics_bound_s(k));
    nsj_arr_end(j);
  } else if (d->is_int) {
    nsj_ki64_str(j, "asInt", (int64_t)p->value);
  } else {
    nsj_key(j, "asDouble");
    ns_sink_json_f64(j, p->value);
  }
  nsj_obj_end(j);
}

static void metric(ns_json* j, const ns_metrics* m, const ns_mprocess* proc, const ns_mfamily* fam, uint32_t res) {
  static const char* const kind[] = {"sum", "gauge", "histogram"};
  const ns_mdesc* d = fam->d;
  nsj_obj_begin(j);
  nsj_kstr(j, "name", d->otel);
  nsj_kstr(j, "description", d->help);
  nsj_kstr(j, "unit", d->unit);
  nsj_key(j, kind[d->kind]);
  nsj_obj_begin(j);
  nsj_key(j, "dataPoints");
  nsj_arr_begin(j);
  for (size_t i = 0; i < fam->n; i++)
    if (fam->p[i].res == res) data_point(j, m, proc, d, &fam->p[i]);
  nsj_arr_end(j);
  if (d->kind != NS_MK_GAUGE) nsj_ku64(j, "aggregationTemporality", 2); /* cumulative */
  if (d->kind == NS_MK_COUNTER) nsj_kbool(j, "isMonotonic", 1);
  nsj_obj_end(j);
  nsj_obj_end(j);
}

void ns_otlp_json(const ns_metrics* m, const ns_mprocess* p, ns_buf* b) {
  ns_json* j = nsj_new_buf(b);
  if (!j) return;
  nsj_obj_begin(j);
  nsj_key(j, "resourceMetrics");
  nsj_arr_begin(j);
  for (size_t r = 0; r < ns_metrics_nres(m); r++) {
    int any = 0;
    for (size_t f = 0; f < ns_metrics_nfamilies(m) && !any; f++)
      any = ns_otlp_has_points(ns_metrics_family(m, f), (uint32_t)r);
    if (!any) continue;
    nsj_obj_begin(j);
    nsj_key(j, "resource");
    nsj_obj_begin(j);
    nsj_key(j, "attributes");
    nsj_arr_begin(j);
    ns_mattr attrs[NS_M_RES_ATTRS];
    size_t na = ns_otlp_resource(m, p, r, attrs, NS_M_RES_ATTRS);
    for (size_t i = 0; i < na; i++) key_value(j, attrs[i].key, attrs[i].is_int, attrs[i].i, attrs[i].s);
    nsj_arr_end(j);
    nsj_obj_end(j);
    nsj_key(j, "scopeMetrics");
    nsj_arr_begin(j);
    nsj_obj_begin(j);
    nsj_key(j, "scope");
    nsj_obj_begin(j);
    nsj_kstr(j, "name", "ncclscope");
    nsj_kstr(j, "version", p->version ? p->version : "");
    nsj_obj_end(j);
    nsj_key(j, "metrics");
    nsj_arr_begin(j);
    for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
      const ns_mfamily* fam = ns_metrics_family(m, f);
      if (ns_otlp_has_points(fam, (uint32_t)r)) metric(j, m, p, fam, (uint32_t)r);
    }
    nsj_arr_end(j);
    nsj_obj_end(j);
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
  nsj_obj_end(j);
  nsj_free(j);
}
