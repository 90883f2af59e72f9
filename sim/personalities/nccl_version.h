/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: NCCL personalities (--nccl VERSION) and their quirks.
 *
 * A personality is what one NCCL release does to a profiler plugin: which
 * ncclProfiler_vN it speaks natively and looks up, how it reacts to a failed
 * init, what its shims give older plugins, and which of the behaviours of
 * the facts page ("Real NCCL, version by version") it shows. Each behaviour
 * is a quirk that the personality turns on where the release has it and that
 * --quirk can turn off (or on) one by one. `ideal` is the simulator's model
 * before personalities: NCCL 2.30's ABI with none of the quirks.
 *
 * Written once by main.c before any simulator thread starts; read-only after.
 */
#ifndef NCCLSCOPE_SIM_NCCL_VERSION_H
#define NCCLSCOPE_SIM_NCCL_VERSION_H

#include <stdbool.h>
#include <stdio.h>

/* One bit per behaviour. The facts item each models is in nccl_version.c. */
enum {
  Q_API_EVENTS,       /* GroupApi/CollApi/P2pApi/KernelLaunch exist (2.28+) */
  Q_CE_EVENTS,        /* CeColl/CeSync/CeBatch exist (2.29+) */
  Q_GRAPH_ONCE,       /* a captured plan without proxy ops emits Group/Coll once at capture (2.27+; before: never) */
  Q_COALESCE,         /* the works of a kernel batch share one KernelCh interval (2.27+) */
  Q_PTIMER,           /* KernelCh carries pTimers from the 64-slot per-channel ring (2.27+; 2.26: counter only) */
  Q_SELF_P2P_DRIFT,   /* a self send/recv is device work without a profiler op: counters drift (2.26+) */
  Q_AGV_BCAST,        /* Broadcast runs as AllGatherV: no Coll, no profiler op, device counter advances (2.29+) */
  Q_SYMMETRIC,        /* symmetric-memory collectives emit only GroupApi/CollApi (2.28+) */
  Q_RECV_STEP_LEAK,   /* a receive ProxyStep is started again until its post succeeds (2.23+) */
  Q_SEND_PEER_REPEAT, /* SendPeerWait (ProxyOp state 1 before 2.27) repeats per proxy pass while the peer is not ready */
  Q_PROXYOP_UNSTOPPED,  /* ProxyOps of copy (non-net) transports start and never stop (2.27+) */
  Q_PROXYOP_QUEUED,     /* a net ProxyOp starts when queued and records InProgress when it begins (2.27+) */
  Q_STEP_ARGS_NULL,     /* ProxyStep states carry NULL args (2.23-2.26) */
  Q_OLD_PROXYOP_STATES, /* ProxyOp states 0-7 with {steps, cumulative transSize} instead of 19 (2.23-2.26) */
  Q_STALE_TRANSSIZE, /* transSize is this step's only in SendWait/RecvFlushWait; other states carry an older one (2.27+) */
  Q_STEP_NEEDS_OP,       /* ProxySteps start only under a non-NULL ProxyOp handle (2.23-2.27) */
  Q_NET_DOUBLE_STOP,     /* the IB plugin stops each QP event twice, sometimes a NULL handle (2.26+) */
  Q_NET_NO_UPDATE,       /* built-in net plugins never send NetPluginUpdate (2.26+) */
  Q_SOCKET_PROXY_THREAD, /* the socket plugin, without helper threads (its default), calls from the proxy thread (2.26+) */
  Q_EVENT_RANK_ZERO,     /* Group, KernelCh, ProxyCtrl and API descriptors carry rank 0 (all) */
  Q_MASK_PER_TASK,       /* the mask is read per task / API call (2.26+), not once per group */
  Q_SEQ_AFTER_EMIT,      /* seqNumber counts emitted Colls, replays included (2.23-2.25) */
  Q_PROFILER_CONNECT,    /* KernelCh in the mask: the first op connects 128 profiler proxy channels, blocking (2.26+) */
  Q_V5_SHIM_GARBAGE,     /* the v5 shim passes an uninitialised args struct for GroupApi states (2.29+) */
  Q_V4_SHIM_GARBAGE,     /* the v4 shim leaves p2p.nChannels uninitialised (2.28+) */
  Q_PROFILER_THREAD, /* KernelCh (and KernelPhase) come from a profiler thread of their own, not the proxy (2.31+) */
  Q_KERNEL_PHASE,    /* KernelPhase events under each KernelCh when the task's mask has KernelPhase (2.31+) */
  Q_SYM_COLL_EVENTS, /* symmetric collectives emit Coll (isSymColl, kernelVariant) and KernelCh (2.31+) */
  Q_KCH_PHASE_COST,  /* KernelCh alone turns on the kernels' phase timestamps and their fence (2.31-2.32) */
  Q_COUNT
};

typedef enum {
  SIM_INITFAIL_GLOBAL_NULL,  /* 2.23-2.27: global plugin NULL; nothing profiled after; NULL dereference at the last unload */
  SIM_INITFAIL_KEEP_CONTEXT, /* 2.28-2.29: the comm keeps whatever context the plugin wrote; finalize only if non-NULL */
  SIM_INITFAIL_DOUBLE_UNLOAD,/* 2.30: unload at once and again at finalize (the reference count underflows) */
  SIM_INITFAIL_DROP_COMM     /* ideal: the comm is not profiled, nothing else happens */
} simInitFailMode;

typedef struct {
  const char* name;  /* "2.28", "ideal" */
  int minor;         /* 23..32; 30 for ideal */
  int nativeAbi;     /* 1..7: the newest ncclProfiler_vN this release looks up */
  simInitFailMode initFail;
  unsigned long long quirks; /* bit per Q_* */
} simNccl;

extern simNccl simNcclCur; /* the personality of this run */

static inline bool simQuirk(int q) { return (simNcclCur.quirks >> q) & 1ull; }

/* --nccl NAME; false (and a message listing the known ones) if unknown */
bool simNcclSelect(const char* name);
/* --quirk [+|-]NAME[,...]: on or off on top of the personality; false on an unknown name */
bool simNcclQuirks(const char* spec);
const char* simQuirkName(int q);
const char* simQuirkDoc(int q);
/* "2.28: native v5, ..." lines for --help and the list of known personalities */
void simNcclPrintKnown(FILE* f);

#endif
