/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP/HTTP protobuf encoding (http/protobuf) of the
 * metrics model, encoded by hand: the plugin links no protobuf library.
 * Writer thread.
 *
 * Messages and field numbers are those of opentelemetry-proto
 * (collector/metrics/v1/metrics_service.proto, metrics/v1/metrics.proto,
 * resource/v1, common/v1); the test decodes every payload with a decoder
 * generated from those files (tests/sinks/otlp_receiver.js). Fields are
 * written in field-number order (util/protowire.h). */
#include <stdlib.h>
#include <string.h>

#include "sinks/outputs.h"
#include "util/protowire.h"

static uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* KeyValue { key = 1; AnyValue value = 2 { string_value = 1 | int_value = 3 } } */
static void key_value(ns_pb* b, unsigned field, const char* key, int is_int, int64_t i, const char* s) {
  ns_pb_begin(b, field);
  ns_pb_str(b, 1, key);
  ns_pb_begin(b, 2);
  if (is_int) ns_pb_uint(b, 3, (uint64_t)i);
  else ns_pb_str(b, 1, s);
  ns_pb_end(b);
  ns_pb_end(b);
}

/* The point's labels, then the identity labels of its resource (ns_mident). */
static void point_attrs(ns_pb* b, unsigned field, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  const char *ik[NS_M_IDENT], *iv[NS_M_IDENT];
  unsigned ni = ns_mident(m, proc, p->res, ik, iv);
  for (unsigned k = 0; k < ni; k++) key_value(b, field, ik[k], 0, 0, iv[k]);
  for (unsigned k = 0; k < p->nlabels; k++) {
    int is_int = 0;
    const char* key = ns_otlp_attr_key(p->labels[k].key, &is_int);
    key_value(b, field, key, is_int, strtoll(p->labels[k].val, NULL, 10), p->labels[k].val);
  }
}

/* NumberDataPoint { start_time_unix_nano = 2; time_unix_nano = 3; as_double = 4; as_int = 6; attributes = 7 } */
static void number_point(ns_pb* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mdesc* d,
                         const ns_mpoint* p) {
  ns_pb_begin(b, 1);
  if (d->kind == NS_MK_COUNTER) ns_pb_fixed64(b, 2, ns_metrics_start_unix_ns(m));
  ns_pb_fixed64(b, 3, ns_metrics_time_unix_ns(m));
  if (d->is_int) ns_pb_fixed64(b, 6, (uint64_t)(int64_t)p->value); /* sfixed64 */
  else ns_pb_double(b, 4, p->value);
  point_attrs(b, 7, m, proc, p);
  ns_pb_end(b);
}

/* HistogramDataPoint { start = 2; time = 3; count = 4; sum = 5; bucket_counts = 6 (packed fixed64);
 * explicit_bounds = 7 (packed double); attributes = 9 } */
static void histogram_point(ns_pb* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mpoint* p) {
  ns_pb_begin(b, 1);
  ns_pb_fixed64(b, 2, ns_metrics_start_unix_ns(m));
  ns_pb_fixed64(b, 3, ns_metrics_time_unix_ns(m));
  ns_pb_fixed64(b, 4, p->count);
  ns_pb_double(b, 5, p->sum);
  ns_pb_tag(b, 6, 2 /* length-delimited */);
  ns_pb_varint(b, 8u * (NS_HIST_BOUNDS + 1));
  for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) ns_pb_raw_fixed64(b, p->buckets[k]);
  ns_pb_tag(b, 7, 2 /* length-delimited */);
  ns_pb_varint(b, 8u * NS_HIST_BOUNDS);
  for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) ns_pb_raw_fixed64(b, double_bits(ns_metrics_bound_s(k)));
  point_attrs(b, 9, m, proc, p);
  ns_pb_end(b);
}

/* Metric { name = 1; description = 2; unit = 3; gauge = 5 | sum = 7 | histogram = 9 }
 * Sum { data_points = 1; aggregation_temporality = 2; is_monotonic = 3 }
 * Histogram { data_points = 1; aggregation_temporality = 2 }   Gauge { data_points = 1 } */
static void metric(ns_pb* b, const ns_metrics* m, const ns_mprocess* proc, const ns_mfamily* fam, uint32_t res) {
  const ns_mdesc* d = fam->d;
  ns_pb_begin(b, 2); /* ScopeMetrics.metrics */
  ns_pb_str(b, 1, d->otel);
  ns_pb_str(b, 2, d->help);
  ns_pb_str(b, 3, d->unit);
  static const unsigned field[] = {7, 5, 9};
  ns_pb_begin(b, field[d->kind]);
  for (size_t i = 0; i < fam->n; i++) {
    if (fam->p[i].res != res) continue;
    if (d->kind == NS_MK_HISTOGRAM) histogram_point(b, m, proc, &fam->p[i]);
    else number_point(b, m, proc, d, &fam->p[i]);
  }
  if (d->kind != NS_MK_GAUGE) ns_pb_uint(b, 2, 2); /* AGGREGATION_TEMPORALITY_CUMULATIVE */
  if (d->kind == NS_MK_COUNTER) ns_pb_uint(b, 3, 1);
  ns_pb_end(b);
  ns_pb_end(b);
}

/* ExportMetricsServiceRequest { resource_metrics = 1 }
 * ResourceMetrics { resource = 1 { attributes = 1 }; scope_metrics = 2 }
 * ScopeMetrics { scope = 1 { name = 1; version = 2 }; metrics = 2 } */
static void encode(const ns_metrics* m, const ns_mprocess* p, ns_pb* b) {
  for (size_t r = 0; r < ns_metrics_nres(m); r++) {
    int any = 0;
    for (size_t f = 0; f < ns_metrics_nfamilies(m) && !any; f++)
      any = ns_otlp_has_points(ns_metrics_family(m, f), (uint32_t)r);
    if (!any) continue;
    ns_pb_begin(b, 1);
    ns_pb_begin(b, 1);
    ns_mattr attrs[NS_M_RES_ATTRS];
    size_t na = ns_otlp_resource(m, p, r, attrs, NS_M_RES_ATTRS);
    for (size_t i = 0; i < na; i++) key_value(b, 1, attrs[i].key, attrs[i].is_int, attrs[i].i, attrs[i].s);
    ns_pb_end(b);
    ns_pb_begin(b, 2);
    ns_pb_begin(b, 1);
    ns_pb_str(b, 1, "ncclscope");
    ns_pb_str(b, 2, p->version ? p->version : "");
    ns_pb_end(b);
    for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
      const ns_mfamily* fam = ns_metrics_family(m, f);
      if (ns_otlp_has_points(fam, (uint32_t)r)) metric(b, m, p, fam, (uint32_t)r);
    }
    ns_pb_end(b);
    ns_pb_end(b);
  }
}

void ns_otlp_proto(const ns_metrics* m, const ns_mprocess* p, ns_buf* out) {
  ns_pb pb = {.buf = *out}; /* the caller's buffer, its limit included */
  encode(m, p, &pb);
  if (pb.depth) pb.buf.failed = 1; /* a nested message left open: never sent */
  *out = pb.buf;
}
