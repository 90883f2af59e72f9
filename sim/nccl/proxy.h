/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the proxy progress thread, its network steps and the GPU
 * model it drives. Private to action_heap.c, device.c, proxy_net.c,
 * net_plugin_events.c, net_helper.c, nccl_cost.c, proxy_thread.c and
 * work.c.
 *
 * Like NCCL's, one proxy thread per rank (shared by split communicators)
 * progresses every posted work at once: a work's network ProxyOps and steps,
 * its kernel on the GPU and its KernelCh profiler ops are timed actions in
 * one heap, executed in time order. The application thread posts works and
 * goes on (it waits only as deep as its scenario's in-flight limit), so the
 * GPU can run ahead of the proxy, as on a real system.
 *
 * Everything here is touched by the proxy thread only, except the inbox
 * (proxy mutex), a work's completion fields (work mutex) and a work's
 * reference count (atomic).
 */
#ifndef NCCLSCOPE_SIM_PROXY_H
#define NCCLSCOPE_SIM_PROXY_H

#include "personalities/nccl_version.h"
#include "sim_shared.h"

typedef struct simWork simWork;

/* The singly linked FIFOs here (the proxy's inbox, the helper's requests, a
 * stream's waiting works, a channel connection's KernelCh ops): item goes
 * last, through its `next`. head and tail are lvalues, NULL when empty. */
#define SIM_FIFO_PUSH(head, tail, item) \
  do {                                  \
    (item)->next = NULL;                \
    if (tail)                           \
      (tail)->next = (item);            \
    else                                \
      (head) = (item);                  \
    (tail) = (item);                    \
  } while (0)

/* Drops the first item of a FIFO (head must be non-NULL). */
#define SIM_FIFO_POP(head, tail)           \
  do {                                     \
    (head) = (head)->next;                 \
    if (!(head)) (tail) = NULL;            \
  } while (0)

/* ---- action_heap.c: time-ordered actions; ties run first in, first out ---- */
enum {
  A_KERNEL_START, /* the work's kernel begins on the GPU: ring writes, barrier arrival */
  A_BARRIER,      /* every rank's kernel reached this op? then the network steps begin */
  A_STEP_START,   /* ProxyStep start (+ SendGPUWait | irecv: NetPlugin start, RecvWait) */
  A_SEND_PEER,    /* SendPeerWait: the GPU produced the chunk */
  A_SEND_WAIT,    /* isend: NetPlugin start (IB), SendWait; the transfer begins */
  A_NET_STOP,     /* NetPlugin stop shortly before the completion is seen */
  A_RECV_ARRIVE,  /* irecv completed: RecvFlushWait */
  A_RECV_FLUSHED, /* RecvGPUWait */
  A_STEP_STOP,    /* ProxyStep stop (send: test() saw the completion; recv: GPU consumed) */
  A_OP_STOP,      /* ProxyOp stop (net transport only) */
  A_CH_END,       /* a channel of the work's kernel ends on the GPU: ring writes */
  A_END_BARRIER,  /* every rank's channels done with their data? then they all end together */
  A_KCH_POLL      /* the proxy looks at a channel's profiler ring (KernelCh start / stop) */
};

struct simDevice;
typedef struct {
  uint64_t t;
  uint64_t order;
  int kind;
  simWork* w;             /* the work (NULL for a KernelCh poll) */
  struct simDevice* dev;  /* KernelCh poll: the device whose ring is looked at */
  int a, b; /* kind-specific: sub and step, channel op, or channel and connection */
} simAction;

typedef struct {
  simAction* v;
  size_t n, cap;
  uint64_t order;
} simActionHeap;

void simHeapPush(simActionHeap* h, uint64_t t, int kind, simWork* w, int a, int b);
void simHeapPushPoll(simActionHeap* h, uint64_t t, struct simDevice* dev, int ch, int conn);
simAction simHeapPop(simActionHeap* h);

/* ---- one ProxyOp: a channel's network send or receive, or a copy transport's op ---- */
enum { NET_NONE, NET_STARTED, NET_STOPPED };

typedef struct netReq {
  int kind; /* 0 start, 1 stop (+ update) */
  const simPlugin* p;
  void* ctx;
  simEvent parent;  /* a copy of the step (or, socket helper: a stale step) as of the request */
  simEvent net;
  int rank;
  int64_t id;
  union {
    ncclProfilerNetIbDescr_v1_t ib;
    ncclProfilerNetSockDescr_v1_t sock;
  } data;
  char key[96];
  bool pxn;
  pid_t originPid;
  bool update; /* send NetPluginUpdate before the stop */
  _Atomic int done;
  struct netReq* next;
} netReq;

typedef struct {
  simEvent op;
  simEvent steps[SIM_STEPS];
  netReq nets[SIM_STEPS];
  int netState[SIM_STEPS];
  int ch, peer, isSend, rank, nSteps, chunk, task;
  size_t bytes;
  void* ctx;
  bool foreign;  /* PXN: runs here for a rank of another process */
  bool copy;     /* a copy (non-net) transport's op: no steps */
  bool ib;       /* even channels: IB plugin (NetPlugin inline); odd: socket plugin */
  pid_t pid;
  uint64_t linkFree;          /* model: the link is busy with earlier steps until then */
  uint64_t due[SIM_STEPS];    /* completion time of the step in the slot (send: its stop) */
  uint64_t waitAt[SIM_STEPS]; /* send: when SendWait was recorded */
  bool waitTight[SIM_STEPS];  /* send: the SendWait call was quick, waitAt is within SIM_CALL_SLOP_NS */
  int stepsDone;
  int posted;                 /* receive: steps whose post went out, in order (NCCL's sub->posted) */
  uint64_t tLast;             /* when the last step actually stopped */
  size_t lastSize;            /* the size NCCL's sub->transSize holds (stale-transsize) */
  int poolSlot;               /* the proxy's args pool element this op reuses */
  const simPlugin* plugin;    /* NULL: the communicator is not profiled */
  bool silent;                /* an op NCCL runs with mask 0 (AllGatherV Broadcast): no events */
  bool stopped;
} subState;

/* One channel of one task's kernel work, and its KernelCh profiler op. */
typedef struct kchOp {
  simWork* w;
  int task, ch, batch;
  bool recvConn;       /* FIFO of the channel's receive connection (P2p receives), else send */
  bool hasOp;          /* a profiler proxy op exists (KernelCh in the task's mask, not a self P2p) */
  uint64_t base;       /* host work counter this op waits for */
  int64_t devIndex;    /* the device work that is this task's on this channel */
  int pendingSubs;     /* network ProxyOps of this channel still running */
  uint64_t e0;         /* compute-only end of the channel */
  uint64_t lastStop;   /* latest actual stop of those ProxyOps' last steps */
  uint64_t tGpuStart, tGpuStop; /* true GPU interval of this task's work (its batch) */
  uint64_t ownEnd;     /* when this work's own part ended (0: not yet) */
  uint64_t endWant;    /* when it would end on this rank alone (data and compute done), 0: not yet */
  simEvent ev;
  int state;           /* 0 waiting for its start, 1 started, 2 stopped, 3 abandoned */
  uint64_t pStart, pStop;       /* pTimer values passed */
  uint64_t fromStart, fromStop; /* device work counter that wrote them */
  uint64_t cbStart, cbStop;     /* when the callbacks were made */
  struct kchOp* next;  /* FIFO of its connection */
} kchOp;

struct simWork {
  simComm* c;
  simGroupSpec g;
  int mask;        /* the plan's: any of its tasks' bits (each task keeps its own, simTask.mask) */
  simCost cost;    /* NCCL's modelled work for it: the caller's part, then the proxy's (nccl_cost.c) */
  uint64_t opIndex;
  bool replay;
  bool deviceOnly; /* a graph replay of a plan without proxy ops: kernel only, no host events */
  /* completion, for the application thread */
  pthread_mutex_t m;
  pthread_cond_t cv;
  int done, aborted;
  const simPlugin* plugin; /* the communicator's, as of the post */
  void* ctx;
  _Atomic int refs; /* the poster's and the proxy's */
  simWork* next;    /* inbox, then the proxy's list of works waiting for the GPU stream */
  simWork* outNext; /* the poster's list of works not yet waited for (application thread) */
  /* proxy thread only */
  subState* subs;
  int nsub;
  kchOp* kops;
  int nk;
  int* batchOf;        /* per task: its kernel batch */
  int pendingSubs;     /* ProxyOps not yet stopped (net) */
  int pendingChannels; /* kernel channels not yet ended */
  int pendingKch;      /* KernelCh ops not yet stopped or abandoned */
  uint64_t tK, tAll;
  bool kernelStarted, netStarted, completed;
  bool released;         /* the proxy let it go */
  bool arrived;          /* at the barrier */
  uint64_t barrierSince;
  int dataDone;          /* kernel channels whose data is done (the end barrier waits for all of them) */
  uint64_t endSince;     /* when this rank reached the end barrier */
  simWork *activePrev, *activeNext; /* the proxy's works */
  /* PXN: what the originating process published for this op */
  int foreignRank;
  int pxnMask;
  uint64_t pxnTask[SIM_PXN_TASKS];
};

/* ---- device.c: the GPU of one communicator rank ---- */
typedef struct {
  uint64_t counter;      /* device work counter value of this work on the channel */
  bool enabled;          /* profilerEnabled: writes the ring */
  uint64_t tStart, tEnd; /* CLOCK_MONOTONIC of its batch start / end (0: not yet) */
  uint64_t seenStart, seenEnd; /* when the proxy can first see those writes (its polling lag) */
  uint64_t tsStart, tsEnd;
  uint64_t opIndex;      /* the work (truth); UINT64_MAX for work no op of the host knows */
  int task;
} simDevWork;

typedef struct {
  uint64_t devCtr, hostCtr;
  simDevWork* works;
  size_t n, cap;
  uint64_t firstCounter; /* counter of works[0] (older ones were trimmed) */
  kchOp *head[2], *tail[2]; /* FIFOs of the send (0) and receive (1) connection */
  bool pollPending[2];
} simDevChannel;

struct simDevice {
  simDevChannel ch[SIM_MAX_CHANNELS];
  uint64_t streamFree; /* the stream's previous kernel ended then */
  bool streamBusy;
  simWork *waitHead, *waitTail; /* works whose kernel waits for the stream */
  int pendingPolls;    /* KernelCh polls scheduled and not yet made */
  /* Written by the proxy thread, read by the application thread (acquire):
   * no kernel runs or waits and no poll is due, so KernelCh ops still waiting
   * for their ring slot will wait for good (until more work is posted). */
  _Atomic int quiet;
};

void simDeviceFree(struct simDevice* d); /* its works; the struct itself is the caller's */

/* ---- the proxy ---- */
#define SIM_XFER_STATS 512
typedef struct {
  uint64_t comm;
  int rank, peer;
  size_t bytes;
  uint64_t steps, unqueued, onTime, minNs, maxLateNs;
} xferStat;

#define SIM_POOL 256 /* the proxy's reusable args elements (NCCL keeps a pool; fields survive reuse) */

typedef struct simProxy {
  simComm* owner;
  /* ProxyCtrl events use the creating communicator's plugin and context, also
   * after that communicator was finalized (a split comm still uses the proxy) */
  const simPlugin* ctrlPlugin;
  void* ctrlCtx;
  _Atomic int users;
  pthread_t th, nth;
  pthread_mutex_t m;
  pthread_cond_t cv;
  simWork *head, *tail; /* inbox */
  bool stop, abandon;
  /* socket helper thread (net_helper.c) */
  pthread_mutex_t nm;
  pthread_cond_t ncv;
  netReq *nhead, *ntail;
  bool nstop;
  /* proxy thread only */
  simActionHeap H;
  int active; /* works taken from the inbox and not yet released */
  simWork* activeHead;
  struct simDevice** devs; /* device models of its users (freed with the proxy) */
  int ndevs, capdevs;
  struct simProxy* nextProxy; /* every live proxy (proxy_thread.c) */
  int lastIdle;
  xferStat* xstats;
  int nxstats;
  size_t poolTransSize[SIM_POOL]; /* NCCL's sub->transSize, never reset between ops */
  uint64_t poolOldSize[SIM_POOL]; /* 2.23-2.26: the ProxyOp transSize, accumulated over reuses */
  simEvent poolStaleStep[SIM_POOL]; /* the socket helper's parent: the last step of a request slot */
  int nextPool;
} simProxy;

/* work.c */
void simWorkRelease(simWork* w); /* drop one reference; the last frees */
void simProxyWorkDone(simProxy* px, simWork* w); /* called when a part of the work finished */
void simWorkSignalPoster(simWork* w, int aborted); /* the poster's simWorkWait returns (aborted: given up) */
/* proxy_thread.c */
void simPollLater(simActionHeap* h, int kind, simWork* w, int a, int b);

/* proxy_net.c: ProxyOps and steps */
void simNetPlan(simProxy* px, simWork* w);         /* subs of the work (network and copy ProxyOps) */
void simNetAppend(simProxy* px, simWork* w);       /* ProxyOp starts at append (2.27+) */
void simNetBegin(simProxy* px, simWork* w);        /* after the barrier: schedule the steps */
void simNetAbort(simProxy* px, simWork* w);        /* a hung collective: stop what runs */
void simNetAction(simProxy* px, const simAction* x);
void simNetWriteStats(simProxy* px);

/* net_plugin_events.c: the NetPlugin event of step st of ProxyOp s (its request slot st % SIM_STEPS) */
void simNetPluginStart(simProxy* px, const simComm* c, int mask, subState* s, int st, size_t b); /* b: its bytes */
/* when to stop it, the step completing at `done` */
uint64_t simNetPluginStopAt(const subState* s, uint64_t now, uint64_t done);
void simNetPluginStop(simProxy* px, subState* s, int st);
void simNetPluginStopAgain(subState* s, int st);            /* the IB plugin's second stop (double-stop quirk) */
bool simNetPluginDone(simProxy* px, subState* s, int st);   /* like test(): has it ended? never blocks */
void simNetPluginFinish(simProxy* px, subState* s, int st); /* stopped and done, before the op ends */
void simNetQuiesce(simWork* w);                             /* its requests handed to the helper are done */

/* net_helper.c: the socket plugin's helper thread */
void simNetHelperStart(simProxy* px);
void simNetHelperStop(simProxy* px);
void simNetPost(simProxy* px, netReq* r);
void simNetWait(netReq* r);
void simNetDo(netReq* r); /* the NetPlugin calls of one request, on the calling thread */

/* device.c: the GPU, its profiler ring and the KernelCh events */
void simDevicePlan(simProxy* px, simWork* w);      /* batches, device works, profiler ops */
void simDeviceEnqueue(simProxy* px, simWork* w);   /* the kernel starts when the stream is free */
void simDeviceAction(simProxy* px, const simAction* x);
void simDeviceChannelDone(simProxy* px, simWork* w, int k, uint64_t at); /* channel k's last net step ended */
void simDeviceEndAll(simProxy* px, simWork* w, uint64_t t); /* the channels end as late as the last at t (end barrier) */
void simDeviceEndBarrier(simProxy* px, simWork* w); /* the work's data is done here: end with the other ranks */
void simDeviceAbort(simProxy* px, simWork* w);     /* a hung collective: channels end now */
void simDeviceAbandon(simProxy* px, simWork* w);   /* destroy/abort: KernelCh ops never fire */

/* nccl_cost.c: the proxy's part of NCCL's work for an appended work: computed, charged to the
 * proxy thread, added to the totals, and written to the truth (nccl_cost) */
void simCostProxy(simWork* w);
/* the mask a ProxyOp's events follow: its task's, or for a PXN op the originating rank's */
static inline int simSubMask(const simWork* w, const subState* s) {
  return s->foreign && w->foreignRank >= 0 ? w->pxnMask : w->g.tasks[s->task].mask;
}

#endif
