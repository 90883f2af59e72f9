/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the NCCL personalities and the quirks each one shows.
 *
 * Sources: NCCL's tree at v2.23.4 .. v2.30.7 (src/plugin/profiler*.cc,
 * enqueue.cc, group.cc, proxy.cc, transport/net.cc, transport/profiler.cc,
 * device/common.h, net_ib, net_socket) and the 2.31/2.32 tree
 * (NCCL's src/plugin/profiler.cc with its profiler thread, its v7 loader
 * and v7 header, the symmetric
 * kernels' ncclSymkProfilerPhase), summarised in docs/simulator.md ("NCCL
 * personalities"). Quirks seen through 2.30 that the 2.31/2.32 source keeps
 * run to 32. Runs on the main thread, before the run.
 */
#include <stdlib.h>
#include <string.h>

#include "personalities/nccl_version.h"

#define Q(x) (1ull << (x))

static const struct {
  int q;
  const char* name;
  int from, to; /* NCCL minor versions that show it */
  const char* doc;
} quirks[Q_COUNT] = {
    {Q_API_EVENTS, "api-events", 28, 32, "GroupApi/CollApi/P2pApi/KernelLaunch events"},
    {Q_CE_EVENTS, "ce-events", 29, 32, "copy-engine events CeColl/CeSync/CeBatch"},
    {Q_GRAPH_ONCE, "graph-once", 27, 32,
     "a captured plan without proxy ops emits Group/Coll once at capture (before 2.27: never)"},
    {Q_COALESCE, "coalesce", 27, 32, "works of one kernel batch share its KernelCh interval"},
    {Q_PTIMER, "ptimer-ring", 27, 32,
     "KernelCh pTimers come from a 64-slot ring per channel, matched by work counters (may be another work's)"},
    {Q_SELF_P2P_DRIFT, "self-p2p-drift", 26, 32,
     "a self send/recv is device work without a profiler op: later KernelCh get other works' times"},
    {Q_AGV_BCAST, "agv-bcast", 29, 32,
     "Broadcast runs as AllGatherV: GroupApi/CollApi only, device counter advances without a profiler op"},
    {Q_SYMMETRIC, "symmetric", 28, 30, "symmetric-memory collectives emit only GroupApi/CollApi"},
    {Q_RECV_STEP_LEAK, "recv-step-leak", 23, 32,
     "a receive ProxyStep is started again each proxy pass until its post succeeds; only the last is stopped"},
    {Q_SEND_PEER_REPEAT, "send-peer-repeat", 23, 32,
     "SendPeerWait (before 2.27: ProxyOp state 1) repeats each proxy pass while the receiver is not ready"},
    {Q_PROXYOP_UNSTOPPED, "proxyop-unstopped", 27, 32, "ProxyOps of copy (non-net) transports are never stopped"},
    {Q_PROXYOP_QUEUED, "proxyop-queued", 27, 32,
     "a net ProxyOp starts when queued on its connection, InProgress only when the ops before it are done"},
    {Q_STEP_ARGS_NULL, "step-args-null", 23, 26, "ProxyStep states carry NULL args"},
    {Q_OLD_PROXYOP_STATES, "old-proxyop-states", 23, 26,
     "ProxyOp states 0-7 with {steps, transSize accumulated over reuses} instead of InProgress (19)"},
    {Q_STALE_TRANSSIZE, "stale-transsize", 27, 32,
     "transSize is the step's own only in SendWait and RecvFlushWait; other states carry an older size"},
    {Q_STEP_NEEDS_OP, "step-needs-op", 23, 27, "ProxySteps start only under a non-NULL ProxyOp handle"},
    {Q_NET_DOUBLE_STOP, "net-double-stop", 26, 32,
     "the IB plugin stops each QP event at its completion and again at the request's, sometimes a NULL handle"},
    {Q_NET_NO_UPDATE, "net-no-update", 26, 32, "built-in net plugins never send NetPluginUpdate"},
    {Q_SOCKET_PROXY_THREAD, "socket-proxy-thread", 26, 32,
     "the socket plugin (no helper threads by default) calls from the proxy thread, inside test()"},
    {Q_EVENT_RANK_ZERO, "rank-zero", 23, 32,
     "Group, KernelCh, ProxyCtrl, API and KernelLaunch descriptors carry rank 0"},
    {Q_MASK_PER_TASK, "mask-per-task", 26, 32, "the mask is read per task / API call, not once per group"},
    {Q_SEQ_AFTER_EMIT, "seq-after-emit", 23, 25, "Coll seqNumber counts emitted Colls, graph replays included"},
    {Q_PROFILER_CONNECT, "profiler-connect", 26, 30, /* 2.31+: KernelCh ops go to the profiler thread */
     "with KernelCh in the mask the first op connects 128 profiler proxy channels, blocking the launch"},
    {Q_V5_SHIM_GARBAGE, "v5-shim-args", 29, 32, "the v5 shim passes an uninitialised args struct for GroupApi states"},
    {Q_V4_SHIM_GARBAGE, "v4-shim-nchannels", 28, 32, "the v4 shim leaves P2p nChannels uninitialised"},
    /* src/plugin/profiler.cc (2.31+): ncclProfilerThreadFunc polls the device's start/complete rings every
     * 1-10 us and makes the KernelCh and KernelPhase calls itself, whatever the proxy thread does */
    {Q_PROFILER_THREAD, "profiler-thread", 31, 32,
     "KernelCh/KernelPhase come from NCCL's profiler thread (polls every 1-10 us), not from proxy progress"},
    /* src/plugin/profiler.cc, profilerFireKernelPhaseEvents: only if the op's mask has KernelPhase; each of
     * initial_sync, compute, final_sync is started, KernelPhaseStop (31, args.kernelCh.pTimer) and stopped
     * just before its KernelCh's KernelChStop; a zero-length phase is skipped */
    {Q_KERNEL_PHASE, "kernel-phase", 31, 32,
     "KernelPhase initial_sync/compute/final_sync under each KernelCh when the mask has KernelPhase"},
    /* src/plugin/profiler.cc, ncclProfilerStartTaskEvents: isSymColl, kernelVariant, algo from the variant,
     * proto ""; profilerPostPlanWorkSym posts KernelCh ops for the symmetric kernel's channels */
    {Q_SYM_COLL_EVENTS, "sym-coll-events", 31, 32,
     "symmetric collectives emit Coll (isSymColl, kernelVariant) and KernelCh"},
    /* the kernels write phase timestamps and a system fence under profilerEnabled, which KernelCh alone sets
     * (no separate KernelPhase gate in the 2.31/2.32 device code; upstream's 2.31.2 regression report: 1 MiB AllReduce
     * 0.44 % -> 10.49 % with Group|Coll|P2p|KernelCh; a proposed fix adds the gate) */
    {Q_KCH_PHASE_COST, "kch-phase-cost", 31, 32,
     "KernelCh alone makes the kernels write phase timestamps behind a system fence (NCCL's cost only)"},
};

static const struct {
  const char* name;
  int minor, nativeAbi;
  simInitFailMode initFail;
} releases[] = {
    {"2.23", 23, 1, SIM_INITFAIL_GLOBAL_NULL},
    {"2.24", 24, 2, SIM_INITFAIL_GLOBAL_NULL},
    {"2.25", 25, 2, SIM_INITFAIL_GLOBAL_NULL},
    {"2.26", 26, 3, SIM_INITFAIL_GLOBAL_NULL},
    {"2.27", 27, 4, SIM_INITFAIL_GLOBAL_NULL},
    {"2.28", 28, 5, SIM_INITFAIL_KEEP_CONTEXT},
    {"2.29", 29, 6, SIM_INITFAIL_KEEP_CONTEXT},
    {"2.30", 30, 6, SIM_INITFAIL_DOUBLE_UNLOAD},
    /* src/plugin/profiler.cc (2.31+): v7 looked up first; a failed init unloads at once, finalize unloads again */
    {"2.31", 31, 7, SIM_INITFAIL_DOUBLE_UNLOAD},
    {"2.32", 32, 7, SIM_INITFAIL_DOUBLE_UNLOAD},
};
#define IDEAL_RELEASE 7 /* ideal: 2.30's ABI (v6) */
#define NRELEASES (sizeof releases / sizeof releases[0])

simNccl simNcclCur;

static void setRelease(size_t i) {
  simNcclCur.name = releases[i].name;
  simNcclCur.minor = releases[i].minor;
  simNcclCur.nativeAbi = releases[i].nativeAbi;
  simNcclCur.initFail = releases[i].initFail;
  simNcclCur.quirks = 0;
  for (int q = 0; q < Q_COUNT; q++)
    if (quirks[q].from <= releases[i].minor && releases[i].minor <= quirks[q].to) simNcclCur.quirks |= Q(q);
}

bool simNcclSelect(const char* name) {
  if (!strcmp(name, "ideal")) {
    setRelease(IDEAL_RELEASE);
    simNcclCur.name = "ideal";
    simNcclCur.initFail = SIM_INITFAIL_DROP_COMM;
    simNcclCur.quirks = Q(Q_API_EVENTS) | Q(Q_CE_EVENTS) | Q(Q_GRAPH_ONCE);
    return true;
  }
  for (size_t i = 0; i < NRELEASES; i++) {
    size_t n = strlen(releases[i].name);
    /* "2.28" or a full release such as "2.28.9" / "2.28.9-1" */
    if (!strncmp(name, releases[i].name, n) && (name[n] == 0 || name[n] == '.' || name[n] == '-')) {
      setRelease(i);
      return true;
    }
  }
  fprintf(stderr, "ncclscope-sim: error: --nccl: unknown NCCL version '%s'; known:\n", name);
  simNcclPrintKnown(stderr);
  return false;
}

bool simNcclQuirks(const char* spec) {
  char* s = strdup(spec);
  bool ok = true;
  for (char* tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    bool on = *tok != '-';
    if (*tok == '-' || *tok == '+') tok++;
    int q = -1;
    for (int k = 0; k < Q_COUNT; k++)
      if (!strcmp(tok, quirks[k].name)) q = k;
    if (q < 0) {
      fprintf(stderr, "ncclscope-sim: error: --quirk: unknown quirk '%s'; known:\n", tok);
      for (int k = 0; k < Q_COUNT; k++) fprintf(stderr, "  %-20s %s\n", quirks[k].name, quirks[k].doc);
      ok = false;
      break;
    }
    if (on)
      simNcclCur.quirks |= Q(q);
    else
      simNcclCur.quirks &= ~Q(q);
  }
  free(s);
  return ok;
}

const char* simQuirkName(int q) { return q >= 0 && q < Q_COUNT ? quirks[q].name : "?"; }
const char* simQuirkDoc(int q) { return q >= 0 && q < Q_COUNT ? quirks[q].doc : "?"; }

void simNcclPrintKnown(FILE* f) {
  static const char* initFail[] = {"init error: plugin dropped for every comm, crash at the last unload",
                                   "init error: comm keeps the context the plugin wrote",
                                   "init error: unloaded at once and again at finalize", "init error: comm not profiled"};
  for (size_t i = 0; i < NRELEASES; i++)
    fprintf(f, "  %-6s ncclProfiler_v%d and older; %s\n", releases[i].name, releases[i].nativeAbi,
            initFail[releases[i].initFail]);
  fprintf(f, "  ideal  2.30's ABI without any quirk (the simulator's model before personalities)\n");
}
