/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the flight recorder and the hang watchdog's verdict.
 *
 * Per communicator, the last N operations (Coll and P2p) with where each one
 * is (enqueued, on the proxy, on the GPU, done), its times, and for the ones
 * not done yet, per channel: the KernelCh started/stopped, and per direction
 * (send, receive) the peer, the ProxyOps and ProxySteps started and stopped,
 * the last ProxyStep's step and state, and when that channel last moved.
 *
 * It follows the events of an event assembler (include/ncclscope/events.h,
 * ns_fr_attach): the assembler decides the hierarchy (which operation and
 * channel a ProxyOp, ProxyStep or KernelCh works for), puts a STOP that came
 * before its START after it, and releases the children the plugin closed;
 * the recorder keeps its own part of each child's event. The plugin's writer
 * thread owns one per process, on the writer's one assembler
 * (src/writer/tracker.c); nothing here runs on NCCL's threads.
 *
 * When an operation is done (docs/design.md, "Flight recorder"):
 *  - its communicator records KernelCh (ABI v3+) and nChannels of them
 *    stopped; or every ProxyOp it started stopped (a KernelCh that NCCL
 *    reports late, or never, does not keep a finished transfer in flight);
 *  - its communicator records neither KernelCh nor ProxyOp: at its STOP;
 *  - a send/recv to itself (ABI v4+, no children): at its STOP;
 *  - a later operation of the same communicator is done (one communicator's
 *    kernels run in order on its stream).
 * A child the plugin closed (max age, communicator end, exit) is not a
 * completion: a hung operation's children are closed after
 * NCCLSCOPE_MAX_AGE_MS, and the operation stays in flight. A ProxyOp closed
 * as neverStopped (copy transports never stop them) counts as stopped.
 *
 * Stuck: the oldest operation of a communicator that is not done, in flight
 * (since its START) longer than the timeout. Each one is reported once (an
 * episode); ns_fr_check says when an episode's operation completes.
 *
 * Memory: N entries per live communicator, per-channel progress only for
 * operations not done, and ns_fr_event_bytes in each event of the
 * assembler. Single-threaded.
 */
#ifndef NCCLSCOPE_FLIGHTREC_H
#define NCCLSCOPE_FLIGHTREC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ncclscope/events.h"
#include "ncclscope/record.h"

typedef enum { NS_FR_ENQUEUED = 1, NS_FR_ON_PROXY = 2, NS_FR_ON_GPU = 3, NS_FR_DONE = 4 } ns_fr_stage;
/* "enqueued", "onProxy", "onGpu", "done"; "unknown" otherwise. */
const char* ns_fr_stage_name(int stage);

#define NS_FR_KCH_STARTED 0x1u
#define NS_FR_KCH_STOPPED 0x2u
#define NS_FR_KCH_CLOSED 0x4u /* the plugin closed it (not a stop) */

/* One direction of one channel of an operation (the ProxyOps NCCL ran for it). */
typedef struct {
  int32_t peer;                /* the ProxyOp's peer rank; -1 before one started */
  uint32_t ops, ops_done;      /* ProxyOps started, stopped (or closed as neverStopped) */
  uint32_t ops_closed;         /* ProxyOps the plugin closed otherwise (max age, comm end) */
  uint32_t steps, steps_done;  /* ProxySteps started, stopped */
  int64_t last_step;           /* step number of the last ProxyStep started or moved; -1 none */
  int32_t last_state;          /* NCCL state id of its last state (NS_ST_PROXY_STEP_*); -1 none (posted) */
  uint64_t last_ts;            /* the last start, state or stop of a ProxyOp or ProxyStep here */
} ns_fr_dir;

typedef struct {
  int32_t channel;
  uint8_t kch;     /* NS_FR_KCH_* */
  uint64_t kch_ts; /* its KernelCh's last start or stop */
  ns_fr_dir dir[2]; /* [0] receive, [1] send */
} ns_fr_chan;

/* One operation. */
typedef struct {
  uint64_t id;          /* Coll/P2p event id in this trace */
  uint8_t type;         /* NS_EV_COLL or NS_EV_P2P (before its START: 0) */
  uint8_t stage;        /* ns_fr_stage, or 0 before its START */
  uint8_t started, stopped;
  uint8_t done;         /* 1: by its children or its STOP, 2: because a later operation finished */
  uint8_t detail;       /* NCCL's mask surely had full detail when its task was taken (ns_fr_set_detail) */
  uint64_t seq;         /* Coll seqNumber (P2p: 0) */
  int8_t func;          /* NS_FUNC_* of its START (NS_FUNC_UNKNOWN before it) */
  uint64_t count, bytes; /* bytes: nccl-tests size, 0 when the datatype is unknown */
  int64_t peer_or_root;
  uint32_t nchannels;
  uint32_t func_str, dtype_str, algo_str, proto_str; /* string ids, 0: none */
  uint64_t t_start;     /* START (enqueue begins) */
  uint64_t t_stop;      /* STOP (enqueued), 0 before */
  uint64_t t_proxy, t_gpu; /* first ProxyOp, first KernelCh start; 0 none */
  uint64_t t_done, t_last; /* done; last progress of any child */
  uint32_t proxy_ops, proxy_ops_done, kch, kch_done, closed_children;
  uint32_t nch;         /* channels in ch (0 once done: the detail is freed) */
  uint64_t ch_low;      /* with ch: bit c set when channel c (< 64) is in it (a new channel needs no search) */
  ns_fr_chan* ch;       /* by first appearance; NULL when done */
} ns_fr_op;

typedef struct {
  uint32_t entries; /* operations kept per communicator (NCCLSCOPE_FR_ENTRIES); >= 1 */
  /* Resolves string ids (func, dtype, algo, proto) of START records. */
  const char* (*string)(void* user, uint32_t id);
  void* string_user;
} ns_fr_config;

