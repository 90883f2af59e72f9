/* SPDX-License-Identifier: Apache-2.0 */
/* The series budget's order (src/sinks/metrics.h): with a budget too small
 * for a window, the live series (oldest operation in flight, hang episodes)
 * and each communicator rank's stuck-operation series are never refused;
 * the dashboard's bus bandwidth comes before the time histograms, and the
 * algorithm bandwidth last. Every count below is worked out by hand. */
#include "../check.h"

#include "ncclscope/record.h"
#include "sinks/metrics.h"
#include "sinks/outputs.h"

enum { HIST_LINES = NS_HIST_BOUNDS + 3 };

static const ns_mfamily* family(const ns_metrics* m, const char* prom) {
  for (size_t i = 0; i < ns_metrics_nfamilies(m); i++)
    if (strcmp(ns_metrics_family(m, i)->d->prom, prom) == 0) return ns_metrics_family(m, i);
  return NULL;
}

static size_t points(const ns_metrics* m, const char* prom) {
  const ns_mfamily* f = family(m, prom);
  return f ? f->n : 0;
}

/* Sample lines of every family: what ncclscope_series must say. */
static uint32_t lines(const ns_metrics* m) {
  uint32_t n = 0;
  for (size_t i = 0; i < ns_metrics_nfamilies(m); i++) {
    const ns_mfamily* f = ns_metrics_family(m, i);
    n += (uint32_t)(f->n * ns_mpoint_series(f->d));
  }
  return n;
}

static double gauge(const ns_metrics* m, const char* prom) {
  const ns_mfamily* f = family(m, prom);
  return f && f->n ? f->p[0].value : -1;
}

