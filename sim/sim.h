/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: shared types and prototypes of the NCCL-free simulator.
 *
 * The simulator drives a profiler plugin the way NCCL does: app threads issue
 * the API/launch events, one proxy thread per rank issues the proxy and kernel
 * events, one network thread per proxy issues NetPlugin events. Every call to
 * the plugin goes through calls.c, which applies the per-version adapter
 * (adapters.c) and records the ground truth (truth.c).
 */
#ifndef NCCLSCOPE_SIM_H
#define NCCLSCOPE_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "abi/nccl_profiler.h"
#include "personalities/nccl_version.h"

#define SIM_MAX_CHANNELS 64
#define SIM_STEPS 8 /* NCCL_STEPS: ProxyStep handle slots per ProxyOp */
#define SIM_MAX_RANKS 256
#define SIM_MAX_COMMS 64 /* cross-process barrier slots */
#define SIM_NTYPES 16
#define SIM_NSTATES 32

/* ---- options (main.c) ---- */
typedef struct {
  const char* plugin;   /* --plugin PATH, or NULL: NCCL_PROFILER_PLUGIN rules */
  const char* scenario;
  const char* truthPath;
  uint64_t seed;
  int iters;
  int procs, ranksPerProc, nodes;
  double netLatUs, netGbps;
  bool fast;
  bool bench;
  int benchThreads;
  int benchReps;       /* --bench-reps: interleaved repetitions, medians reported */
  bool benchMicro;     /* --bench-micro: tight loops of identical calls (bench_micro.c) */
  bool benchShared;    /* --bench-shared-comm: micro threads share one communicator */
  int benchBatch;      /* --bench-batch: sequences per timed batch */
  int benchBatches;    /* --bench-batches: batches per sequence kind and repetition */
  int benchSettleMs;   /* --bench-settle-ms: untimed pause between micro repetitions */
  unsigned benchSeqMask; /* --bench-seq: micro sequences to run (bit per sequence) */
  bool benchCadence;     /* --bench-cadence: NCCL's sequences with cache-evicting gaps (bench_cadence.c) */
  const char* benchGaps; /* --bench-gaps: gaps between collectives, us, comma-separated */
  const char* benchBaseline; /* --bench-baseline: another build of the plugin, timed beside --plugin's */
  int channels;        /* max channels per collective */
  int timerGranNs;     /* GPU timer quantum */
  int hangTimeoutMs;
  int stragglerUs;
  int verbose;
  const char* replayPath; /* --replay FILE_OR_DIR */
  double replaySpeed;     /* --speed: recorded time / replay time; 0: no pacing */
  /* real NCCL timing and configuration (docs/simulator.md, "Timing and configuration") */
  int connectMs;          /* --connect-ms: a communicator's first launch waits for connection setup */
  int profConnectUs;      /* --profiler-connect-us: per profiler proxy connection (128) on the first op with KernelCh */
  bool nonblocking;       /* --nonblocking: the launch runs on an async thread, GroupApi stops at once */
  int asyncDepth;         /* --async-depth: groups in flight before the app waits for the oldest [1] */
  double kchLagMs;        /* --kch-lag-ms: heavy-tailed KernelCh observation lag up to this (0: the default model) */
  double gpuDriftPpm;     /* --gpu-drift-ppm: each GPU clock drifts within +-this [5] */
  double gpuOffsetS;      /* --gpu-offset-s: each GPU clock is off realtime by up to +-this [40] */
  int timesliceUs;        /* --timeslice-us: ranks share one GPU: one clock, kernels delayed up to this */
  bool copyProxy;         /* --copy-proxy: intra-node peers go through a copy proxy (SHM/P2P copy engine) */
  bool socketThreads;     /* --socket-threads: the socket plugin uses helper threads (NCCL_SOCKET_NTHREADS>0) */
  int peerWaitUs;         /* --peer-wait-us: extra proxy passes a send waits for its receiver */
  const char* exitMode;   /* --exit: "finalize" (default), "exit" (no destroy), "sigterm", "abort" */
  bool hostNs;            /* --host-ns: each node's processes in a UTS namespace of their own (hosts.c) */
  double hostOffsetS;     /* --host-offset-s: nodes >= 1 in a time namespace, CLOCK_MONOTONIC off by up to this */
  double hostDriftPpm;    /* --host-drift-ppm: nodes >= 1's CLOCK_MONOTONIC runs fast or slow by up to this */
  bool hostDriftRealtime; /* --host-drift-realtime: and their CLOCK_REALTIME with it (no NTP) */
  bool ncclCost;          /* --nccl-cost on|off: charge the threads NCCL's own work for the enabled bits [on] */
  const char* benchNccl;  /* --bench-nccl WORKLOAD: a plugin's calls and NCCL's modelled work per operation */
  int userTags;           /* --user-tags N: collective i of a communicator carries tag 1 + i % N (0: untagged) */
} simOptions;

