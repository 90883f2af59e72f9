/* SPDX-License-Identifier: Apache-2.0 */
/* The encoders of src/sinks on one known metrics model (a process, one
 * communicator rank whose name needs escaping, one window with three
 * AllReduces: two of 8-32 us, one of 0.5-2 ms, 2.5 ms in all; the live
 * series; written at 1700000000.25 s): Prometheus text line by line, the
 * OTLP protobuf's bytes for a few fields worked out by hand from
 * opentelemetry-proto's field numbers, the OTLP JSON's text for the same.
 *
 * usage: test_encoders [DIR]   also writes DIR/otlp.pb and DIR/otlp.json for
 * check_encoders.py, which decodes both with the official schema's decoder. */
#include <stdio.h>

#include "check.h"
#include "ncclscope/record.h"
#include "sinks/metrics.h"
#include "sinks/outputs.h"

static ns_metrics* model(void) {
  ns_metrics_config cfg = {
      .max_series = 500, .top_links = 4, .pid = 7, .start_unix_ns = 1700000000000000000ull, .live = 1};
  ns_metrics* m = ns_metrics_new(&cfg);
  if (!m) return NULL;
  ns_metrics_comm(m, 1, 0x1111, 0, 2, "GPU-a", "w\"o\\r\nld");
  ns_func_stats f = {.comm = 1,
                     .func = NS_FUNC_ALLREDUCE,
                     .type = NS_EV_COLL,
                     .ops = 3,
                     .timed = 3,
                     .bytes = 3 << 20,
                     .dur_ns_sum = 2500000};
  f.hist[1] = 2; /* (8 us, 32 us] */
  f.hist[4] = 1; /* (512 us, 2.048 ms] */
  ns_window w = {.index = 0, .start_ns = 0, .end_ns = 1000000000, .ops = 3, .n_funcs = 1, .funcs = &f};
  uint64_t closed[NS_CLOSE_REASONS] = {0};
  ns_mwindow in = {
      .w = &w, .start_unix_ns = 1700000000000000000ull, .end_unix_ns = 1700000000200000000ull, .closed = closed};
  ns_metrics_window(m, &in);
  ns_mlive live = {.comm = 1, .oldest_s = 0.5, .episodes = 2, .posted = 5, .completed = 4};
  ns_metrics_live(m, &live, 1);
  ns_metrics_stamp(m, 1700000000250000000ull);
  return m;
}

static const ns_mprocess proc = {
    .host = "h1", .pid = 7, .service_name = "ncclscope", .job_id = "job-9", .local_rank = -1, .version = "0.1.0"};

#define PROC "{job_id=\"job-9\",host=\"h1\",pid=\"7\"}"
#define RANK "job_id=\"job-9\",host=\"h1\",comm_name=\"w\\\"o\\\\r\\nld\",comm=\"0x0000000000001111\",rank=\"0\""
#define FUNC RANK ",type=\"coll\",func=\"AllReduce\""
#define BUCKET(le, n) "ncclscope_op_duration_seconds_bucket{" FUNC ",le=\"" le "\"} " #n

/* Every line but the HELP lines; a histogram's buckets are cumulative. */
static const char* const prom_lines[] = {
    "# TYPE ncclscope_series gauge",
    "ncclscope_series" PROC " 26", /* 3 + 4 live + windows, dropped, 4 counts and a 13-line histogram */
    "# TYPE ncclscope_series_refused gauge",
    "ncclscope_series_refused" PROC " 0",
    "# TYPE ncclscope_last_update_timestamp_seconds gauge",
    "ncclscope_last_update_timestamp_seconds" PROC " 1700000000.25",
    "# TYPE ncclscope_oldest_inflight_seconds gauge",
    "ncclscope_oldest_inflight_seconds{" RANK "} 0.5",
    "# TYPE ncclscope_hang_episodes_total counter",
    "ncclscope_hang_episodes_total{" RANK "} 2",
    "# TYPE ncclscope_last_posted_seq gauge",
    "ncclscope_last_posted_seq{" RANK "} 5",
    "# TYPE ncclscope_last_completed_seq gauge",
    "ncclscope_last_completed_seq{" RANK "} 4",
    "# TYPE ncclscope_windows_total counter",
    "ncclscope_windows_total" PROC " 1",
    "# TYPE ncclscope_events_dropped_total counter",
    "ncclscope_events_dropped_total{job_id=\"job-9\",host=\"h1\",pid=\"7\",reason=\"ring\"} 0",
    "# TYPE ncclscope_ops_total counter",
    "ncclscope_ops_total{" FUNC "} 3",
    "# TYPE ncclscope_ops_gpu_timed_total counter",
    "ncclscope_ops_gpu_timed_total{" FUNC "} 0",
    "# TYPE ncclscope_bytes_total counter",
    "ncclscope_bytes_total{" FUNC "} 3145728",
    "# TYPE ncclscope_ops_incomplete_total counter",
    "ncclscope_ops_incomplete_total{" RANK "} 0",
    "# TYPE ncclscope_op_duration_seconds histogram",
    BUCKET("8e-06", 0),
    BUCKET("3.2e-05", 2),
    BUCKET("0.000128", 2),
    BUCKET("0.000512", 2),
    BUCKET("0.002048", 3),
    BUCKET("0.008192", 3),
    BUCKET("0.032768", 3),
    BUCKET("0.131072", 3),
    BUCKET("0.524288", 3),
    BUCKET("2.097152", 3),
    BUCKET("+Inf", 3),
    "ncclscope_op_duration_seconds_sum{" FUNC "} 0.0025",
    "ncclscope_op_duration_seconds_count{" FUNC "} 3",
};

