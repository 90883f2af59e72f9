/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: --bench-nccl WORKLOAD, what one operation costs a job.
 *
 * Runs on the main thread: two ranks (one app thread each, in this process)
 * run --iters x 1000 operations of one workload through the whole NCCL model
 * (--fast) with --plugin (or NCCL_PROFILER_PLUGIN; "none": no plugin), the
 * plugin's own mask deciding which events NCCL makes. It prints one
 * `BENCHNCCL {json}` line: per operation (per rank), the time inside the
 * plugin's calls (calls.c's timing less one clock read per call) and NCCL's
 * modelled time for the bits the mask enabled (nccl_cost.c), per bit.
 * bench/detail_cost.py runs it per configuration and prints the table.
 *
 * Workloads (the channel counts nccl_cost.c is calibrated with):
 *   coll-1node  8 KiB AllReduce on one node (no network), --channels channels
 *   coll-net    the same on two nodes (one rank each: every channel crosses the network)
 *   p2p-1node   a Send and a Recv of 8 KiB between the two ranks of one node, 1 channel each
 */
#include <stdlib.h>
#include <string.h>

#include "sim_shared.h"

enum { W_COLL_1NODE, W_COLL_NET, W_P2P_1NODE, W_COUNT };
static const char* workloadNames[W_COUNT] = {"coll-1node", "coll-net", "p2p-1node"};

typedef struct {
  int rank, workload, ops;
} ncclBenchArg;

#define BENCH_BYTES 8192

static void* benchNcclApp(void* arg) {
  ncclBenchArg* a = arg;
  simTruthThreadBegin("app");
  simComm c;
  int nNodes = a->workload == W_COLL_NET ? 2 : 1;
  simCommInit(&c, 0xbe9cc057, "bench-nccl", 61, 2, a->rank, nNodes, a->rank, NULL);
  for (int i = 0; i < a->ops; i++) {
    simTask t[2];
    memset(t, 0, sizeof t);
    int n = 1;
    for (int k = 0; k < 2; k++) {
      t[k].bytes = BENCH_BYTES;
      t[k].count = BENCH_BYTES / 4;
      t[k].dtype = "ncclFloat32";
    }
    if (a->workload == W_P2P_1NODE) {
      n = 2;
      t[0].func = SIM_FUNC_SEND, t[0].peer = (a->rank + 1) % 2, t[0].nChannels = 1, t[0].chanBase = 0;
      t[1].func = SIM_FUNC_RECV, t[1].peer = (a->rank + 1) % 2, t[1].nChannels = 1, t[1].chanBase = 1;
    } else {
      t[0].func = SIM_FUNC_ALLREDUCE, t[0].peer = -1, t[0].nChannels = simOpt.channels;
    }
    simGroupSpec g = {.nTasks = n, .tasks = t};
    if (simRunGroup(&c, &g)) break;
  }
  simCommFinalize(&c);
  simTruthThreadEnd();
  return NULL;
}

int simRunBenchNccl(void) {
  int w = 0;
  while (w < W_COUNT && strcmp(simOpt.benchNccl, workloadNames[w])) w++;
  if (w == W_COUNT) {
    SIM_ERR("--bench-nccl: unknown workload '%s' (coll-1node, coll-net, p2p-1node)", simOpt.benchNccl);
    return 2;
  }
  const char* chosen = simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  if (!chosen || !*chosen) chosen = "none";
  simLoaderForceSpec(chosen);
  simSharedInit(1);
  simBenchOn = true;
  double clockNs = simBenchClockPairNs();
  int ops = (simOpt.iters > 0 ? simOpt.iters : 1) * 1000;
  ncclBenchArg args[2];
  pthread_t th[2];
  for (int r = 0; r < 2; r++) {
    args[r] = (ncclBenchArg){.rank = r, .workload = w, .ops = ops};
    simThreadCreate(&th[r], benchNcclApp, &args[r]);
  }
  for (int r = 0; r < 2; r++) simThreadJoin(th[r]);
  simBenchAcc acc[5];
  simBenchTake(acc);
  double callNs = 0;
  uint64_t calls = 0;
  for (int r = 0; r < 5; r++)
    for (int q = 0; q < 3; q++) callNs += (double)acc[r].ns[q], calls += acc[r].n[q];
  /* a timed call is the interval between two clock reads: one read's time (half a pair) is timing */
  double own = callNs - (double)calls * clockNs / 2.0;
  if (own < 0) own = 0;
  uint64_t nOps = atomic_load_explicit(&simShm->costOps, memory_order_relaxed);
  double perOp = nOps ? 1.0 / (double)nOps : 0;
  uint64_t bit[SIM_COST_BITS], total = 0;
  for (int b = 0; b < SIM_COST_BITS; b++) total += bit[b] = atomic_load_explicit(&simShm->costBitNs[b], memory_order_relaxed);
  printf("BENCHNCCL {\"workload\":\"%s\",\"nccl\":\"%s\",\"plugin\":\"%s\",\"mask\":%d,\"channels\":%d,\"ops\":%llu,"
         "\"calls_per_op\":%.2f,\"clock_pair_ns\":%.1f,\"plugin_ns_per_op\":%.1f,\"nccl_ns_per_op\":%.1f,"
         "\"bits_ns_per_op\":{\"KernelCh\":%.1f,\"ProxyStep\":%.1f,\"NetPlugin\":%.1f,\"ProxyCtrl\":%.1f},"
         "\"ctrl_events_per_op\":%.2f}\n",
         workloadNames[w], simNcclCur.name, chosen, __atomic_load_n(&simEventMask, __ATOMIC_RELAXED),
         simOpt.channels, (unsigned long long)nOps, (double)calls * perOp, clockNs, own * perOp, (double)total * perOp,
         (double)bit[SIM_COST_KCH] * perOp, (double)bit[SIM_COST_STEP] * perOp, (double)bit[SIM_COST_NET] * perOp,
         (double)bit[SIM_COST_CTRL] * perOp,
         (double)atomic_load_explicit(&simShm->costCtrlEvents, memory_order_relaxed) * perOp);
  return simPluginErrors() ? 1 : 0;
}