/* What a v7 descriptor has beyond the v6 one the simulator builds: set by the
 * caller right before simStart on the same thread, consumed (cleared) by
 * simAdaptStart. KernelPhase starts pass their fields here too. */
typedef struct {
  uint64_t userTag;
  const char* kernelVariant;
  bool isSymColl;
  uint8_t phaseChannel, phaseId;
  const char* phaseName;
  uint64_t phasePTimer;
} simV7Extra;
extern _Thread_local simV7Extra simV7Next;
extern simOptions simOpt;

/* ---- hosts.c: simulated hosts (UTS and time namespaces) ---- */
extern int64_t simHostOffsetNs; /* this process's CLOCK_MONOTONIC - the modelled timeline (node 0's) */
/* The machine's clock, as the kernel gives it (a time namespace's offset included): clock_gettime, or
 * with --host-drift-ppm the LD_PRELOADed clock shim's simclock_raw (clock_shim.c), which bypasses it. */
extern int (*simMachineClock)(clockid_t, struct timespec*);
int simHostsInit(void);             /* 0, 2 bad topology, 3 not possible here */
int simHostNodeOf(int proc);
int simHostsBeforeFork(int proc);   /* parent, before forking process proc: 0 or -1 */
void simHostsEnter(int proc);       /* process proc, first thing (parent: after its last fork) */

/* ---- model.c: clocks, random numbers, GPU clock, link model ---- */
uint64_t simNowNs(void); /* CLOCK_MONOTONIC of node 0 (simulated hosts: hosts.c) */
pid_t simGettid(void);
void simSleepUntil(uint64_t tNs); /* no-op in --fast */
typedef struct {
  uint64_t s;
} simRng;
void simRngSeed(simRng* r, uint64_t seed);
uint64_t simRngNext(simRng* r);
double simRngUniform(simRng* r); /* [0,1) */
typedef struct {
  int64_t offsetNs;  /* gpu = mono * (1 + driftPpm*1e-6) + offsetNs, then quantized */
  double driftPpm;
  int granNs;
  int64_t skewNs;    /* compute skew of this rank before its kernel starts */
} simGpuClock;
void simGpuClockInit(simGpuClock* g, int gpu, uint64_t seed);
uint64_t simGpuTime(const simGpuClock* g, uint64_t monoNs);
uint64_t simPollLagNs(simRng* r); /* proxy polling lag, occasional ms stalls (or --kch-lag-ms's heavy tail) */
uint64_t simLaunchCallNs(simRng* r); /* CPU time of one kernel launch call */
/* When a kernel launched by a call that began at tLaunch starts on the GPU (CLOCK_MONOTONIC) */
uint64_t simKernelStartNs(simRng* r, const simGpuClock* g, uint64_t tLaunch);
uint64_t simXferNs(size_t bytes);  /* latency + size/bandwidth */

/* ---- loader.c: NCCL-like plugin loading with a per-communicator refcount ---- */
typedef struct {
  int version; /* 1..6 */
  const char* name;
  const void* api; /* ncclProfiler_vN_t* */
} simPlugin;
extern int simEventMask; /* the one global mask, written by init, read relaxed */
const simPlugin* simPluginAcquire(void); /* NULL: no plugin */
void simPluginRelease(void);
int simPluginErrors(void); /* leaked threads/fds detected after dlclose, crashes NCCL would have */
void simPluginMarkGlobalNull(void); /* 2.23-2.27 after a failed init */
bool simPluginHeld(void);           /* the last acquire took a reference (the plugin may be NULL) */
void simPluginCrash(void);          /* NCCL would crash here: counted as an error */
void simPluginDeferClose(void);     /* 2.30 double unload: never really close under live contexts */
/* Is the plugin still loaded? NCCL would call into unmapped code otherwise
 * (counted, reported at the end): callers skip the call. */
