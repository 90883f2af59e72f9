/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: drive a profiler plugin with a recorded event stream.
 *
 * A recording is JSON Lines in the ncclscope export contract (the format of
 * `ncclscope export --format jsonl`, docs/jsonl-contract.md) or as the
 * per-process JSONL recorders it follows write it: lifecycle records
 * (init/finalize), event records (start and stop call, type fields), state
 * records and CUPTI kernel records. replay_load.c turns it into per-thread
 * call lists (replay_load.h lists the files that help it);
 * replay_run.c forks one process per recorded pid and replays every recorded
 * thread on a thread of its own, paced in real time, mapping recorded event
 * ids to the handles the plugin under test returns.
 */
#ifndef NCCLSCOPE_SIM_REPLAY_H
#define NCCLSCOPE_SIM_REPLAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

enum { SIM_REPLAY_INIT, SIM_REPLAY_START, SIM_REPLAY_STATE, SIM_REPLAY_STOP, SIM_REPLAY_FINI };

/* One call a recorded thread made, in the order it made them. */
typedef struct {
  int64_t ts;  /* ns on the recording's clock */
  int kind;    /* RP_* */
  int index;   /* into comms, events or states */
  int order;   /* tie-break: kind-specific causal rank, then file order */
} simReplayCall;

typedef struct {
  int pid, tid;   /* as recorded */
  simReplayCall* calls;
  int n, cap;
  /* run time */
  _Atomic int64_t nextTs; /* ts of the call this thread is about to make; INT64_MAX when done */
} simReplayThread;

typedef struct {
  uint64_t commId;
  int rank, nranks, nNodes;
  char* name; /* NULL: the recording had null */
  int pid, initTid;
  int64_t initTs, finiTs; /* finiTs < 0: the recording has no finalize */
  /* run time */
  const simPlugin* plugin;
  void* ctx;
  bool holdsRef;
  _Atomic int state; /* 0 not yet, 1 initialized, 2 not profiled (init failed or no plugin), 3 finalized */
} simReplayComm;

typedef union {
  ncclProfilerNetIbDescr_v1_t ib;
  ncclProfilerNetSockDescr_v1_t sock;
} simReplayNetData;

typedef struct {
  int type;        /* type index 0..14 */
  int parent;      /* event index; -1 none; -2 a raw foreign pointer (PXN) */
  uint64_t rawParent;
  int comm;        /* comms index; -1 for PXN events (the originator's context) */
  int pid, startTid, stopTid;
  int64_t startTs, stopTs; /* stopTs < 0: never stopped */
  bool pxn;
  int originPid;
  int rank;
  uint64_t extCorrId;            /* KernelLaunch: the CUPTI external correlation id; 0 none */
  ncclProfilerEventDescr_v6_t d; /* strings point into the recording's interned strings */
  simReplayNetData* net;         /* NetPlugin descriptor, or NULL */
  /* run time */
  simEvent ev;
  _Atomic int started; /* 0 not yet, 1 started (ev valid), 2 skipped */
} simReplayEvent;

typedef struct {
  int event;
  int state;
  int64_t ts;
  int pid, tid;
  bool hasArg;
  uint64_t arg;
} simReplayState;

typedef struct {
  char name[160];
  int64_t tsNs, durNs; /* as the trace has them (its own clock) */
  int device, stream;
} simReplayGpuKernel;

/* A CUPTI kernel record of the recording (recordType "cuptiActivity", type "KERNEL"). */
typedef struct {
  char name[160];
  int64_t startNs, endNs; /* as written (the CUPTI record's clock) */
  int pid, device;
  uint64_t corrId, extCorrId, stream;
  int grid[3], block[3];
  int launch; /* its KernelLaunch event (by extCorrId, else by order); -1 none */
  int fit;    /* its process's clock fit (gpuFits); -1 none */
} simReplayCuptiKernel;

/* The offset from a process's CUPTI record clock to its recording clock,
 * from the recording's own anchors: a kernel starts after its launch call
 * started (KernelLaunch start) and before the first KernelCh of its
 * operations was reported (KernelCh start). Each matched kernel bounds the
 * offset from below and/or above; the offset is the middle of the range left
 * and errorNs half its width: every offset the anchors allow lies within it,
 * a constant offset assumed. */