typedef struct ns_fr ns_fr;

ns_fr* ns_fr_create(const ns_fr_config* cfg); /* NULL when out of memory */
void ns_fr_destroy(ns_fr* fr);
/* A communicator starts (COMM_INIT); its records may follow. */
void ns_fr_comm(ns_fr* fr, const ns_comm_info* ci);
/* It ended (COMM_FINI): forgotten with its operations. */
void ns_fr_comm_end(ns_fr* fr, uint32_t comm);
/* Follows the events of assembler `as`: the recorder's part of each is the
 * ns_fr_event_bytes at ns_event_area(e, area); the assembler's callbacks
 * are to be passed on to *sink, which this fills. Before the first record. */
void ns_fr_attach(ns_fr* fr, const ns_asm* as, size_t area, ns_asm_sink* sink);
size_t ns_fr_event_bytes(void);
/* NCCL's mask from now on: full detail (the default: KernelCh and ProxyOps
 * show every operation's progress) or operations only. An operation that
 * started without detail and has no ProxyOp or KernelCh can show no
 * progress (ProxyOps of copy transports never stop; a network one says
 * nothing more once in progress): enqueued, with no KernelCh and no news
 * for NS_FR_UNDETAILED_GRACE_NS, it counts as done (ns_fr_settle), so the
 * watchdog never takes a quiet job for a hung one -- and cannot see such an
 * operation hang: hangs are watched under full detail. */
void ns_fr_set_detail(ns_fr* fr, int full, uint64_t ts);
#define NS_FR_UNDETAILED_GRACE_NS 1000000000ull
/* NCCL reads the mask when it takes the task, before the START: an
 * operation starting this soon after a change to full detail may have read
 * the mask before it, so it is not taken to have detail. */
#define NS_FR_DETAIL_SETTLE_NS 20000000ull
/* Ends the operations ns_fr_set_detail describes (each communicator's
 * oldest first); the watchdog calls it before looking. */
void ns_fr_settle(ns_fr* fr, uint64_t now_ns);

/* A stuck operation, or the end of one (cleared). */
typedef struct {
  uint32_t comm;
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  char comm_name[64];
  ns_fr_op op;           /* a copy; op.ch is NULL (the detail is in waits_for) */
  char func[32];
  uint64_t detect_ns;    /* trace time it was found stuck (or cleared) */
  uint64_t waited_ns;    /* in flight that long when found (cleared: until done) */
  int cleared;           /* 1: the episode's operation completed (or its communicator ended) */
  char waits_for[640];   /* what it waits for: channels and peers without progress */
} ns_fr_stuck;

/* The watchdog: for each communicator whose oldest unfinished operation has
 * been in flight longer than timeout_ns at now_ns and was not reported yet,
 * one entry (a new episode); and for each reported one that has completed
 * since, one entry with cleared = 1. Returns how many were written to out
 * (at most max; the rest come at the next call). */
size_t ns_fr_check(ns_fr* fr, uint64_t now_ns, uint64_t timeout_ns, ns_fr_stuck* out, size_t max);

/* Each live communicator's oldest operation not done, at now_ns: what a
 * live metric shows while nothing else moves. */
typedef struct {
  uint32_t comm;
  uint64_t age_ns;      /* in flight since its START that long; 0: none in flight */
  int first;            /* it is the communicator's first operation (its transports connect: ~1 s on GPUs) */
  int children;         /* it has ProxyOps or KernelCh: something of it runs that could show progress */
  uint64_t episodes;    /* episodes ns_fr_check reported for this communicator so far */
  int stuck;            /* an episode is open: its operation has not completed */
  char func[32];        /* with stuck: the stuck operation's function */
  uint64_t seq;         /* and its seqNumber (P2p: 0) */
  /* The communicator-wide sequence number of its last collective posted
   * (START) and completed: how many it posted, completed. NCCL numbers
   * collectives per function (seqNumber); every rank of a communicator
   * issues the same collectives in the same order, so the sum over the
   * functions of (the last seqNumber + 1) is the same count on every rank
   * once each has posted the same ones, whichever START a full ring lost
   * before the last of each function. P2ps have no seqNumber: not counted. */
  uint64_t posted, completed;
} ns_fr_inflight;
/* One entry per live communicator, at most max; returns how many. */
size_t ns_fr_inflight_get(const ns_fr* fr, uint64_t now_ns, ns_fr_inflight* out, size_t max);

/* "channels 0,1 on the GPU not stopped; rank 7: receive ch 0 no step ..." for
 * an operation not done: its channels and peers without progress at now_ns. */
void ns_fr_waits_for(const ns_fr* fr, const ns_fr_op* op, uint64_t now_ns, char* buf, size_t len);

/* Everything, as one JSON object (README.md, "A job that hangs"): the process, why it
 * was written, the episodes so far (the last 32), and per communicator its
 * operations, oldest first. 0, or -1 on a write error. */
typedef struct {
  const char* host;
  uint32_t pid;
  const char* reason;          /* "hang", "signal", ... */
  uint64_t now_ns;             /* trace clock */
  int64_t realtime_offset_ns;  /* Unix-epoch ns - trace ns, now */
  double timeout_sec;
} ns_fr_dump_info;
int ns_fr_dump_json(const ns_fr* fr, const ns_fr_dump_info* info, FILE* out);

typedef struct {
  uint64_t records, ops, ops_evicted;   /* operations recorded, pushed out of a full ring */
  uint64_t children_released;           /* given up running by the assembler (their stop lost): forgotten */
  uint64_t episodes;
  size_t comms, children_live, detail_bytes;
} ns_fr_stats;
void ns_fr_get_stats(const ns_fr* fr, ns_fr_stats* out);

#endif