bool simPluginLive(const simPlugin* p);
int simPluginDeadCalls(void);
void simThreadCreate(pthread_t* t, void* (*fn)(void*), void* arg);
void simThreadJoin(pthread_t t);
void simLoaderForceSpec(const char* spec); /* bench: override the load spec ("none" allowed) */
int simPluginLoads(void);

/* ---- adapters.c: v6 -> vN translation, as NCCL does for old plugins ---- */
/* Each returns true when the plugin was actually called. */
/* The event mask as the calling thread's last simAdaptInit left it: the truth's mask_after (the global mask
 * itself may already hold another rank's init's value: last writer wins). */
extern _Thread_local int simInitMaskAfter;
ncclResult_t simAdaptInit(const simPlugin* p, void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                          int nranks, int rank);
bool simAdaptStart(const simPlugin* p, void* ctx, void** h, ncclProfilerEventDescr_v6_t* d);
bool simAdaptStop(const simPlugin* p, void* h);
/* opSteps: the steps argument of the 2.23-2.26 ProxyOp states (0-7) */
bool simAdaptRecord(const simPlugin* p, void* h, int state, ncclProfilerEventStateArgs_v6_t* a, int opSteps);
void simAdaptFinalize(const simPlugin* p, void* ctx);
int simTypeIndex(uint64_t typeBit);
const char* simTypeName(int typeIndex);

/* ---- truth.c ---- */
void simTruthInit(void);
int simTruthRole(void); /* 0 app, 1 proxy, 2 net, 3 cuda_cb, 4 other */
/* bench: per-role call timing accumulated by calls.c */
typedef struct {
  uint64_t ns[3], n[3]; /* start, stop, record */
} simBenchAcc;
extern bool simBenchOn;
void simBenchTake(simBenchAcc out[5]);
void simTruthThreadBegin(const char* kind);
void simTruthThreadEnd(void);
void simTruthForkChild(void);
void simTruthf(const char* fmt, ...) __attribute__((format(printf, 1, 2))); /* one JSON line */
void simTruthCountStart(int type, bool called);
void simTruthCountStop(int type, bool called);
void simTruthCountRecord(int type, int state, bool called);
void simTruthWrite(const char* path, bool childPart);
void simTruthMerge(const char* path, const pid_t* kids, int n);

/* ---- calls.c: the instrumented call layer ---- */
typedef struct simEvent {
  void* h;          /* handle the plugin returned (NULL if none) */
  uint64_t serial;  /* simulator serial, 0 = never started */
  int type;         /* type index */
} simEvent;
typedef struct {
  const char* key; /* extra JSON fields for the truth start log, e.g. "\"seq\":3" */
} simKey;
void simStart(const simPlugin* p, void* ctx, simEvent* ev, const simEvent* parent, ncclProfilerEventDescr_v6_t* d,
              bool pxn, pid_t originPid, const char* keyJson);
/* A descriptor as NCCL fills one: zeroed, then its type, parent and rank
 * (the caller sets the type's own fields). */
static inline ncclProfilerEventDescr_v6_t simDescr(uint64_t type, void* parent, int rank) {
  ncclProfilerEventDescr_v6_t d = {0};
  d.type = type;
  d.parentObj = parent;
  d.rank = rank;
  return d;
}
void simStop(const simPlugin* p, simEvent* ev);
void simRecord(const simPlugin* p, simEvent* ev, int state, ncclProfilerEventStateArgs_v6_t* a);
/* 2.23-2.26 ProxyOp states 0-7, whose args are {transSize, steps} */
void simRecordOp(const simPlugin* p, simEvent* ev, int state, size_t transSize, int steps);
/* what NCCL's net callback does with a slot it never started: stopEvent(NULL) */
void simStopNull(const simPlugin* p, int type);
/* nasty: what NCCL's net callback does when the NetPlugin start was masked: stop/update a NULL handle */
void simNullHandleCalls(const simPlugin* p);
void simReuseCheckEnable(void);
/* The type bits for which NCCL calls startEvent of type index t: its own
 * and its descendants' (NCCL delivers ancestors of enabled types). */
int simTypeGate(int typeIndex);

