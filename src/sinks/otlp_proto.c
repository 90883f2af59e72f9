/* ncclscope sinks: the OTLP/HTTP protobuf encoding (http/protobuf) of the
 * metrics model, encoded by hand: the plugin links no protobuf library.
 * Writer thread.
 *
 * Messages and field numbers are those of opentelemetry-proto
 * (collector/metrics/v1/metrics_service.proto, metrics/v1/metrics.proto,
 * resource/v1, common/v1); the test decodes every payload with a decoder
 * generated from those files (tests/sinks/otlp_receiver.js). Fields are
 * written in field-number order; a nested message is written in place and
 * its length, once known, inserted before it (payloads are a few KiB). */
#include <stdlib.h>
#include <string.h>

#include "sinks/outputs.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static void varint(ns_sbuf* b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  ns_sbuf_put(b, tmp, n);
}

static void tag(ns_sbuf* b, unsigned field, unsigned wt) { varint(b, (uint64_t)field << 3 | wt); }

static void fixed64(ns_sbuf* b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  ns_sbuf_put(b, le, 8);
}

static void f_fixed64(ns_sbuf* b, unsigned field, uint64_t v) {
  tag(b, field, WT_I64);
  fixed64(b, v);
}

static uint64_t dbits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static void f_double(ns_sbuf* b, unsigned field, double d) { f_fixed64(b, field, dbits(d)); }

static void f_varint(ns_sbuf* b, unsigned field, uint64_t v) {
  tag(b, field, WT_VARINT);
  varint(b, v);
}

static void f_string(ns_sbuf* b, unsigned field, const char* s) {
  size_t n = strlen(s);
  tag(b, field, WT_LEN);
  varint(b, n);
  ns_sbuf_put(b, s, n);
}

/* A nested message: the tag now, the length at msg_end. */
static size_t msg_begin(ns_sbuf* b, unsigned field) {
  tag(b, field, WT_LEN);
  return b->len;
}

static void msg_end(ns_sbuf* b, size_t at) {
  if (b->failed) return;
  size_t body = b->len - at;
  ns_sbuf len = {0};
  varint(&len, body);
  if (len.failed || ns_sbuf_reserve(b, len.len) != 0) {
    ns_sbuf_free(&len);
    return;
  }
  memmove(b->data + at + len.len, b->data + at, body);
  memcpy(b->data + at, len.data, len.len);
  b->len += len.len;
  ns_sbuf_free(&len);
}

/* KeyValue { key = 1; AnyValue value = 2 { string_value = 1 | int_value = 3 } } */
static void key_value(ns_sbuf* b, unsigned field, const char* key, int is_int, int64_t i, const char* s) {
  size_t kv = msg_begin(b, field);
  f_string(b, 1, key);
  size_t v = msg_begin(b, 2);
  if (is_int) f_varint(b, 3, (uint64_t)i);
  else f_string(b, 1, s);
  msg_end(b, v);
  msg_end(b, kv);
}

static void point_attrs(ns_sbuf* b, unsigned field, const ns_mpoint* p) {
  for (unsigned k = 0; k < p->nlabels; k++) {
    int is_int = 0;
    const char* key = ns_otlp_attr_key(p->labels[k].key, &is_int);
    key_value(b, field, key, is_int, strtoll(p->labels[k].val, NULL, 10), p->labels[k].val);
  }
}

/* NumberDataPoint { start_time_unix_nano = 2; time_unix_nano = 3; as_double = 4; as_int = 6; attributes = 7 } */
static void number_point(ns_sbuf* b, const ns_metrics* m, const ns_mdesc* d, const ns_mpoint* p) {
  size_t at = msg_begin(b, 1);
  if (d->kind == NS_MK_COUNTER) f_fixed64(b, 2, ns_metrics_start_unix_ns(m));
  f_fixed64(b, 3, ns_metrics_end_unix_ns(m));
  if (d->is_int) f_fixed64(b, 6, (uint64_t)(int64_t)p->value); /* sfixed64 */
  else f_double(b, 4, p->value);
  point_attrs(b, 7, p);
  msg_end(b, at);
}