static void test_prom(const ns_metrics* m) {
  ns_buf b = {0};
  ns_prom_write(m, &proc, &b);
  CHECK_TRUE(!b.failed && b.len > 0 && b.data[b.len - 1] == '\n');
  size_t at = 0, want = 0, helps = 0;
  char help_of[128] = "";
  while (at < b.len) {
    const char* line = (const char*)b.data + at;
    const char* nl = memchr(line, '\n', b.len - at);
    size_t n = nl ? (size_t)(nl - line) : b.len - at;
    at += n + 1;
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)n, line);
    if (!strncmp(text, "# HELP ", 7)) {
      /* "# HELP name text", then the TYPE line of the same name */
      helps++;
      const char* sp = strchr(text + 7, ' ');
      CHECK_TRUE(sp && sp[1]);
      snprintf(help_of, sizeof help_of, "%.*s", sp ? (int)(sp - text - 7) : 0, text + 7);
      continue;
    }
    if (!strncmp(text, "# TYPE ", 7)) {
      CHECK_TRUE(help_of[0] && !strncmp(text + 7, help_of, strlen(help_of)) && text[7 + strlen(help_of)] == ' ');
      help_of[0] = 0;
    }
    if (want < sizeof prom_lines / sizeof prom_lines[0]) CHECK_STR(text, prom_lines[want]);
    want++;
  }
  CHECK_U64(want, sizeof prom_lines / sizeof prom_lines[0]);
  CHECK_U64(helps, 14);
  free(b.data);
}

/* Whether [p, p + n) holds the bytes. */
static int holds(const ns_buf* b, const void* bytes, size_t n) {
  for (size_t i = 0; i + n <= b->len; i++)
    if (!memcmp(b->data + i, bytes, n)) return 1;
  return 0;
}

static size_t le64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
  return 8;
}

static size_t led(uint8_t* out, double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  return le64(out, v);
}

/* A tag and a fixed64 / double value. */
static void expect_fixed(const ns_buf* b, uint8_t tag, uint64_t v, const char* what) {
  uint8_t want[9] = {tag};
  le64(want + 1, v);
  if (!holds(b, want, sizeof want)) fprintf(stderr, "protobuf: no %s\n", what);
  CHECK_TRUE(holds(b, want, sizeof want));
}

static void expect_double(const ns_buf* b, uint8_t tag, double d, const char* what) {
  uint8_t want[9] = {tag};
  led(want + 1, d);
  if (!holds(b, want, sizeof want)) fprintf(stderr, "protobuf: no %s\n", what);
  CHECK_TRUE(holds(b, want, sizeof want));
}

static const double bounds[10] = {8e-06,    3.2e-05,  0.000128, 0.000512, 0.002048,
                                  0.008192, 0.032768, 0.131072, 0.524288, 2.097152};