int main(void) {
  enum { BUDGET = 51 };
  ns_metrics_config cfg = {.max_series = BUDGET, .top_links = 4, .pid = 7, .start_unix_ns = 1, .live = 1};
  ns_metrics* m = ns_metrics_new(&cfg);
  CHECK_TRUE(m != NULL);
  if (!m) return 1;
  ns_metrics_comm(m, 1, 0x1111, 0, 2, "GPU-a", "world");
  ns_metrics_comm(m, 2, 0x1111, 1, 2, "GPU-b", NULL);

  /* the live series: 2 budget gauges + the update time + 2 per communicator rank, and a place held for each one's
   * stuck series */
  ns_mlive live[2] = {{.comm = 1, .oldest_s = 0.5}, {.comm = 2, .oldest_s = 0.25}};
  ns_metrics_live(m, live, 2);
  CHECK_U64(ns_metrics_series(m), 3 + 2 * 2);
  CHECK_U64(points(m, "ncclscope_oldest_inflight_seconds"), 2);
  CHECK_U64(points(m, "ncclscope_hang_episodes_total"), 2);
  CHECK_U64(points(m, "ncclscope_stuck_op_info"), 0);

  /* a window that asks for far more than the budget: 6 functions x 2 ranks, each a histogram (13 lines), counts
   * and bytes; one bandwidth bucket per rank (busbw and algbw) */
  ns_func_stats funcs[12];
  memset(funcs, 0, sizeof funcs);
  for (int i = 0; i < 12; i++) {
    funcs[i].comm = 1 + (uint32_t)(i % 2);
    funcs[i].func = i / 2 == 5 ? NS_FUNC_ALLTOALL : i / 2; /* Broadcast .. SendRecv, AllToAll */
    funcs[i].type = NS_EV_COLL;
    funcs[i].ops = funcs[i].timed = 10;
    funcs[i].bytes = 10 << 20;
    funcs[i].hist[3] = 10;
    funcs[i].dur_ns_sum = 10 * 100000;
  }
  ns_bucket_stats buckets[2];
  memset(buckets, 0, sizeof buckets);
  for (int i = 0; i < 2; i++) {
    buckets[i].comm = 1 + (uint32_t)i;
    buckets[i].func = NS_FUNC_ALLREDUCE;
    buckets[i].size_bucket = 1 << 20;
    buckets[i].count = 10;
    buckets[i].bytes = 10 << 20;
    buckets[i].mean_us = 100;
    buckets[i].algbw_gbs = 10.5;
    buckets[i].busbw_gbs = 10.5;
  }
  ns_window w = {.index = 0, .start_ns = 0, .end_ns = 1000000000, .ops = 120,
                 .n_buckets = 2, .buckets = buckets, .n_funcs = 12, .funcs = funcs};
  uint64_t closed[NS_CLOSE_REASONS] = {0};
  ns_mwindow in = {.w = &w, .start_unix_ns = 1, .end_unix_ns = 2, .closed = closed};
  ns_metrics_window(m, &in);
  /* admitted in order: 7 live + windows_total + dropped{reason=ring} = 9; busbw 2 = 11; histograms while 13 lines
   * fit beside the 2 held places: 11 + 2 x 13 = 37 (a 3rd would make 50 + 2 > 51; had the histograms come first,
   * 3 of them and 1 busbw would fit); then the single-line series fill to 49: 12 of the 24 counts and bytes, and
   * nothing after them */
  CHECK_U64(points(m, "ncclscope_busbw_bytes_per_second"), 2);
  CHECK_U64(points(m, "ncclscope_op_duration_seconds"), 2);
  CHECK_U64(points(m, "ncclscope_ops_total") + points(m, "ncclscope_bytes_total"), 12);
  CHECK_U64(points(m, "ncclscope_algbw_bytes_per_second"), 0);
  CHECK_U64(points(m, "ncclscope_oldest_inflight_seconds"), 2);
  CHECK_U64(ns_metrics_series(m), BUDGET - 2);
  CHECK_U64(lines(m), ns_metrics_series(m));
  CHECK_TRUE(ns_metrics_refused(m) > 0);
  CHECK_U64(gauge(m, "ncclscope_series"), ns_metrics_series(m));
  CHECK_U64(gauge(m, "ncclscope_series_refused"), ns_metrics_refused(m));
  uint32_t refused = ns_metrics_refused(m);

  /* a hang on rank 0: its stuck series takes the place held for it, within the full budget */
  live[0] = (ns_mlive){.comm = 1, .oldest_s = 61, .episodes = 1, .stuck = 1, .func = "AllReduce", .seq = 42};
  ns_metrics_live(m, live, 2);
  const ns_mfamily* stuck = family(m, "ncclscope_stuck_op_info");
  CHECK_U64(stuck->n, 1);
  CHECK_U64(stuck->p[0].res, 1);
  CHECK_STR(stuck->p[0].labels[0].val, "AllReduce");
  CHECK_STR(stuck->p[0].labels[1].val, "42");
  CHECK_U64(ns_metrics_series(m), BUDGET - 1);
  CHECK_U64(lines(m), ns_metrics_series(m));
  CHECK_U64(ns_metrics_refused(m), refused);
  const ns_mfamily* hangs = family(m, "ncclscope_hang_episodes_total");
  CHECK_TRUE(hangs->p[0].value == 1 && hangs->p[1].value == 0);

  /* the next operation stuck: still one series for the rank, the new one */
  live[0].seq = 43;
  live[0].episodes = 2;
  ns_metrics_live(m, live, 2);
  CHECK_U64(stuck->n, 1);
  CHECK_STR(stuck->p[0].labels[1].val, "43");
  CHECK_U64(ns_metrics_series(m), BUDGET - 1);

  /* a window while it is stuck: the live series stay (a gauge of the window would be forgotten), nothing of the
   * window displaces them */
  ns_metrics_window(m, &in);
  CHECK_U64(stuck->n, 1);
  CHECK_U64(points(m, "ncclscope_oldest_inflight_seconds"), 2);
  CHECK_TRUE(ns_metrics_series(m) <= BUDGET);
  CHECK_U64(lines(m), ns_metrics_series(m));

  /* it completes: the series goes, the episodes stay counted */
  live[0] = (ns_mlive){.comm = 1, .oldest_s = 0, .episodes = 2};
  ns_metrics_live(m, live, 2);
  CHECK_U64(stuck->n, 0);
  CHECK_TRUE(hangs->p[0].value == 2);

  /* the communicator ended (the flight recorder no longer lists it): nothing in flight */
  ns_metrics_live(m, &live[1], 1);
  const ns_mfamily* oldest = family(m, "ncclscope_oldest_inflight_seconds");
  CHECK_TRUE(oldest->p[0].res == 1 && oldest->p[0].value == 0 && oldest->p[1].value == 0.25);

  /* identity labels: job_id, host, comm_name where NCCL named the communicator */
  ns_mprocess proc = {.host = "node\"1", .pid = 7, .job_id = "j\\1\n", .version = "t"};
  const char *k[NS_M_IDENT], *v[NS_M_IDENT];
  CHECK_U64(ns_mident(m, &proc, 1, k, v), 3);
  CHECK_STR(k[2], "comm_name");
  CHECK_STR(v[2], "world");
  CHECK_U64(ns_mident(m, &proc, 2, k, v), 2);
  CHECK_U64(ns_mident(m, &proc, 0, k, v), 2);
  ns_buf text = {.limit = 1 << 20};
  ns_prom_write(m, &proc, &text);
  ns_buf_put(&text, "", 1);
  CHECK_TRUE(strstr((const char*)text.data,
                    "ncclscope_hang_episodes_total{job_id=\"j\\\\1\\n\",host=\"node\\\"1\",comm_name=\"world\","
                    "comm=\"0x0000000000001111\",rank=\"0\"} 2\n") != NULL);
  ns_buf_free(&text);
  ns_metrics_free(m);
  CHECK_DONE();
}
