/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: what NCCL itself does for the events a task's mask enables.
 *
 * NCCL reads the activation mask for every task (per group before 2.26) and
 * does work of its own for some bits, whatever the plugin does with the
 * calls (docs/simulator.md, "NCCL's side of the cost"):
 *   KernelCh  on a task with no network proxy ops of its own: profiler proxy
 *             ops, one per channel (ncclProfilerNeedsProxy, SaveProxyProfiler in
 *             proxy.cc), posted to the proxy thread, which must wake and
 *             progress them; and the kernel's timestamp writes (devWork.profilerEnabled);
 *             on a task with network proxy ops: only the timestamp writes;
 *   ProxyStep per step: its start, states and stop (transport/net.cc);
 *   NetPlugin per network request: its start and stop (the net plugin's profiler callback);
 *   ProxyCtrl per event of the proxy loop (proxy.cc: sleep, append, idle/active).
 * The caller's part is computed and charged on the thread that posts a
 * plan; the proxy's part on the proxy thread when it appends the work
 * (proxy_thread.c), ProxyCtrl per event. Charging is busy time (a spin), so
 * the simulated timeline pays it as a job would; --fast and --nccl-cost off
 * only report it. Totals go to the shared area (every process) and are
 * reported once by the parent.
 */
#include <string.h>

#include "nccl/proxy.h"

/* The constants of a range of releases. */
typedef struct {
  int fromMinor, toMinor;   /* releases the row models (ideal: 2.30's) */
  uint32_t planAppNs;       /* KernelCh, a plan without network proxy ops: post + wake of the proxy (caller) */
  uint32_t planProxyNs;     /* ... the proxy thread woken for it, appending and finishing the plan */
  uint32_t opAppNs;         /* ... per profiler proxy op (one per channel): SaveProxyProfiler (caller) */
  uint32_t opProxyNs;       /* ... per profiler proxy op: its progress on the proxy thread */
  uint32_t tsWriteNs;       /* KernelCh: one timestamp write of a channel (GPU), two per channel */
  uint32_t stepNs;          /* ProxyStep: per step, its start, states and stop (proxy thread) */
  uint32_t netReqNs;        /* NetPlugin: per network request, its start and stop (proxy or net thread) */
  uint32_t ctrlEventNs;     /* ProxyCtrl: per event of the proxy loop (proxy thread) */
  uint32_t phaseKernelNs; /* v7 phase instrumentation: per kernel, its phase timestamp writes and system fence (GPU) */
} simCostRow;

/* Calibrated against an empty plugin returning NULL handles with mask 0xFFF against no plugin,
 * 1M iterations, on one node (NVLink, no network) and two nodes:
 *   small AllReduce, one node: +7.64 us; Send/Recv, one node: +7.26 us; AllReduce, two nodes: +0.33 us.
 * With the simulator's channels (docs/simulator.md: the collective on 4 channels, the Send and the
 * Recv on 1 each): per profiler op (app + proxy) = (7.64 - 7.26 us - 4 timestamp writes) / (4 - 2 ops)
 * = 170 ns; per plan = 7.64 us - 4 ops - 8 writes - the proxy loop's ProxyCtrl events (4 per op);
 * the two-node AllReduce's 8 steps, 8 requests, 8 writes and ProxyCtrl events make its 0.33 us.
 * The split of a plan's and an op's cost between the caller and the proxy thread is not measured
 * (only their sum is): the caller is given the post and the proxy's wake-up call. */
static const simCostRow rows[] = {
    /* 2.23-2.25: no KernelCh or NetPlugin events (ABI v1/v2), ProxyStep/ProxyCtrl as later
     * (transport/net.cc, proxy.cc of those tags; 2.23-2.26 record ProxyOp states per step instead) */
    {23, 25, 0, 0, 0, 0, 0, 20, 0, 8, 0},
    /* 2.26-2.30: enqueue.cc reads the mask per task, ncclProfilerNeedsProxy (profiler.cc) gives
     * every KernelCh task profiler proxy ops (SaveProxyProfiler, proxy.cc), the kernel writes
     * timestamps when devWork.profilerEnabled (device/common.h), the IB and socket plugins call
     * the profiler per request (net_ib, net_socket) */
    {26, 30, 2000, 4848, 80, 90, 10, 20, 8, 8, 0},
    /* 2.31-2.32: as 2.26-2.30 on the host (the profiler thread replaces the proxy's polling at about the same
     * cost), plus the kernels' phase timestamps and their system fence whenever profilerEnabled, i.e. KernelCh
     * alone (quirk kch-phase-cost; device code of 2.31.2; the upstream regression report: a 1 MiB AllReduce on 8 A100
     * went from 0.44 % to 10.49 % overhead, 52.265 -> 46.783 GB/s: ~4 us per ~40 us operation) */
    {31, 32, 2000, 4848, 80, 90, 10, 20, 8, 8, 4000},
};

static const simCostRow* rowCur(void) {
  int minor = simNcclCur.minor;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (minor >= rows[i].fromMinor && minor <= rows[i].toMinor) return &rows[i];
  return &rows[sizeof rows / sizeof rows[0] - 1]; /* ideal: 2.30's */
}

static const char* tableName(void) {
  int from = rowCur()->fromMinor;
  return from >= 31 ? "2.31-2.32" : from >= 26 ? "2.26-2.30" : "2.23-2.25";
}

static bool isP2pFunc(int f) { return f == SIM_FUNC_SEND || f == SIM_FUNC_RECV; }

/* Does the task move data through proxy ops of its own on this rank? proxy_net.c's simNetPlan's rule:
 * a ring neighbour or peer on another node, or a copy transport. */
static bool taskHasProxyOps(const simComm* c, const simTask* t) {
  if ((t->sym && simQuirk(Q_SYMMETRIC)) || (isP2pFunc(t->func) && t->peer == c->rank)) return false;
  if (simOpt.copyProxy && simNcclCur.minor >= 27) return true;
  int n = c->nranks, rpn = (n + c->nNodes - 1) / c->nNodes;
  int peers[2] = {-1, -1};
  if (isP2pFunc(t->func))
    peers[0] = t->peer;
  else if (n > 1)
    peers[0] = (c->rank + 1) % n, peers[1] = (c->rank - 1 + n) % n;
  for (int i = 0; i < 2; i++)
    if (peers[i] >= 0 && peers[i] / rpn != c->node) return true;
  return false;
}

void simCostCharge(uint64_t ns) {
  if (ns && simOpt.ncclCost && !simOpt.fast) simSleepUntil(simNowNs() + ns);
}

void simCostCaller(const simComm* c, const simGroupSpec* g, bool deviceOnly, simCost* out) {
  memset(out, 0, sizeof *out);
  const simCostRow* r = rowCur();
  if (!c->plugin || deviceOnly || g->ce || simNcclCur.nativeAbi < 3) return;
  for (int i = 0; i < g->nTasks; i++) {
    const simTask* t = &g->tasks[i];
    if (!(t->mask & ncclProfileKernelCh) || (t->sym && simQuirk(Q_SYMMETRIC))) continue;
    /* device.c's hasOp: no profiler op for an AllGatherV Broadcast or a self send/recv */
    if (t->func == SIM_FUNC_BROADCAST && simQuirk(Q_AGV_BCAST)) continue;
    if (isP2pFunc(t->func) && t->peer == c->rank && simQuirk(Q_SELF_P2P_DRIFT)) continue;
    if (!taskHasProxyOps(c, t)) out->kchOps += t->nChannels;
  }
  if (out->kchOps) out->appNs = r->planAppNs + (uint64_t)out->kchOps * r->opAppNs;
  out->bitNs[SIM_COST_KCH] = out->appNs;
  simCostCharge(out->appNs);
}

/* one operation's cost (proxy thread) into the process's totals */
static void addOp(const simCost* k) {
  for (int b = 0; b < SIM_COST_BITS; b++)
    atomic_fetch_add_explicit(&simShm->costBitNs[b], k->bitNs[b], memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costWhereNs[0], k->appNs, memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costWhereNs[1], k->proxyNs, memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costWhereNs[2], k->gpuNs, memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costOps, 1, memory_order_relaxed);
}

void simCostProxy(simWork* w) {
  const simCostRow* r = rowCur();
  simCost* k = &w->cost;
  const simComm* c = w->c;
  bool kchAbi = w->plugin && simNcclCur.nativeAbi >= 3 && !w->deviceOnly;
  int tsWrites = 0;
  bool phases = false; /* the kernel writes phase timestamps behind a system fence */
  for (int i = 0; i < w->nk; i++) {
    const kchOp* op = &w->kops[i];
    const simTask* t = &w->g.tasks[op->task];
    if (!kchAbi || !(t->mask & ncclProfileKernelCh) || (t->func == SIM_FUNC_BROADCAST && simQuirk(Q_AGV_BCAST)))
      continue;
    tsWrites += 2; /* the channel's start and end of this work (devWork.profilerEnabled) */
    if (simQuirk(Q_KCH_PHASE_COST) || (simQuirk(Q_KERNEL_PHASE) && (t->mask & ncclProfileKernelPhase))) phases = true;
    if (taskHasProxyOps(c, t)) k->kchNetChannels++;
  }
  uint64_t proxyKch = k->kchOps ? r->planProxyNs + (uint64_t)k->kchOps * r->opProxyNs : 0;
  k->gpuNs = (uint64_t)tsWrites * r->tsWriteNs + (phases ? r->phaseKernelNs : 0);
  uint64_t stepNs = 0, netNs = 0;
  for (int i = 0; i < w->nsub; i++) {
    const subState* s = &w->subs[i];
    if (!w->plugin || s->copy || s->silent) continue;
    int m = simSubMask(w, s);
    if (m & ncclProfileProxyStep) k->steps += s->nSteps, stepNs += (uint64_t)s->nSteps * r->stepNs;
    if ((m & ncclProfileNetPlugin) && simNcclCur.nativeAbi >= 3)
      k->netReqs += s->nSteps, netNs += (uint64_t)s->nSteps * r->netReqNs;
  }
  k->bitNs[SIM_COST_KCH] += proxyKch + k->gpuNs;
  k->bitNs[SIM_COST_STEP] = stepNs;
  k->bitNs[SIM_COST_NET] = netNs;
  k->proxyNs = proxyKch + stepNs + netNs;
  uint64_t total = k->appNs + k->proxyNs + k->gpuNs;
  simTruthf("\"kind\":\"nccl_cost\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%llu,\"mask\":%d,\"kch_ops\":%d,"
            "\"kch_net_channels\":%d,\"ts_writes\":%d,\"steps\":%d,\"net_reqs\":%d,\"app_ns\":%llu,\"proxy_ns\":%llu,"
            "\"gpu_ns\":%llu,\"bits\":{\"KernelCh\":%llu,\"ProxyStep\":%llu,\"NetPlugin\":%llu},\"total_ns\":%llu,"
            "\"replay\":%s",
            (unsigned long long)c->commId, c->rank, (unsigned long long)w->opIndex, w->mask, k->kchOps,
            k->kchNetChannels, tsWrites, k->steps, k->netReqs, (unsigned long long)k->appNs,
            (unsigned long long)k->proxyNs, (unsigned long long)k->gpuNs, (unsigned long long)k->bitNs[SIM_COST_KCH],
            (unsigned long long)stepNs, (unsigned long long)netNs, (unsigned long long)total,
            w->replay ? "true" : "false");
  addOp(k);
  simCostCharge(k->proxyNs);
}

void simCostCtrlEvent(void) {
  uint64_t ns = rowCur()->ctrlEventNs;
  atomic_fetch_add_explicit(&simShm->costBitNs[SIM_COST_CTRL], ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costWhereNs[1], ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&simShm->costCtrlEvents, 1, memory_order_relaxed);
  simCostCharge(ns);
}

void simCostReport(void) {
  uint64_t bit[SIM_COST_BITS], where[3], total = 0;
  for (int b = 0; b < SIM_COST_BITS; b++) total += bit[b] = atomic_load_explicit(&simShm->costBitNs[b], memory_order_relaxed);
  for (int i = 0; i < 3; i++) where[i] = atomic_load_explicit(&simShm->costWhereNs[i], memory_order_relaxed);
  uint64_t ops = atomic_load_explicit(&simShm->costOps, memory_order_relaxed);
  uint64_t ctrl = atomic_load_explicit(&simShm->costCtrlEvents, memory_order_relaxed);
  bool charged = simOpt.ncclCost && !simOpt.fast;
  double perOp = ops ? (double)total / (double)ops : 0;
  simTruthf("\"kind\":\"nccl_cost_run\",\"table\":\"%s\",\"ops\":%llu,\"ctrl_events\":%llu,\"total_ns\":%llu,"
            "\"per_op_ns\":%.1f,\"bits\":{\"KernelCh\":%llu,\"ProxyStep\":%llu,\"NetPlugin\":%llu,\"ProxyCtrl\":%llu},"
            "\"app_ns\":%llu,\"proxy_ns\":%llu,\"gpu_ns\":%llu,\"charged\":%s",
            tableName(), (unsigned long long)ops, (unsigned long long)ctrl, (unsigned long long)total, perOp,
            (unsigned long long)bit[SIM_COST_KCH], (unsigned long long)bit[SIM_COST_STEP],
            (unsigned long long)bit[SIM_COST_NET], (unsigned long long)bit[SIM_COST_CTRL],
            (unsigned long long)where[0], (unsigned long long)where[1], (unsigned long long)where[2],
            charged ? "true" : "false");
  fprintf(stderr,
          "ncclscope-sim: NCCL-side time (modelled, NCCL %s): %.2f us per operation over %llu operation(s): "
          "KernelCh %.2f, ProxyStep %.2f, NetPlugin %.2f, ProxyCtrl %.2f us; caller %.2f, proxy %.2f, GPU %.2f us; %s\n",
          simNcclCur.name, perOp / 1000.0, (unsigned long long)ops,
          ops ? (double)bit[SIM_COST_KCH] / (double)ops / 1000.0 : 0,
          ops ? (double)bit[SIM_COST_STEP] / (double)ops / 1000.0 : 0,
          ops ? (double)bit[SIM_COST_NET] / (double)ops / 1000.0 : 0,
          ops ? (double)bit[SIM_COST_CTRL] / (double)ops / 1000.0 : 0, ops ? (double)where[0] / (double)ops / 1000.0 : 0,
          ops ? (double)where[1] / (double)ops / 1000.0 : 0, ops ? (double)where[2] / (double)ops / 1000.0 : 0,
          charged ? "charged to the threads" : simOpt.fast ? "not charged (--fast)" : "not charged (--nccl-cost off)");
}
