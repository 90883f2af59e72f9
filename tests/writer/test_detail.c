/* SPDX-License-Identifier: Apache-2.0 */
/* The detail decision (src/writer/detail.c) on a clock the test drives:
 * sampling periods, escalations, their dwell and reasons, the triggers from
 * windows, the counts. */
#include <string.h>

#include "check.h"
#include "config/config.h"
#include "writer/detail.h"

#define MS 1000000ull
#define SEC 1000000000ull
static const uint64_t T0 = 100 * SEC;

typedef struct {
  int changed, full, why;
  uint64_t at;
} decision;

static decision tick(uint64_t t) {
  decision d = {0, -1, -1, 0};
  d.changed = ns_detail_tick(t, &d.full, &d.why, &d.at);
  return d;
}

#define CHECK_DECISION(t, changed_, full_, why_) \
  do {                                           \
    decision d_ = tick(t);                       \
    CHECK_U64(d_.changed, changed_);             \
    if (changed_) {                              \
      CHECK_U64(d_.full, full_);                 \
      CHECK_STR(ns_detail_why_name(d_.why), why_); \
    }                                            \
  } while (0)

static void sampled_periods(void) {
  ns_detail_open(NS_DETAIL_SAMPLED, 30, 2.0, 60.0, T0);
  CHECK_U64(ns_detail_full_now(), 1); /* a first init stores full detail: the first period */
  CHECK_DECISION(T0, 1, 1, "start");
  CHECK_DECISION(T0 + 10 * MS, 0, 0, "");
  CHECK_DECISION(T0 + 30 * MS, 1, 0, "sample-end");
  CHECK_U64(ns_detail_full_now(), 0);
  CHECK_DECISION(T0 + 500 * MS, 0, 0, "");
  CHECK_DECISION(T0 + SEC, 1, 1, "sample");
  CHECK_DECISION(T0 + SEC + 29 * MS, 0, 0, "");
  CHECK_DECISION(T0 + SEC + 31 * MS, 1, 0, "sample-end");
  ns_detail_counts n;
  ns_detail_counts_get(&n, T0 + 2 * SEC);
  CHECK_U64(n.switches, 3);
  CHECK_U64(n.escalations, 0);
  CHECK_U64(n.full_ns, 30 * MS + 31 * MS);
}

/* The writer's first pass comes late (a loaded machine): the first block
 * still says what held from the open on, at the open's time, and the next
 * pass decides at its own time. */
static void late_first_pass(void) {
  ns_detail_open(NS_DETAIL_SAMPLED, 30, 2.0, 60.0, T0);
  decision d = tick(T0 + 73 * MS);
  CHECK_U64(d.changed, 1);
  CHECK_U64(d.full, 1);
  CHECK_STR(ns_detail_why_name(d.why), "start");
  CHECK_U64(d.at, T0);
  d = tick(T0 + 75 * MS);
  CHECK_U64(d.changed, 1);
  CHECK_U64(d.full, 0);
  CHECK_STR(ns_detail_why_name(d.why), "sample-end");
  CHECK_U64(d.at, T0 + 75 * MS);
  ns_detail_counts n;
  ns_detail_counts_get(&n, T0 + SEC);
  CHECK_U64(n.full_ns, 75 * MS);
}