/* HistogramDataPoint { start = 2; time = 3; count = 4; sum = 5; bucket_counts = 6 (packed fixed64);
 * explicit_bounds = 7 (packed double); attributes = 9 } */
static void histogram_point(ns_sbuf* b, const ns_metrics* m, const ns_mpoint* p) {
  size_t at = msg_begin(b, 1);
  f_fixed64(b, 2, ns_metrics_start_unix_ns(m));
  f_fixed64(b, 3, ns_metrics_end_unix_ns(m));
  f_fixed64(b, 4, p->count);
  f_double(b, 5, p->sum);
  tag(b, 6, WT_LEN);
  varint(b, 8u * (NS_HIST_BOUNDS + 1));
  for (unsigned k = 0; k <= NS_HIST_BOUNDS; k++) fixed64(b, p->buckets[k]);
  tag(b, 7, WT_LEN);
  varint(b, 8u * NS_HIST_BOUNDS);
  for (unsigned k = 0; k < NS_HIST_BOUNDS; k++) fixed64(b, dbits(ns_metrics_bound_s(k)));
  point_attrs(b, 9, p);
  msg_end(b, at);
}

/* Metric { name = 1; description = 2; unit = 3; gauge = 5 | sum = 7 | histogram = 9 }
 * Sum { data_points = 1; aggregation_temporality = 2; is_monotonic = 3 }
 * Histogram { data_points = 1; aggregation_temporality = 2 }   Gauge { data_points = 1 } */
static void metric(ns_sbuf* b, const ns_metrics* m, const ns_mfamily* fam, uint32_t res) {
  const ns_mdesc* d = fam->d;
  size_t at = msg_begin(b, 2); /* ScopeMetrics.metrics */
  f_string(b, 1, d->otel);
  f_string(b, 2, d->help);
  f_string(b, 3, d->unit);
  static const unsigned field[] = {7, 5, 9};
  size_t data = msg_begin(b, field[d->kind]);
  for (size_t i = 0; i < fam->n; i++) {
    if (fam->p[i].res != res) continue;
    if (d->kind == NS_MK_HISTOGRAM) histogram_point(b, m, &fam->p[i]);
    else number_point(b, m, d, &fam->p[i]);
  }
  if (d->kind != NS_MK_GAUGE) f_varint(b, 2, 2); /* AGGREGATION_TEMPORALITY_CUMULATIVE */
  if (d->kind == NS_MK_COUNTER) f_varint(b, 3, 1);
  msg_end(b, data);
  msg_end(b, at);
}

/* ExportMetricsServiceRequest { resource_metrics = 1 }
 * ResourceMetrics { resource = 1 { attributes = 1 }; scope_metrics = 2 }
 * ScopeMetrics { scope = 1 { name = 1; version = 2 }; metrics = 2 } */
void ns_otlp_proto(const ns_metrics* m, const ns_mprocess* p, ns_sbuf* b) {
  for (size_t r = 0; r < ns_metrics_nres(m); r++) {
    int any = 0;
    for (size_t f = 0; f < ns_metrics_nfamilies(m) && !any; f++)
      any = ns_otlp_has_points(ns_metrics_family(m, f), (uint32_t)r);
    if (!any) continue;
    size_t rm = msg_begin(b, 1);
    size_t resource = msg_begin(b, 1);
    ns_mattr attrs[NS_M_RES_ATTRS];
    size_t na = ns_otlp_resource(m, p, r, attrs, NS_M_RES_ATTRS);
    for (size_t i = 0; i < na; i++) key_value(b, 1, attrs[i].key, attrs[i].is_int, attrs[i].i, attrs[i].s);
    msg_end(b, resource);
    size_t sm = msg_begin(b, 2);
    size_t scope = msg_begin(b, 1);
    f_string(b, 1, "ncclscope");
    f_string(b, 2, p->version ? p->version : "");
    msg_end(b, scope);
    for (size_t f = 0; f < ns_metrics_nfamilies(m); f++) {
      const ns_mfamily* fam = ns_metrics_family(m, f);
      if (ns_otlp_has_points(fam, (uint32_t)r)) metric(b, m, fam, (uint32_t)r);
    }
    msg_end(b, sm);
    msg_end(b, rm);
  }
}
