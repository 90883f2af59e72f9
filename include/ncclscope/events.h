/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler, the one place where trace records become
 * events and operations.
 *
 * Fed the records of one trace (per thread in order, threads interleaved
 * arbitrarily, as the writer thread produces them and as a trace file holds
 * them), it keeps one entry per event id and hands each event to its
 * consumer exactly once, complete or not. Every consumer uses it: the
 * plugin's online analysis (writer thread), `ncclscope report` (through the
 * analysis) and every exporter (`ncclscope export`), so the hierarchy, the
 * events that never stopped and the PXN attribution are decided once.
 *
 * What it decides:
 *  - Hierarchy. A START names its parent by id (ids are unique in a trace
 *    and never reused, so no generation check is needed here; the plugin
 *    resolved address reuse when it recorded the id) or, for PXN work done
 *    on behalf of another process, by a raw foreign pointer (NS_RF_PARENT_RAW),
 *    which is never looked up. A ProxyOp or KernelCh belongs to the
 *    Coll/P2p it names (`op`); a ProxyStep to its ProxyOp's op; a ProxyStep
 *    or NetPlugin takes its parent's channel.
 *  - Out-of-order records. Blocks are per thread, so a child may come
 *    before its parent's START: the parent is created unstarted and
 *    collects its children's counts until the START comes. A STOP may come
 *    before its own START (two rings drained in one pass): it is kept for
 *    the START. Entries whose START never comes are given up after
 *    orphan_wait_ns.
 *  - Operations. A Coll/P2p stops when NCCL enqueues it; its children run
 *    later. A stopped op is held until its children are done: none running,
 *    and nChannels KernelCh children stopped when its communicator records
 *    KernelCh (ABI v3+), else at least one child when it records ProxyOp.
 *    Then it waits grace_ns of quiet (0: none); an op whose expected
 *    children do not come is released expect_wait_ns after its last
 *    activity (NS_EVF_FORCED).
 *  - Events the plugin closed (an NS_ST_CLOSED record: NCCL started the
 *    same step again, never stops that kind, or the process ended):
 *    released at once, never stopped, with close_reason.
 *  - Repeated states (NS_ST_REPEATED): counted on the event's last state,
 *    handed to the sink with the event (whose last_state says which).
 *  - Events that never stop. Released at the end of the data (flush), when
 *    more than max_open run at once (the oldest first), or max_age_ns after
 *    their start (0: never), flagged NS_EVF_EVICTED unless at the end; a
 *    running ProxyOp/KernelCh released this way marks its op
 *    NS_EVF_CHILD_LOST.
 *
 * Memory: one entry per event started and not yet released, plus held ops
 * and unstarted entries (at most max_held; the oldest is released beyond).
 * Every release is O(1); nothing scans the table. Single-threaded: one
 * thread feeds it, and callbacks run on that thread, inside the call that
 * caused them.
 */
#ifndef NCCLSCOPE_EVENTS_H
#define NCCLSCOPE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/record.h"

#define NS_EV_UNKNOWN 0xFFu /* ns_event.type of an entry named only as a parent */

/* ns_event.flags */
#define NS_EVF_FORCED 0x1u     /* an op released before its expected children were done */
#define NS_EVF_CHILD_LOST 0x2u /* an op one of whose running children was released (age, cap) */
#define NS_EVF_EVICTED 0x4u    /* released while running, before the end of the data (age, cap) */

/* Offline defaults (export, report): wait 10 s of trace time, no age limit. */
#define NS_ASM_WAIT_NS (10ull * 1000000000ull)
#define NS_ASM_OPEN_MAX 2000000u /* running events at once (about 600 bytes each in the exporter) */
#define NS_ASM_HELD_MAX 100000u  /* held ops and unstarted entries at once */

typedef struct {
  uint64_t ts, arg;
  int32_t state;
  uint16_t flags;
  uint32_t tid;
  uint32_t repeats; /* identical reports after this one, folded by the plugin (NS_ST_REPEATED) */
} ns_event_state;

typedef struct ns_event ns_event;
struct ns_event {
  uint64_t id;
  uint8_t type;            /* start.type; before the START: the STOP's type, or NS_EV_UNKNOWN */
  uint8_t started, stopped;
  uint8_t op_like;         /* a Coll/P2p, or the unstarted parent of a ProxyOp/KernelCh */
  uint8_t flags;           /* NS_EVF_* */
  uint64_t stop_ts;
  uint32_t stop_tid;
  uint64_t first_seen;     /* trace time the entry was created */
  int32_t channel;         /* ProxyOp/KernelCh: its own; ProxyStep/NetPlugin: its parent's; -1 unknown */
  uint64_t op;             /* ProxyOp/KernelCh/ProxyStep: id of the Coll/P2p it works for, 0 none */