static void escalation_dwell(void) {
  ns_detail_open(NS_DETAIL_SAMPLED, 30, 2.0, 60.0, T0);
  tick(T0);
  tick(T0 + 40 * MS);
  /* suspect after min(60 s / 10, 0.5 s): 0.4 s in flight is not */
  ns_detail_inflight(400 * MS, 1, T0 + 500 * MS);
  CHECK_DECISION(T0 + 500 * MS, 0, 0, "");
  ns_detail_inflight(600 * MS, 1, T0 + 600 * MS);
  CHECK_U64(ns_detail_escalated(), 1);
  CHECK_DECISION(T0 + 600 * MS, 1, 1, "inflight");
  /* the trigger persists: each one extends the escalation, no flip in between */
  for (uint64_t t = T0 + 700 * MS; t < T0 + 5 * SEC; t += 100 * MS) {
    ns_detail_inflight(t - T0, 1, t);
    CHECK_DECISION(t, 0, 0, "");
  }
  /* the last trigger at T0 + 4.9 s: full detail until T0 + 6.9 s, the sampling periods inside it unseen */
  CHECK_DECISION(T0 + 6 * SEC + 10 * MS, 0, 0, "");
  CHECK_DECISION(T0 + 6900 * MS, 1, 0, "calm");
  CHECK_U64(ns_detail_escalated(), 0);
  ns_detail_counts n;
  ns_detail_counts_get(&n, T0 + 7 * SEC);
  CHECK_U64(n.escalations, 1);
  CHECK_U64(n.triggers, 44);
  CHECK_U64(n.switches, 3); /* sample-end, inflight, calm */
  /* another cause while escalated: recorded, not a new escalation */
  ns_detail_escalate(NS_DETAIL_WHY_SIGNAL, T0 + 8 * SEC, "asked");
  CHECK_DECISION(T0 + 8 * SEC, 1, 1, "signal");
  ns_detail_escalate(NS_DETAIL_WHY_STRAGGLER, T0 + 8500 * MS, "late");
  CHECK_DECISION(T0 + 8500 * MS, 1, 1, "straggler");
  ns_detail_escalate(NS_DETAIL_WHY_STRAGGLER, T0 + 8600 * MS, "late");
  CHECK_DECISION(T0 + 8600 * MS, 0, 0, "");
  ns_detail_counts_get(&n, T0 + 9 * SEC);
  CHECK_U64(n.escalations, 2);
}

static void levels(void) {
  ns_detail_open(NS_DETAIL_OPS, 30, 2.0, 60.0, T0);
  CHECK_U64(ns_detail_full_now(), 0);
  CHECK_DECISION(T0, 1, 0, "start");
  CHECK_DECISION(T0 + SEC, 0, 0, ""); /* no sampling at ops */
  ns_detail_escalate(NS_DETAIL_WHY_SIGNAL, T0 + 2 * SEC, NULL);
  CHECK_DECISION(T0 + 2 * SEC, 1, 1, "signal");
  CHECK_DECISION(T0 + 4 * SEC, 1, 0, "calm");
  /* NCCLSCOPE_ESCALATE_SEC=0: never */
  ns_detail_open(NS_DETAIL_OPS, 30, 0, 60.0, T0);
  tick(T0);
  ns_detail_escalate(NS_DETAIL_WHY_SIGNAL, T0 + SEC, NULL);
  CHECK_DECISION(T0 + SEC, 0, 0, "");
  CHECK_U64(ns_detail_escalated(), 0);
  /* full: always, nothing to escalate */
  ns_detail_open(NS_DETAIL_FULL, 30, 2.0, 60.0, T0);
  CHECK_DECISION(T0, 1, 1, "start");
  ns_detail_escalate(NS_DETAIL_WHY_SIGNAL, T0 + SEC, NULL);
  CHECK_DECISION(T0 + SEC, 0, 0, "");
  CHECK_DECISION(T0 + 10 * SEC, 0, 0, "");
  /* the hang timeout sets the suspicion time: a tenth of 2 s */
  ns_detail_open(NS_DETAIL_OPS, 30, 2.0, 2.0, T0);
  tick(T0);
  ns_detail_inflight(190 * MS, 1, T0 + SEC);
  CHECK_U64(ns_detail_escalated(), 0);
  ns_detail_inflight(210 * MS, 1, T0 + SEC);
  CHECK_U64(ns_detail_escalated(), 1);
}

static ns_bucket_stats bucket(int gpu, double busbw, uint64_t count) {
  ns_bucket_stats b;
  memset(&b, 0, sizeof b);
  b.comm = 1;
  b.func = 3;
  snprintf(b.func_name, sizeof b.func_name, "AllReduce");
  b.size_bucket = 1 << 20;
  b.gpu = gpu;
  b.count = count;
  b.busbw_gbs = busbw;
  return b;
}

