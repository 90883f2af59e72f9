/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope bench: analysis throughput beside many never-stopped events.
 *
 * usage: ns-bench-analysis-open [OPEN...]   (default: 0 10000 100000)
 *
 * For each OPEN count: OPEN KernelCh children that are started and never
 * stopped (as when their stop records were lost), then 2 s of trace time of
 * complete collectives at 100,000 records per second of trace time (a Coll,
 * a ProxyOp and 4 ProxySteps with states). Prints records/s of wall time
 * and the ratio to OPEN = 0, measured in one run. The analysis runs on the
 * plugin's writer thread and in `ncclscope export/report`, so records/s is
 * what both can sustain. Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ncclscope/analysis.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The strings a Coll START names (ids 1..4). */
static const char* const coll_strs[NS_REC_STRS] = {"AllReduce", "ncclFloat32", "RING", "Simple"};
static const char* coll_string(void* user, uint32_t id) {
  (void)user;
  return id >= 1 && id <= NS_REC_STRS ? coll_strs[id - 1] : NULL;
}

static void rec(ns_analysis* a, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id, uint64_t parent) {
  ns_record r = ns_record_make(kind, type, 1, ts, id, parent);
  if (kind == NS_REC_STATE) r.state = NS_ST_PROXY_STEP_SEND_WAIT;
  if (kind == NS_REC_START && type == NS_EV_COLL)
    for (uint32_t i = 0; i < NS_REC_STRS; i++) r.str[i] = i + 1;
  ns_analysis_record(a, &r);
}

static double run(unsigned open) {
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.string = coll_string;
  ns_analysis* a = ns_analysis_create(&cfg);
  ns_comm_info ci = ns_comm_info_make(1, 0xbe, 0, 2);
  ns_analysis_comm(a, &ci);
  uint64_t t = 1000000000ull, id = 1;
  for (unsigned i = 0; i < open; i++) rec(a, NS_REC_START, NS_EV_KERNEL_CH, t, ++id, 0);
  uint64_t records = 0;
  double t0 = now_s();
  const uint64_t end = t + 2000000000ull;
  while (t < end) {
    uint64_t c = ++id, p = ++id;
    rec(a, NS_REC_START, NS_EV_COLL, t, c, 0);
    rec(a, NS_REC_START, NS_EV_PROXY_OP, t + 1000, p, c);
    for (int k = 0; k < 4; k++) {
      uint64_t s = ++id;
      rec(a, NS_REC_START, NS_EV_PROXY_STEP, t + 2000, s, p);
      rec(a, NS_REC_STATE, NS_EV_PROXY_STEP, t + 3000, s, 0);
      rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, t + 9000, s, 0);
    }
    rec(a, NS_REC_STOP, NS_EV_PROXY_OP, t + 10000, p, 0);
    rec(a, NS_REC_STOP, NS_EV_COLL, t + 11000, c, 0);
    records += 16;
    t += 160000; /* 16 records per 160 us: 100,000 records per second */
  }
  ns_analysis_flush(a);
  double dt = now_s() - t0;
  ns_analysis_destroy(a);
  return (double)records / dt;
}

int main(int argc, char** argv) {
  unsigned def[] = {0, 10000, 100000};
  int n = argc > 1 ? argc - 1 : 3;
  double base = 0;
  printf("%10s %14s %8s\n", "open", "records/s", "ratio");
  for (int i = 0; i < n; i++) {
    unsigned open = argc > 1 ? (unsigned)strtoul(argv[i + 1], NULL, 10) : def[i];
    double r = run(open);
    if (i == 0) base = r;
    printf("%10u %14.0f %8.3f\n", open, r, r / base);
  }
  return 0;
}