  /* Coll/P2p: what its children told (counted for unstarted parents too). */
  uint32_t live_children;  /* ProxyOp/KernelCh children started, not stopped */
  uint32_t children_seen;  /* ProxyOp/KernelCh children started */
  uint32_t n_proxy_ops, n_kernel_ch, n_kch_done, n_kch_timed, n_steps;
  uint8_t has_exec_stop, has_ptimer_min, has_ptimer_max;
  uint64_t exec_stop;      /* latest ProxyOp/KernelCh child stop */
  uint64_t ptimer_min;     /* smallest KernelCh start pTimer (raw GPU clock) */
  uint64_t ptimer_max;     /* largest KernelChStop pTimer */

  /* ProxyStep: the last transSize of its states; KernelCh: its KernelChStop pTimer. */
  uint8_t has_trans_size, has_ptimer_stop;
  uint64_t trans_size, ptimer_stop;

  uint32_t nstates;        /* states seen; the first keep_states are in states[] */
  ns_event_state* states;
  /* The last NCCL state (an NS_ST_REPEATED record repeats it), and the
   * identical reports the plugin folded, in all. */
  int32_t last_state;
  uint16_t last_flags;
  uint64_t last_arg;
  uint64_t repeats;
  /* NS_CLOSE_* when the plugin closed the event (NS_ST_CLOSED) at close_ts; 0 otherwise. */
  uint8_t close_reason;
  uint64_t close_ts;

  /* The assembler's own (lists, timers); consumers do not touch these. */
  struct {
    ns_event *hold_prev, *hold_next; /* held entries, in the order they were held */
    ns_event *q_prev, *q_next;       /* the timer queue the entry is on */
    uint64_t q_since;                /* when it joined that queue */
    uint64_t hold_seq;               /* 0: not held */
    uint8_t q;                       /* which queue */
  } link;

  ns_record start;         /* the START record; valid once `started` (zero before) */
};

/* The consumer's area of an event: cfg.user_bytes, zeroed when the entry is created. */
static inline void* ns_event_user(const ns_event* e) {
  return (char*)(uintptr_t)e + ((sizeof(ns_event) + 15) & ~(size_t)15);
}
/* Where several consumers share one assembler, each owns a part of that
 * area: the one at byte `offset` of it (a multiple of 16, NS_EVENT_AREA). */
static inline void* ns_event_area(const ns_event* e, size_t offset) { return (char*)ns_event_user(e) + offset; }
#define NS_EVENT_AREA(bytes) (((size_t)(bytes) + 15) & ~(size_t)15)

/* What the assembler calls, on the feeding thread. Every callback is
 * optional. `done` is the last time an entry is seen: after it the pointer
 * is reused. */
typedef struct {
  void* user;
  /* A new entry: a START of a new id, a parent named before its START, a STOP before its START. */
  void (*created)(void* user, ns_event* ev);
  /* A START was applied (parent bookkeeping done). */
  void (*started)(void* user, ns_event* ev);
  /* A STATE; ev is NULL when its event is unknown or not started. An
   * NS_ST_REPEATED record comes with its event only (ev->last_state is
   * the state repeated, st->arg the count); NS_ST_CLOSED never comes here. */
  void (*state)(void* user, ns_event* ev, const ns_record* st);
  /* A STOP was applied (before the event may be held for its children). */
  void (*stopped)(void* user, ns_event* ev);
  /* The entry leaves: stopped, never stopped (ev->stopped == 0), or never started. */
  void (*done)(void* user, ns_event* ev);
} ns_asm_sink;

typedef struct {
  uint64_t grace_ns;        /* quiet time before a complete op is released (0: at once) */
  uint64_t expect_wait_ns;  /* most quiet time a stopped op waits for expected children */
  uint64_t orphan_wait_ns;  /* an entry never started is given up this long after it was created */
  uint64_t max_age_ns;      /* a running event is released this long after its start; 0: never */
  size_t max_open;          /* most running events; 0: no limit */
  size_t max_held;          /* most held ops and unstarted entries; 0: no limit */
  unsigned keep_states;     /* states kept per event (exporters that draw them) */
  size_t user_bytes;        /* the consumer's area per event */
  int no_release_counts;    /* 1: nothing is counted as entries leave (the per-type counts and digest,
                               lost_parents, orphan_stops of STOPs never started): a feeder that never
                               reads them */
  ns_asm_sink sink;
} ns_asm_config;