/* ---- comm.c / streams: communicators, ranks, proxy threads ---- */
struct simProxy;
struct simDevice;
struct simDevice* simDeviceNew(void); /* a GPU model; freed by the proxy that last used it */
bool simDeviceQuiet(struct simDevice* d); /* nothing runs and no KernelCh poll is due (any thread) */
typedef struct simShared simShared; /* MAP_SHARED area across forked processes */
typedef struct simComm {
  uint64_t commId;
  const char* name;
  int slot;          /* barrier slot in simShared */
  int nranks, rank, nNodes, node;
  int localRank;     /* rank index inside this process */
  void* ctx;
  const simPlugin* plugin; /* NULL: not profiled */
  struct simProxy* proxy;  /* may be shared by split comms */
  bool ownsProxy;
  uint64_t seq[16];        /* seqNumber per function */
  uint64_t opCount;        /* ops issued on this comm (barrier generation) */
  uint64_t apiCount;       /* collective API calls on this comm (--user-tags) */
  simGpuClock gpu;
  simRng rng;       /* proxy thread */
  simRng launchRng; /* the thread that launches kernels (app, cuda_cb) */
  int hangAtOp;            /* this rank never posts op #hangAtOp (-1: never) */
  int64_t straggleNs;
  struct simDevice* dev;   /* the GPU model of this rank's communicator (proxy thread) */
  bool holdsRef;           /* holds a plugin load reference (even when not profiled) */
  bool nonblocking;
  bool connected;          /* the first launch paid connection setup */
  bool profConnected;      /* the profiler proxy channels are connected */
  struct simWork* outHead; /* app thread: works posted and not yet waited for, oldest first */
  struct simWork* outTail;
  int nOut;
  _Atomic int unsettled;   /* works the proxy has not reported completely (KernelCh included) */
} simComm;

/* shared.c: the area every process of the run maps (sim_shared.h) */
extern simShared* simShm;
void simSharedInit(int procs);
/* comm.c */
/* gpu: the GPU (world rank) whose clock the communicator's kernels use */
int simCommInit(simComm* c, uint64_t commId, const char* name, int slot, int nranks, int rank, int nNodes, int gpu,
                simComm* shareProxyWith);
void simCommFinalize(simComm* c);
/* ncclCommAbort: work in flight is abandoned (no stops), then the plugin's finalize */
void simCommAbort(simComm* c);
/* the app waits for every work it posted on c */
int simCommDrain(simComm* c);
/* NCCL's part of communicator init and finalize: take / drop a plugin
 * reference and call the plugin, noted in the truth. Init returns NULL (and
 * *ctx NULL) when the communicator is not profiled. */
const simPlugin* simProfilerInit(void** ctx, uint64_t commId, const char* name, int nNodes, int nranks, int rank,
                                 bool* holdsRef);
void simProfilerFinalize(const simPlugin* p, void* ctx, uint64_t commId, int rank, bool holdsRef);

/* one network or p2p operation handed from the app thread to the proxy */
enum { SIM_FUNC_BROADCAST, SIM_FUNC_REDUCE, SIM_FUNC_ALLGATHER, SIM_FUNC_REDUCESCATTER, SIM_FUNC_ALLREDUCE,
       SIM_FUNC_SENDRECV, SIM_FUNC_SEND, SIM_FUNC_RECV, SIM_FUNC_ALLTOALL, SIM_NFUNCS };
const char* simFuncName(int f);

typedef struct simTask {
  int func;
  size_t count;
  size_t bytes;
  int root, peer;
  const char* dtype;
  int nChannels;
  int chanBase;
  bool sym;      /* a symmetric-memory collective (2.28+: its own kernel, API events only) */
  uint64_t tag;  /* the user's profiler tag (v7: collConfig.userProfilerTag; 0 = untagged) */
  int mask;      /* the activation mask as NCCL read it for this task (per task 2.26+, per group before) */
  simEvent api;  /* CollApi / P2pApi */
  simEvent task; /* Coll / P2p */
  uint64_t seq;
  uint64_t ceSeq;
} simTask;

typedef struct simGroupSpec {
  int nTasks;
  simTask* tasks;
  bool graphCaptured;
  int replays; /* graph: number of replays after capture */
  bool ce;     /* v6 copy-engine path */
  bool pxn;
  uint64_t tLaunch, tKernel; /* set by simRunGroup: its launch call began / its kernel starts (0: replay) */
} simGroupSpec;