static void windows(void) {
  ns_detail_open(NS_DETAIL_OPS, 30, 2.0, 60.0, T0);
  tick(T0);
  ns_window w;
  memset(&w, 0, sizeof w);
  /* the GPU-timed level 10 GB/s over three windows; CPU-timed ones of the same size at 2 GB/s are another
   * series: never a drop against the GPU's */
  ns_bucket_stats b[2];
  w.buckets = b;
  w.n_buckets = 2;
  for (int i = 0; i < 3; i++) {
    b[0] = bucket(1, 10, 100);
    b[1] = bucket(0, 2, 100);
    ns_detail_window(&w, T0 + (uint64_t)i * SEC);
  }
  CHECK_U64(ns_detail_escalated(), 0);
  /* too few operations to count */
  b[0] = bucket(1, 3, 7);
  w.n_buckets = 1;
  ns_detail_window(&w, T0 + 3 * SEC);
  CHECK_U64(ns_detail_escalated(), 0);
  b[0] = bucket(1, 4.9, 100);
  ns_detail_window(&w, T0 + 4 * SEC);
  CHECK_U64(ns_detail_escalated(), 1);
  CHECK_DECISION(T0 + 4 * SEC, 1, 1, "busbw-drop");
  /* stragglers: last in >= 60 % of >= 8 compared collectives, >= 50 us late on average */
  ns_detail_open(NS_DETAIL_OPS, 30, 2.0, 60.0, T0);
  tick(T0);
  ns_lateness_stats l = {.comm = 1, .compared = 10, .last = 6, .lateness_ns_sum = 490000};
  memset(&w, 0, sizeof w);
  w.lateness = &l;
  w.n_lateness = 1;
  ns_detail_window(&w, T0 + SEC);
  CHECK_U64(ns_detail_escalated(), 0); /* 49 us on average */
  l.lateness_ns_sum = 500000;
  l.last = 5;
  ns_detail_window(&w, T0 + SEC);
  CHECK_U64(ns_detail_escalated(), 0); /* last in half */
  l.last = 6;
  ns_detail_window(&w, T0 + SEC);
  CHECK_U64(ns_detail_escalated(), 1);
  CHECK_DECISION(T0 + SEC, 1, 1, "straggler");
  /* a GPU-side straggler under sampled detail: last in 9 of the 10 collectives every rank's GPU timed (3 ms late),
   * in a window of 300 where the CPU-timed ones split evenly: 159 of 300, 0.1 ms on average over all */
  ns_detail_open(NS_DETAIL_SAMPLED, 30, 2.0, 60.0, T0);
  tick(T0);
  l = (ns_lateness_stats){.comm = 2,
                          .compared = 300,
                          .last = 159,
                          .lateness_ns_sum = 30000000,
                          .gpu_compared = 10,
                          .gpu_last = 9,
                          .gpu_lateness_ns_sum = 27000000};
  ns_detail_window(&w, T0 + 50 * MS);
  CHECK_U64(ns_detail_escalated(), 1);
  /* ... not when the GPU-timed ones are too few to say (7), nor when they split too (5 of 10) */
  ns_detail_open(NS_DETAIL_SAMPLED, 30, 2.0, 60.0, T0);
  tick(T0);
  l.gpu_compared = 7, l.gpu_last = 7;
  ns_detail_window(&w, T0 + 50 * MS);
  CHECK_U64(ns_detail_escalated(), 0);
  l.gpu_compared = 10, l.gpu_last = 5;
  ns_detail_window(&w, T0 + 50 * MS);
  CHECK_U64(ns_detail_escalated(), 0);
}

int main(void) {
  sampled_periods();
  late_first_pass();
  escalation_dwell();
  levels();
  windows();
  CHECK_DONE();
}