/* Offline defaults: grace 0, waits NS_ASM_WAIT_NS, no age limit, NS_ASM_OPEN_MAX, NS_ASM_HELD_MAX. */
void ns_asm_config_default(ns_asm_config* cfg);

/* Counts, for messages, summaries and the export-vs-report agreement. */
typedef struct {
  uint64_t records, states;
  uint64_t events[NS_EV_COUNT];        /* released after their START */
  uint64_t never_stopped[NS_EV_COUNT]; /* of those, never stopped (at the end, or evicted) */
  uint64_t with_parent[NS_EV_COUNT];   /* START named a parent id (not a raw PXN pointer) */
  uint64_t raw_parent[NS_EV_COUNT];    /* START named a raw foreign pointer (PXN) */
  uint64_t parent_lost[NS_EV_COUNT];   /* START says the plugin could not resolve the parent */
  uint64_t pxn[NS_EV_COUNT];           /* run on behalf of another process */
  uint64_t hierarchy_digest[NS_EV_COUNT]; /* sum of ns_asm_edge_digest(id, parent) over parent ids */
  uint64_t evicted_open;      /* released running because more than max_open ran */
  uint64_t evicted_age;       /* released running after max_age_ns */
  uint64_t forced;            /* ops released before their expected children */
  uint64_t lost_parents;      /* entries named as a parent whose START never came */
  uint64_t orphan_stops;      /* STOPs whose START never came, or of an event already stopped or released */
  uint64_t orphan_states;     /* STATEs of an unknown or unstarted event */
  uint64_t closed[NS_CLOSE_REASONS]; /* events the plugin closed, by reason (NS_ST_CLOSED) */
  uint64_t repeats;           /* identical state reports folded (NS_ST_REPEATED) */
  uint64_t duplicate_starts;  /* STARTs of an id already started (ignored) */
  size_t live, peak_live;     /* entries in memory */
} ns_asm_stats;

/* An order-independent digest of one (child id, parent id) edge; the
 * stats sum it per child type, so two tools that saw the same hierarchy
 * have equal sums (tests/tools/check_agreement.py computes it from JSONL). */
uint64_t ns_asm_edge_digest(uint64_t id, uint64_t parent);

typedef struct ns_asm ns_asm;

ns_asm* ns_asm_new(const ns_asm_config* cfg); /* NULL when out of memory */
/* The callbacks from now on, in place of cfg.sink (for a consumer that
 * needs the assembler to make its sink). */
void ns_asm_set_sink(ns_asm* a, const ns_asm_sink* sink);
/* Frees everything without calling the sink (ns_asm_flush first to be told). */
void ns_asm_free(ns_asm* a);
/* What a communicator records (COMM_INIT): decides which children an op waits for. */
void ns_asm_comm(ns_asm* a, uint32_t comm, uint64_t event_mask, uint32_t abi_version);
/* The communicator's rank (after ns_asm_comm): a P2p to itself waits for no children (ABI v4+). */
void ns_asm_comm_rank(ns_asm* a, uint32_t comm, int64_t rank);
/* One record. */
void ns_asm_record(ns_asm* a, const ns_record* r);
/* Trace time moved to now_ns without a record: releases what is due. */
void ns_asm_advance(ns_asm* a, uint64_t now_ns);
/* End of the data: held entries first (in the order they were held), then
 * running events by start time. */
void ns_asm_flush(ns_asm* a);
/* The entry with that id, NULL if none (started or not). */
ns_event* ns_asm_find(const ns_asm* a, uint64_t id);
/* The latest trace time seen. */
uint64_t ns_asm_now(const ns_asm* a);
/* The running events (started, not stopped, not released), in the order
 * their STARTs came: the first, then each one's next (NULL after the last).
 * A CLOSED record for the event in hand releases it and no other running
 * one (with max_age_ns 0: nothing running is released by age meanwhile),
 * so its next one, read before, stays valid. */
ns_event* ns_asm_running_first(const ns_asm* a);
ns_event* ns_asm_running_next(const ns_event* e);
void ns_asm_get_stats(const ns_asm* a, ns_asm_stats* out);

#endif
