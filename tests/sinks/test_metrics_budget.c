/* SPDX-License-Identifier: Apache-2.0 */
/* The series budget's order (src/sinks/metrics.h): with a budget too small
 * for a window, what the dashboard's variables and hang panels need (the
 * live series, the posted and completed sequence numbers, each communicator
 * rank's stuck-operation series, ncclscope_ops_total) is never refused, and
 * a communicator rank that comes later takes its room from the detail
 * admitted before it: bandwidth first, then bytes, incomplete operations and
 * time histograms. Every count below is worked out by hand. */
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

/* Points of family prom for resource res. */
static size_t points_of(const ns_metrics* m, const char* prom, uint32_t res) {
  const ns_mfamily* f = family(m, prom);
  size_t n = 0;
  for (size_t i = 0; f && i < f->n; i++) n += f->p[i].res == res;
  return n;
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

/* The value of family prom at resource res (-1: none). */
static double value_of(const ns_metrics* m, const char* prom, uint32_t res) {
  const ns_mfamily* f = family(m, prom);
  for (size_t i = 0; f && i < f->n; i++)
    if (f->p[i].res == res) return f->p[i].value;
  return -1;
}

/* 6 functions (Broadcast .. SendRecv, AllToAll) on each of communicator serials 1..ncomms, interleaved: entry i is
 * on serial 1 + i % ncomms. Each with ops, bytes and a time histogram (13 lines). */
static void fill_funcs(ns_func_stats* funcs, uint32_t ncomms) {
  for (uint32_t i = 0; i < 6 * ncomms; i++) {
    memset(&funcs[i], 0, sizeof funcs[i]);
    funcs[i].comm = 1 + i % ncomms;
    funcs[i].func = i / ncomms == 5 ? NS_FUNC_ALLTOALL : (int)(i / ncomms);
    funcs[i].type = NS_EV_COLL;
    funcs[i].ops = funcs[i].timed = 10;
    funcs[i].bytes = 10 << 20;
    funcs[i].hist[3] = 10;
    funcs[i].dur_ns_sum = 10 * 100000;
  }
}

static void check_budget_gauges(const ns_metrics* m) {
  CHECK_U64(lines(m), ns_metrics_series(m));
  CHECK_U64(gauge(m, "ncclscope_series"), ns_metrics_series(m));
  CHECK_U64(gauge(m, "ncclscope_series_refused"), ns_metrics_refused(m));
}

static void test_order(void) {
  enum { BUDGET = 60 };
  ns_metrics_config cfg = {.max_series = BUDGET, .top_links = 4, .pid = 7, .start_unix_ns = 1, .live = 1};
  ns_metrics* m = ns_metrics_new(&cfg);
  CHECK_TRUE(m != NULL);
  if (!m) return;
  ns_metrics_comm(m, 1, 0x1111, 0, 3, "GPU-a", "world");
  ns_metrics_comm(m, 2, 0x1111, 1, 3, "GPU-b", NULL);

  /* the live series: 2 budget gauges + the update time + 4 per communicator rank (age, episodes, posted,
   * completed), and a place held for each one's stuck series */
  ns_mlive live[3] = {{.comm = 1, .oldest_s = 0.5, .posted = 7, .completed = 6},
                      {.comm = 2, .oldest_s = 0.25, .posted = 7, .completed = 7},
                      {.comm = 3, .posted = 6, .completed = 6}};
  ns_metrics_live(m, live, 2);
  CHECK_U64(ns_metrics_series(m), 3 + 2 * 4);
  CHECK_U64(points(m, "ncclscope_oldest_inflight_seconds"), 2);
  CHECK_U64(points(m, "ncclscope_hang_episodes_total"), 2);
  CHECK_U64(points(m, "ncclscope_stuck_op_info"), 0);
  CHECK_TRUE(value_of(m, "ncclscope_last_posted_seq", 1) == 7 && value_of(m, "ncclscope_last_completed_seq", 1) == 6);
  CHECK_TRUE(value_of(m, "ncclscope_last_posted_seq", 2) == 7 && value_of(m, "ncclscope_last_completed_seq", 2) == 7);

  /* a window that asks for far more than the budget: 6 functions x 2 ranks, each with counts, bytes and a histogram;
   * one bandwidth bucket per rank (busbw and algbw) */
  ns_func_stats funcs[18];
  fill_funcs(funcs, 2);
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
  /* never refused: 11 live + windows_total + dropped{reason=ring} + 12 ops_total = 25, 2 places held; then
   * histograms while 13 lines fit: 2 (51; a 3rd: 64 + 2 > 60), 10 refused (130 lines); incomplete ops 2 (53);
   * bytes 5 of 12 (58), 7 refused; GPU-timed 12, busbw 2, algbw 2 refused: 153 */
  CHECK_U64(points(m, "ncclscope_ops_total"), 12);
  CHECK_U64(points(m, "ncclscope_op_duration_seconds"), 2);
  CHECK_U64(points(m, "ncclscope_ops_incomplete_total"), 2);
  CHECK_U64(points(m, "ncclscope_bytes_total"), 5);
  CHECK_U64(points(m, "ncclscope_ops_gpu_timed_total"), 0);
  CHECK_U64(points(m, "ncclscope_busbw_bytes_per_second"), 0);
  CHECK_U64(points(m, "ncclscope_algbw_bytes_per_second"), 0);
  CHECK_U64(ns_metrics_series(m), 58);
  CHECK_U64(ns_metrics_refused(m), 10 * HIST_LINES + 7 + 12 + 2 + 2);
  check_budget_gauges(m);

  /* a third communicator rank: its 4 live series and the place held for its stuck series take the room of the
   * 5 bytes counters, the newest first (58 - 5 + 4 = 57 + 3 held = 60) */
  ns_metrics_comm(m, 3, 0x1111, 2, 3, "GPU-c", NULL);
  ns_metrics_live(m, live, 3);
  CHECK_U64(points_of(m, "ncclscope_oldest_inflight_seconds", 3), 1);
  CHECK_TRUE(value_of(m, "ncclscope_last_posted_seq", 3) == 6);
  CHECK_U64(points(m, "ncclscope_bytes_total"), 0);
  CHECK_U64(ns_metrics_series(m), 57);
  CHECK_U64(ns_metrics_refused(m), 10 * HIST_LINES + 7 + 12 + 2 + 2 + 5);
  check_budget_gauges(m);

  /* its operations in the next window (6 functions x 3 ranks): the 6 new ops_total counters take the room of the 2
   * incomplete counters and of the newer histogram (57 - 2 - 13 + 6 = 48, 15 refused); the histograms of the
   * other 17 do not fit (221); incomplete ops 3 (51); bytes 6 of 18 (57), 12 refused; GPU-timed 18, busbw 2,
   * algbw 2 refused: 270 */
  fill_funcs(funcs, 3);
  w.n_funcs = 18;
  w.index = 1;
  ns_metrics_window(m, &in);
  CHECK_U64(points(m, "ncclscope_ops_total"), 18);
  CHECK_U64(points_of(m, "ncclscope_ops_total", 3), 6);
  CHECK_U64(points(m, "ncclscope_op_duration_seconds"), 1);
  CHECK_U64(points_of(m, "ncclscope_op_duration_seconds", 1), 1);
  CHECK_U64(points(m, "ncclscope_ops_incomplete_total"), 3);
  CHECK_U64(points(m, "ncclscope_bytes_total"), 6);
  CHECK_U64(points(m, "ncclscope_last_posted_seq"), 3);
  CHECK_U64(points(m, "ncclscope_last_completed_seq"), 3);
  CHECK_U64(ns_metrics_series(m), 57);
  CHECK_U64(ns_metrics_refused(m), 2 + HIST_LINES + 17 * HIST_LINES + 12 + 18 + 2 + 2);
  check_budget_gauges(m);

  /* a hang on rank 0: its stuck series takes the place held for it, within the full budget */
  live[0] = (ns_mlive){
      .comm = 1, .oldest_s = 61, .episodes = 1, .stuck = 1, .func = "AllReduce", .seq = 42, .posted = 8, .completed = 7};
  ns_metrics_live(m, live, 3);
  const ns_mfamily* stuck = family(m, "ncclscope_stuck_op_info");
  CHECK_U64(stuck->n, 1);
  CHECK_U64(stuck->p[0].res, 1);
  CHECK_STR(stuck->p[0].labels[0].val, "AllReduce");
  CHECK_STR(stuck->p[0].labels[1].val, "42");
  CHECK_U64(ns_metrics_series(m), 58);
  CHECK_TRUE(value_of(m, "ncclscope_last_posted_seq", 1) == 8);
  check_budget_gauges(m);
  const ns_mfamily* hangs = family(m, "ncclscope_hang_episodes_total");
  CHECK_TRUE(hangs->p[0].value == 1 && hangs->p[1].value == 0);

  /* the next operation stuck: still one series for the rank, the new one */
  live[0].seq = 43;
  live[0].episodes = 2;
  ns_metrics_live(m, live, 3);
  CHECK_U64(stuck->n, 1);
  CHECK_STR(stuck->p[0].labels[1].val, "43");
  CHECK_U64(ns_metrics_series(m), 58);

  /* a window while it is stuck: the live series stay (a gauge of the window would be forgotten), nothing of the
   * window displaces them */
  ns_metrics_window(m, &in);
  CHECK_U64(stuck->n, 1);
  CHECK_U64(points(m, "ncclscope_oldest_inflight_seconds"), 3);
  CHECK_U64(points(m, "ncclscope_ops_total"), 18);
  CHECK_TRUE(ns_metrics_series(m) <= BUDGET);
  check_budget_gauges(m);

  /* it completes: the series goes, the episodes stay counted */
  live[0] = (ns_mlive){.comm = 1, .oldest_s = 0, .episodes = 2, .posted = 8, .completed = 8};
  ns_metrics_live(m, live, 3);
  CHECK_U64(stuck->n, 0);
  CHECK_TRUE(hangs->p[0].value == 2);

  /* the communicator ended (the flight recorder no longer lists it): nothing in flight, the last sequence
   * numbers stay */
  ns_metrics_live(m, &live[1], 2);
  const ns_mfamily* oldest = family(m, "ncclscope_oldest_inflight_seconds");
  CHECK_TRUE(oldest->p[0].res == 1 && oldest->p[0].value == 0 && oldest->p[1].value == 0.25);
  CHECK_TRUE(value_of(m, "ncclscope_last_completed_seq", 1) == 8);

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
  CHECK_TRUE(strstr((const char*)text.data,
                    "ncclscope_last_posted_seq{job_id=\"j\\\\1\\n\",host=\"node\\\"1\",comm=\"0x0000000000001111\","
                    "rank=\"2\"} 6\n") != NULL);
  ns_buf_free(&text);
  ns_metrics_free(m);
}

/* A budget smaller than what is never refused: all of that, beyond the budget, and nothing else. */
static void test_over(void) {
  enum { BUDGET = 20 };
  ns_metrics_config cfg = {.max_series = BUDGET, .top_links = 4, .pid = 7, .start_unix_ns = 1, .live = 1};
  ns_metrics* m = ns_metrics_new(&cfg);
  CHECK_TRUE(m != NULL);
  if (!m) return;
  ns_mlive live[3];
  for (uint32_t c = 1; c <= 3; c++) {
    ns_metrics_comm(m, c, 0x2222, (int32_t)c - 1, 3, "", NULL);
    live[c - 1] = (ns_mlive){.comm = c, .posted = 3, .completed = 2};
  }
  ns_metrics_live(m, live, 3);
  ns_func_stats funcs[18];
  fill_funcs(funcs, 3);
  ns_window w = {.index = 0, .start_ns = 0, .end_ns = 1000000000, .ops = 180, .n_funcs = 18, .funcs = funcs};
  uint64_t closed[NS_CLOSE_REASONS] = {0};
  ns_mwindow in = {.w = &w, .start_unix_ns = 1, .end_unix_ns = 2, .closed = closed};
  ns_metrics_window(m, &in);
  /* 3 + 3 x 4 live + windows_total + dropped + 18 ops_total = 35 */
  CHECK_U64(ns_metrics_series(m), 35);
  CHECK_U64(points(m, "ncclscope_ops_total"), 18);
  CHECK_U64(points(m, "ncclscope_last_posted_seq"), 3);
  CHECK_U64(points(m, "ncclscope_op_duration_seconds") + points(m, "ncclscope_bytes_total") +
                points(m, "ncclscope_ops_incomplete_total") + points(m, "ncclscope_ops_gpu_timed_total"),
            0);
  CHECK_U64(ns_metrics_refused(m), 18 * HIST_LINES + 3 + 18 + 18);
  check_budget_gauges(m);
  ns_metrics_free(m);
}

/* A histogram that would not fit even in the room of everything that goes before it gives nothing up: the counters
 * admitted before it keep counting (a counter given up and admitted again would start from 0). */
static void test_no_waste(void) {
  enum { BUDGET = 39 };
  ns_metrics_config cfg = {.max_series = BUDGET, .top_links = 4, .pid = 7, .start_unix_ns = 1, .live = 1};
  ns_metrics* m = ns_metrics_new(&cfg);
  CHECK_TRUE(m != NULL);
  if (!m) return;
  ns_metrics_comm(m, 1, 0x3333, 0, 2, "", NULL);
  ns_mlive live = {.comm = 1, .posted = 1, .completed = 1};
  ns_metrics_live(m, &live, 1);
  ns_func_stats funcs[6];
  fill_funcs(funcs, 1); /* Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, AllToAll */
  ns_window w = {.index = 0, .start_ns = 0, .end_ns = 1000000000, .ops = 10, .n_funcs = 1, .funcs = funcs};
  uint64_t closed[NS_CLOSE_REASONS] = {0};
  ns_mwindow in = {.w = &w, .start_unix_ns = 1, .end_unix_ns = 2, .closed = closed};
  ns_metrics_window(m, &in);
  /* 7 live + windows + dropped + Broadcast's ops, histogram, bytes, GPU-timed + incomplete = 26, 1 place held */
  CHECK_U64(ns_metrics_series(m), 26);
  CHECK_U64(ns_metrics_refused(m), 0);
  /* 3 more functions: their ops (29 + 1 held); a histogram (13) would need 43 > 39 + the 3 of incomplete, bytes
   * and GPU-timed: refused, those stay; bytes and GPU-timed of the 3 fit (35) */
  w.n_funcs = 4;
  w.index = 1;
  ns_metrics_window(m, &in);
  CHECK_U64(points(m, "ncclscope_op_duration_seconds"), 1);
  CHECK_U64(points(m, "ncclscope_bytes_total"), 4);
  CHECK_U64(points(m, "ncclscope_ops_gpu_timed_total"), 4);
  const ns_mfamily* bytes = family(m, "ncclscope_bytes_total");
  CHECK_TRUE(bytes->p[0].value == 2.0 * (10 << 20)); /* Broadcast's bytes of both windows */
  CHECK_U64(ns_metrics_series(m), 35);
  CHECK_U64(ns_metrics_refused(m), 3 * HIST_LINES);
  check_budget_gauges(m);
  ns_metrics_free(m);
}

int main(void) {
  test_order();
  test_no_waste();
  test_over();
  CHECK_DONE();
}