static void test_proto(const ns_metrics* m, ns_buf* b) {
  ns_otlp_proto(m, &proc, b);
  CHECK_TRUE(!b->failed && b->len > 0);
  /* ExportMetricsServiceRequest.resource_metrics (1, length-delimited) first */
  CHECK_U64(b->data[0], 0x0A);
  /* NumberDataPoint: time_unix_nano (3, fixed64) = 0x19, as_double (4) = 0x21, as_int (6, sfixed64) = 0x31 */
  expect_fixed(b, 0x19, 1700000000250000000ull, "time_unix_nano");
  expect_fixed(b, 0x11, 1700000000000000000ull, "start_time_unix_nano");
  expect_double(b, 0x21, 0.5, "the oldest operation's 0.5 s");
  expect_double(b, 0x21, 1700000000.25, "the update time");
  expect_fixed(b, 0x31, 3145728, "the bytes counter");
  expect_fixed(b, 0x31, 26, "the series gauge");
  expect_fixed(b, 0x31, 5, "the last collective posted");
  /* HistogramDataPoint: count (4, fixed64) = 0x21, sum (5, double) = 0x29, bucket_counts (6, packed fixed64):
   * per bucket, 0x32 and 11 x 8 bytes; explicit_bounds (7, packed double): 0x3A and 10 x 8 bytes */
  expect_fixed(b, 0x21, 3, "the histogram's count");
  expect_double(b, 0x29, 0.0025, "the histogram's sum");
  uint8_t counts[2 + 88] = {0x32, 88};
  const uint64_t per_bucket[11] = {0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 11; i++) le64(counts + 2 + 8 * i, per_bucket[i]);
  CHECK_TRUE(holds(b, counts, sizeof counts));
  uint8_t bnd[2 + 80] = {0x3A, 80};
  for (int i = 0; i < 10; i++) led(bnd + 2 + 8 * i, bounds[i]);
  CHECK_TRUE(holds(b, bnd, sizeof bnd));
  /* KeyValue{key (1) "process.pid", value (2) AnyValue{int_value (3, varint) 7}} */
  static const char pid[] =
      "\x0a\x0b"
      "process.pid"
      "\x12\x02\x18\x07";
  CHECK_TRUE(holds(b, pid, sizeof pid - 1));
  /* KeyValue{key "comm_name", value AnyValue{string_value (1) the name's 8 raw bytes}} */
  static const char name[] =
      "\x0a\x09"
      "comm_name"
      "\x12\x0a\x0a\x08"
      "w\"o\\r\nld";
  CHECK_TRUE(holds(b, name, sizeof name - 1));
  /* Metric{name (1) "ncclscope.op.duration" (21 bytes), then description (2) */
  static const char metric[] =
      "\x0a\x15"
      "ncclscope.op.duration"
      "\x12";
  CHECK_TRUE(holds(b, metric, sizeof metric - 1));
}

static void expect_text(const ns_buf* b, const char* s) {
  if (!holds(b, s, strlen(s))) fprintf(stderr, "OTLP JSON: no %s\n", s);
  CHECK_TRUE(holds(b, s, strlen(s)));
}

static void test_json(const ns_metrics* m, ns_buf* b) {
  ns_otlp_json(m, &proc, b);
  CHECK_TRUE(!b->failed && b->len > 0);
  expect_text(b,
              "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{"
              "\"stringValue\":\"ncclscope\"}}");
  expect_text(b, "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"7\"}}");
  expect_text(b, "{\"key\":\"comm_name\",\"value\":{\"stringValue\":\"w\\\"o\\\\r\\nld\"}}],\"asDouble\":0.5}");
  expect_text(b,
              "\"count\":\"3\",\"sum\":0.0025,\"bucketCounts\":[\"0\",\"2\",\"0\",\"0\",\"1\",\"0\",\"0\",\"0\","
              "\"0\",\"0\",\"0\"],\"explicitBounds\":[8e-06,3.2e-05,0.000128,0.000512,0.002048,0.008192,"
              "0.032768,0.131072,0.524288,2.097152]}");
  expect_text(b, "\"timeUnixNano\":\"1700000000250000000\"");
  expect_text(b, "\"startTimeUnixNano\":\"1700000000000000000\"");
  expect_text(b, "\"aggregationTemporality\":2,\"isMonotonic\":true");
  expect_text(b, "\"asInt\":\"3145728\"");
  expect_text(b, "{\"name\":\"ncclscope.last_posted_seq\",\"description\":");
  expect_text(b, "\"asDouble\":1700000000.25");
}

static int write_file(const char* dir, const char* name, const ns_buf* b) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = fwrite(b->data, 1, b->len, f);
  return fclose(f) == 0 && n == b->len ? 0 : -1;
}

int main(int argc, char** argv) {
  ns_metrics* m = model();
  CHECK_TRUE(m != NULL);
  if (!m) return 1;
  test_prom(m);
  ns_buf pb = {0}, js = {0};
  test_proto(m, &pb);
  test_json(m, &js);
  if (argc > 1) {
    CHECK_U64(write_file(argv[1], "otlp.pb", &pb), 0);
    CHECK_U64(write_file(argv[1], "otlp.json", &js), 0);
  }
  free(pb.data);
  free(js.data);
  ns_metrics_free(m);
  CHECK_DONE();
}