typedef struct {
  int pid;
  int kernels, matched, lowers, uppers;
  int64_t lo, hi;   /* the allowed range (valid with lowers, uppers) */
  bool consistent;  /* lo <= hi: the anchors agree on one offset */
  int64_t offsetNs; /* recording clock - CUPTI record clock */
  int64_t errorNs;  /* < 0: no bound (an anchor kind missing, or inconsistent) */
} simReplayGpuFit;

#define SIM_REPLAY_MAX_UNKNOWN_NAMES 8

/* Every time read from a recording lies strictly within +-SIM_REPLAY_TS_LIMIT_NS
 * (2^61 ns: 73 years from its clock's zero; a Unix-epoch CUPTI clock reaches
 * it in 2043). A record with a time beyond it is skipped (SIM_REPLAY_SKIP_BAD_TIME).
 * The bound keeps every sum the replay forms in int64: a clock offset is a
 * difference of two times (< 2^62), a kernel on the recording's clock a time
 * plus an offset (< 3 * 2^61), and its distance from t0 one more (< 2^63). */
#define SIM_REPLAY_TS_LIMIT_NS ((int64_t)1 << 61)

typedef struct {
  simReplayComm* comms;
  int ncomms;
  simReplayEvent* events;
  int nevents;
  simReplayState* states;
  int nstates;
  simReplayThread* threads;
  int nthreads;
  int64_t t0; /* earliest call */
  struct lh_table* strings; /* interned descriptor strings (json-c's hash table) */
  /* what could not be replayed, by reason (printed and written to the truth) */
  uint64_t skipped[16];
  uint64_t lines, badLines;
  simReplayGpuKernel* gpuTruth; /* NCCL kernels of a CUPTI trace beside the recording */
  size_t ngpuTruth;
  simReplayCuptiKernel* kernels; /* CUPTI kernel records in the recording */
  int nkernels;
  simReplayGpuFit* gpuFits; /* one per process with kernel records */
  int nfits;
  /* recordType values not replayed, by name (the first SIM_REPLAY_MAX_UNKNOWN_NAMES) */
  char unknownName[SIM_REPLAY_MAX_UNKNOWN_NAMES][32];
  uint64_t unknownCount[SIM_REPLAY_MAX_UNKNOWN_NAMES];
  char firstBad[320]; /* "FILE:LINE" of the first damaged line, "" none */
  char firstBadTime[400]; /* "FILE:LINE (FIELD VALUE)" of the first time out of range, "" none */
} simReplayRecording;

enum {
  SIM_REPLAY_SKIP_BAD_JSON,       /* a line that is not a JSON object (a torn last line) */
  SIM_REPLAY_SKIP_UNKNOWN_RECORD, /* recordType not event/state/lifecycle/cuptiActivity */
  SIM_REPLAY_SKIP_UNKNOWN_TYPE,   /* event type not one of the 15 */
  SIM_REPLAY_SKIP_BAD_FIELDS,     /* missing eventAddr, start or ids */
  SIM_REPLAY_SKIP_NO_COMM,        /* event of a communicator with no init record */
  SIM_REPLAY_SKIP_DUP_ADDR,       /* a second event with the same eventAddr */
  SIM_REPLAY_SKIP_ORPHAN_STATE,   /* state of an event that is not in the recording */
  SIM_REPLAY_PARENT_MISSING,      /* parent not in the recording: replayed with no parent */
  SIM_REPLAY_SKIP_CUPTI_OTHER,    /* a CUPTI record other than a kernel (memcpy, memset): not GPU truth */
  SIM_REPLAY_SKIP_BAD_TIME,       /* a time beyond SIM_REPLAY_TS_LIMIT_NS */
  SIM_REPLAY_SKIP_NREASONS
};
const char* simReplaySkipName(int reason);

/* replay_load.c: reads FILE, or every *.jsonl of a directory. Returns 0 on
 * success (even if some lines were skipped), -1 if nothing could be read. */
int simReplayLoad(const char* path, simReplayRecording* r);
void simReplayFree(simReplayRecording* r);
/* replay_gpu.c: the truth's gpu_kernel_clock and gpu_kernel lines; a recorded
 * time t is due on the replay's CLOCK_MONOTONIC at startAt + (t - t0) / speed. */
void simReplayWriteGpuTruth(const simReplayRecording* r, uint64_t startAt, double speed);

#endif
