/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler's own structures, shared by its two files:
 * assembler.c, what each record does to the entries (finding and making
 * them by id, the hierarchy, records out of order, the plugin's own
 * states, the communicators), and entries.c, each entry's life once made
 * (where it waits, when an op is complete, its release, the end of the
 * data, memory). Single-threaded, see
 * include/ncclscope/events.h. */
#ifndef NCCLSCOPE_EVENTS_INTERNAL_H
#define NCCLSCOPE_EVENTS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/events.h"
#include "util/idmap.h"

enum { Q_NONE, Q_OPEN, Q_UNSTARTED, Q_WAITING, Q_SETTLING, Q_COUNT };

#define NS_ASM_MAX_FREE 4096u             /* recycled entries kept; more are freed */
#define NS_ASM_MAX_COMM_SERIAL (1u << 20) /* comm serials above this are taken as corruption */

typedef struct {
  ns_event *head, *tail;
  size_t n;
} evq;

typedef struct {
  uint8_t known, has_rank;
  uint32_t abi;
  uint64_t mask;
  int64_t rank;
} comm_rec;

struct ns_asm {
  ns_asm_config cfg;
  /* Live entries by id: in `recent`, the slot of their id, or, once a newer
   * entry took that slot, in by_id; each in exactly one (entry_at). A
   * record mostly names an event its thread started a few events before (a
   * state, a stop, a ProxyStep's ProxyOp), so most finds end in `recent`,
   * which stays in the cache, and most entries (a ProxyStep lives a few
   * records) come and go without a hash insert or removal. */
  ns_idmap_recent recent;
  ns_idmap by_id; /* id -> ns_event*, the entries `recent` displaced */
  size_t user_off, states_off, entry_bytes;
  ns_event* free_list; /* linked through link.q_next */
  size_t nfree;
  evq q[Q_COUNT];
  ns_event *held_head, *held_tail;
  size_t nheld;
  uint64_t hold_seq;
  uint64_t now;
  /* No timer is due before this trace time: at most the earliest time a
   * queue's head is due (a queue's head is due first, queues are FIFO).
   * Joining a queue lowers it to the newcomer's time if that is earlier;
   * leaving one leaves it early, which costs a check, never a late release;
   * asm_release_due sets it exactly. */
  uint64_t due_at;
  int flushing;    /* ns_asm_flush: releases do not cascade */
  comm_rec* comms; /* by serial */
  size_t ncomms;
  ns_event* found; /* the entry ns_asm_find found last (NULL once it is released) */
  ns_asm_stats st;
};

/* entries.c */
/* Moves e to the tail of queue `which` (joining it now), or off every queue (Q_NONE). */
void asm_q_set(ns_asm* a, ns_event* e, int which);
void asm_q_remove(ns_asm* a, ns_event* e);
/* Onto the held list (once), off it. */
void asm_hold(ns_asm* a, ns_event* e);
void asm_unhold(ns_asm* a, ns_event* e);
/* Where a started, stopped op goes after something changed. */
void asm_op_update(ns_asm* a, ns_event* op);
/* The entry leaves (the sink's done), its memory recycled. */
void asm_release(ns_asm* a, ns_event* e);
/* A running event released before the end of the data, counted. */
void asm_evict(ns_asm* a, ns_event* e, uint64_t* counter);
/* Releases what the timers and max_held say is due at a->now. */
void asm_release_due(ns_asm* a);
/* The same, at the cost of a comparison when nothing is due (every record). */
static inline void asm_release_if_due(ns_asm* a) {
  if (a->now >= a->due_at || (a->cfg.max_held && a->nheld > a->cfg.max_held)) asm_release_due(a);
}

#endif