/* streams_app.c: run one ncclGroupStart..End with the given tasks on comm */
int simRunGroup(simComm* c, simGroupSpec* g);
/* streams_proxy.c */
struct simProxy* simProxyCreate(simComm* owner);
void simProxyShare(struct simProxy* p, struct simDevice* dev);
/* the last user destroys it (and every user's device); abandon: ncclCommAbort */
void simProxyRelease(struct simProxy* p, bool abandon);
typedef struct simWork simWork;
void simProxyPost(struct simProxy* p, simWork* w);
int simWorkWait(simWork* w); /* returns 1 if aborted (hang) */
simWork* simWorkNew(simComm* c, simGroupSpec* g, int mask, uint64_t opIndex, bool replay);
void simWorkSetDeviceOnly(simWork* w);
void simWorkLink(simWork* w, simWork* next); /* the poster's list (simComm.outHead) */
simWork* simWorkNextOut(simWork* w);
void simWorkRelease(simWork* w); /* the poster's reference; the proxy holds its own */

/* ---- nccl_cost.c: NCCL's own work for the bits a task's mask enables (docs/simulator.md) ---- */
enum { SIM_COST_KCH, SIM_COST_STEP, SIM_COST_NET, SIM_COST_CTRL, SIM_COST_BITS };
typedef struct {
  uint64_t bitNs[SIM_COST_BITS]; /* modelled ns per bit */
  uint64_t appNs, proxyNs, gpuNs; /* the same ns by where they are spent */
  int kchOps;                    /* profiler proxy ops of tasks without network proxy ops */
  int kchNetChannels;            /* KernelCh channels of tasks that have network proxy ops (timestamps only) */
  int steps, netReqs;            /* ProxySteps and network requests NCCL reports */
} simCost;
struct simWork;
void simWorkSetCost(struct simWork* w, const simCost* caller); /* the caller's part, before the post */
/* The caller's part of a plan (application or graph-callback thread, before it posts the work):
 * computed into *out and charged to the calling thread. */
void simCostCaller(const simComm* c, const simGroupSpec* g, bool deviceOnly, simCost* out);
/* Busy time on the calling thread, unless --fast or --nccl-cost off. */
void simCostCharge(uint64_t ns);
/* One ProxyCtrl event NCCL made (proxy thread): charged and counted. */
void simCostCtrlEvent(void);
/* The run's totals over every process: one truth record and one line on stderr (the parent, at the end). */
void simCostReport(void);

/* processes.c: run(0) here and run(1..n-1) in forked processes; merges the truth parts */
int simRunProcesses(int n, int (*run)(int procIndex));
/* replay_run.c */
int simRunReplay(const char* path);
/* scenarios.c */
int simRunScenario(const char* name);
void simScenarioPresets(const char* name); /* options a scenario implies, before the run starts */
/* bench.c */
int simRunBench(void);
/* bench_plugins.c: the empty plugin and the chosen one (ncclProfiler_v6) for the micro benchmarks */
typedef struct {
  const char* name;
  void* lib;
  const ncclProfiler_v6_t* api;
  void* sharedCtx;
} simBenchPlugin;
/* out[0] the empty plugin, out[1] the chosen one, out[2] --bench-baseline's (another build of it,
 * compared side by side) when given: *n is 2 or 3. 0, or the exit status. */
#define SIM_BENCH_MAX_PLUGINS 3
int simBenchOpenPlugins(const char* mode, simBenchPlugin out[SIM_BENCH_MAX_PLUGINS], int* n);
void simBenchClosePlugins(simBenchPlugin p[SIM_BENCH_MAX_PLUGINS]);
void simBenchSort(double* v, size_t n);
double simBenchClockPairNs(void); /* one clock_gettime pair, as calls.c times each call */
/* bench_nccl.c: --bench-nccl WORKLOAD */
int simRunBenchNccl(void);
/* bench_cadence.c */
int simRunBenchCadence(void);
/* bench_micro.c */
int simRunBenchMicro(void);
unsigned simBenchSeqMask(const char* name);

#define SIM_ERR(...) (fprintf(stderr, "ncclscope-sim: error: " __VA_ARGS__), fputc('\n', stderr))
#define SIM_INFO(...)                                                \
  do {                                                               \
    if (simOpt.verbose) {                                            \
      fprintf(stderr, "ncclscope-sim: " __VA_ARGS__);                \
      fputc('\n', stderr);                                           \
    }                                                                \
  } while (0)

#endif
