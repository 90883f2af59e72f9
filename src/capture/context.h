/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the static context table, the detail flag and the rare-path counters.
 *
 * A context is what init hands NCCL: the address of an entry of a static
 * table, so the hot path trusts a context pointer after one subtraction,
 * one compare and one modulo by a constant (ns_ctx_from_ptr). Entries are
 * claimed by init (under the lifecycle mutex), marked CLOSING by finalize
 * and freed by the writer thread once it wrote the COMM_FINI block.
 */
#ifndef NCCLSCOPE_CAPTURE_CONTEXT_H
#define NCCLSCOPE_CAPTURE_CONTEXT_H

#include <stdatomic.h>
#include <stdint.h>

#include "config/config.h"
#include "ncclscope/record.h"

#define NS_MAX_CONTEXTS 256

typedef enum { NS_CTX_FREE = 0, NS_CTX_ACTIVE = 1, NS_CTX_CLOSING = 2 } ns_ctx_state;

typedef struct ns_context {
  /* C1: W init (release, after every field below) / finalize (relaxed) /
   * writer (release, FREE after COMM_FINI); R hot path (relaxed: NCCL got
   * the pointer from init's return, which ordered the fields), init (acquire). */
  _Atomic uint32_t state;
  uint32_t index;
  uint32_t serial;   /* comm serial in the trace, >= 1 */
  uint32_t mask;     /* event types recorded for this communicator: its full detail */
  /* NCCL's eActivationMask (one static int of libnccl, alive while NCCL has
   * us loaded); NULL if init got none. Written by init and, at `ops` and
   * `sampled` (detail_dynamic), by ns_detail_apply, relaxed, as NCCL reads it. */
  int* nccl_mask;
  int detail_dynamic;
  int abi_version;   /* the ncclProfiler_vN whose init NCCL called */
  int rank, nranks, nnodes;
  uint64_t comm_id;
  int has_name;
  char name[128];
  char gpu_uuid[48];
  uint64_t init_tick;
  uint32_t init_tid;
  /* Drops attributed to this communicator (rare path: relaxed RMW counters). */
  _Atomic uint64_t dropped[NS_EV_COUNT];
} ns_context;

extern ns_context ns_ctx_table[NS_MAX_CONTEXTS];

/* Full detail wanted now (writer/detail.h decides; the writer stores, init
 * and the hot path load, relaxed: a flag with no data behind it). */
extern _Atomic int ns_detail_full;

/* Group, Coll, P2p and GroupApi starts: a group's boundary. NCCL reads the
 * mask when it takes a task (2.26+; once per group before): GroupApi starts
 * before the group's tasks are taken, Group, Coll and P2p after all of them
 * were (at the launch), so a change made here applies to whole groups of
 * this thread. Another thread taking tasks at that moment may see its group
 * change midway; each of its operations stays whole. */
#define NS_DETAIL_BOUNDARY_TYPES ((1u << NS_EV_GROUP) | (1u << NS_EV_COLL) | (1u << NS_EV_P2P) | (1u << NS_EV_GROUP_API))
static inline void ns_detail_apply(const ns_context* c) {
  if (!c->detail_dynamic) return;
  int want = (int)(atomic_load_explicit(&ns_detail_full, memory_order_relaxed) ? c->mask
                                                                                : c->mask & ~NS_DETAIL_EVENT_BITS);
  if (__atomic_load_n(c->nccl_mask, __ATOMIC_RELAXED) != want) __atomic_store_n(c->nccl_mask, want, __ATOMIC_RELAXED);
}

static inline ns_context* ns_ctx_from_ptr(const void* p) {
  uintptr_t off = (uintptr_t)p - (uintptr_t)ns_ctx_table;
  if (off >= sizeof ns_ctx_table || off % sizeof(ns_context)) return 0;
  ns_context* c = (ns_context*)p;
  return atomic_load_explicit(&c->state, memory_order_relaxed) == NS_CTX_ACTIVE ? c : 0;
}

/* Process counters bumped on rare hot-path branches (relaxed RMW; read by
 * the writer for COUNTERS, exactly after the join). */
typedef struct {
  _Atomic uint64_t bad_handles;   /* stop/state on a handle that is not one of ours (capture/handle.h) */
  /* Counted by the writer, from the ids it saw end (writer/open_events.h): */
  _Atomic uint64_t stale_handles; /* stop/state of an event the writer closed (never stopped, max age, ...) */
  _Atomic uint64_t double_stops;  /* a second stop of the same event */
  _Atomic uint64_t late_states;   /* a state of an event after its stop */
  _Atomic uint64_t bad_contexts;  /* start with a context that is not ours (not PXN) */
  _Atomic uint64_t unknown_types; /* start with a type bit we do not know */
  _Atomic uint64_t dropped_unringed[NS_EV_COUNT]; /* no ring for the thread */
  _Atomic uint64_t pxn_dropped;
} ns_counters;
extern ns_counters ns_cnt;

#endif
