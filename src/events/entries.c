/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler's entries and their lives (internal.h).
 *
 * Entries live in the id map (src/util/idmap) and on at most one timer
 * queue, which says what the entry waits for:
 *   OPEN       started, not stopped          released at max_age_ns, or by max_open
 *   UNSTARTED  named or stopped, no START    released at orphan_wait_ns
 *   WAITING    a stopped op missing children released at expect_wait_ns (FORCED)
 *   SETTLING   a stopped op, children done   released at grace_ns
 * A stopped op with a running child is on no queue ("busy"): its child's
 * stop, or its child's release, moves it on. Queues are FIFO by the time an
 * entry joined them and every entry of a queue waits as long, so only heads
 * are ever checked. Held entries (stopped ops, unstarted entries) are also
 * on the held list, in the order they were held: max_held releases its
 * head, and the flush releases it first, in that order.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- queues and the held list ----
 * Both are intrusive doubly linked lists through two fields of ns_event's
 * link (prev, next): a timer queue (q_prev, q_next), the held list
 * (hold_prev, hold_next). head and tail are lvalues. */
#define LIST_APPEND(head, tail, e, prev, next) \
  do {                                         \
    (e)->link.prev = (tail);                   \
    (e)->link.next = NULL;                     \
    if (tail)                                  \
      (tail)->link.next = (e);                 \
    else                                       \
      (head) = (e);                            \
    (tail) = (e);                              \
  } while (0)

#define LIST_UNLINK(head, tail, e, prev, next)    \
  do {                                            \
    if ((e)->link.prev)                           \
      (e)->link.prev->link.next = (e)->link.next; \
    else                                          \
      (head) = (e)->link.next;                    \
    if ((e)->link.next)                           \
      (e)->link.next->link.prev = (e)->link.prev; \
    else                                          \
      (tail) = (e)->link.prev;                    \
    (e)->link.prev = (e)->link.next = NULL;       \
  } while (0)

void asm_q_remove(ns_asm* a, ns_event* e) {
  if (e->link.q == Q_NONE) return;
  evq* q = &a->q[e->link.q];
  LIST_UNLINK(q->head, q->tail, e, q_prev, q_next);
  e->link.q = Q_NONE;
  q->n--;
}

/* When an entry that joined queue `which` at `since` is due; UINT64_MAX: never. */
static uint64_t due_time(const ns_asm* a, int which, uint64_t since) {
  uint64_t wait;
  switch (which) {
  /* Q_OPEN and Q_UNSTARTED release once the wait is exceeded, the others once it is reached */
  case Q_OPEN:
    if (!a->cfg.max_age_ns) return UINT64_MAX;
    wait = a->cfg.max_age_ns + 1;
    break;
  case Q_UNSTARTED: wait = a->cfg.orphan_wait_ns + 1; break;
  case Q_WAITING: wait = a->cfg.expect_wait_ns; break;
  case Q_SETTLING: wait = a->cfg.grace_ns; break;
  default: return UINT64_MAX;
  }
  return wait > UINT64_MAX - since ? UINT64_MAX : since + wait;
}

/* Moves e to the tail of queue `which` (joining it now), or off every queue. */
void asm_q_set(ns_asm* a, ns_event* e, int which) {
  asm_q_remove(a, e);
  if (which == Q_NONE) return;
  evq* q = &a->q[which];
  e->link.q = (uint8_t)which;
  e->link.q_since = a->now;
  LIST_APPEND(q->head, q->tail, e, q_prev, q_next);
  q->n++;
  uint64_t due = due_time(a, which, a->now);
  if (due < a->due_at) a->due_at = due;
}

void asm_hold(ns_asm* a, ns_event* e) {
  if (e->link.hold_seq) return;
  e->link.hold_seq = ++a->hold_seq;
  LIST_APPEND(a->held_head, a->held_tail, e, hold_prev, hold_next);
  a->nheld++;
}

void asm_unhold(ns_asm* a, ns_event* e) {
  if (!e->link.hold_seq) return;
  LIST_UNLINK(a->held_head, a->held_tail, e, hold_prev, hold_next);
  e->link.hold_seq = 0;
  a->nheld--;
}

/* ---- entries ---- */

uint64_t ns_asm_now(const ns_asm* a) { return a->now; }

/* The running events are exactly those on Q_OPEN: a START puts an entry
 * there unless its STOP came first; its STOP, or its release, takes it off. */
ns_event* ns_asm_running_first(const ns_asm* a) { return a->q[Q_OPEN].head; }

ns_event* ns_asm_running_next(const ns_event* e) { return e->link.q == Q_OPEN ? e->link.q_next : NULL; }

/* Takes a released entry out of wherever it lives. */
static void entry_unhome(ns_asm* a, const ns_event* e) {
  ns_idmap_home_del(&a->recent, &a->by_id, e->id);
  if (a->found == e) a->found = NULL;
}

/* Moves every entry of `recent` to by_id, for the walks over all entries
 * (flush, free). Returns an entry it found no room for, NULL when done. */
static ns_event* entries_to_map(ns_asm* a) {
  for (size_t i = 0; i < NS_IDMAP_RECENT; i++) {
    ns_idmap_bucket* b = &a->recent.slot[i];
    if (!b->key) continue;
    int inserted;
    uint64_t* v = ns_idmap_put(&a->by_id, b->key, &inserted);
    if (!v) return (ns_event*)(uintptr_t)b->val;
    *v = b->val;
    b->key = b->val = 0;
  }
  return NULL;
}

/* Whether a stopped op's children are all in (see events.h). */
static int children_done(const ns_asm* a, const ns_event* op) {
  if (op->live_children) return 0;
  uint32_t comm = op->start.comm;
  const comm_rec* c = comm < a->ncomms && a->comms[comm].known ? &a->comms[comm] : NULL;
  uint64_t mask = c ? c->mask : ~0ull;
  uint32_t abi = c ? c->abi : 0;
  int want_kch = (mask & (1ull << NS_EV_KERNEL_CH)) && (abi == 0 || abi >= 3);
  int want_pop = (mask & (1ull << NS_EV_PROXY_OP)) != 0;
  if (!want_kch && !want_pop) return 1;
  /* A send/recv to itself is a device copy without a proxy op: since NCCL
   * 2.26 (ABI v4+) it gets no KernelCh and no ProxyOp at all. */
  if (op->start.type == NS_EV_P2P && c && c->has_rank && abi >= 4 && !op->children_seen &&
      (int64_t)op->start.num[NS_P2P_PEER] == c->rank)
    return 1;
  uint64_t nch = op->start.num[op->start.type == NS_EV_COLL ? NS_COLL_CHANNELS : NS_P2P_CHANNELS];
  if (want_kch && nch > 0) return op->n_kernel_ch >= nch;
  return op->children_seen > 0;
}

/* Where a started, stopped op goes after something changed. */
void asm_op_update(ns_asm* a, ns_event* op) {
  if (!op->op_like || !op->started || !op->stopped || a->flushing) return;
  asm_hold(a, op);
  if (op->live_children) {
    asm_q_set(a, op, Q_NONE); /* busy: its children move it on */
  } else if (!children_done(a, op)) {
    asm_q_set(a, op, Q_WAITING);
  } else if (a->cfg.grace_ns == 0) {
    asm_release(a, op);
  } else {
    asm_q_set(a, op, Q_SETTLING);
  }
}

/* A running ProxyOp/KernelCh left before it stopped: its op stops waiting for it. */
static void child_gone(ns_asm* a, ns_event* child) {
  ns_event* op = child->op ? ns_asm_find(a, child->op) : NULL;
  if (!op) return;
  if (op->live_children) op->live_children--;
  op->flags |= NS_EVF_CHILD_LOST;
  asm_op_update(a, op);
}

static void count_released(ns_asm* a, const ns_event* e) {
  if (a->cfg.no_release_counts) return;
  if (!e->started) {
    if (e->stopped)
      a->st.orphan_stops++;
    else
      a->st.lost_parents++;
    return;
  }
  unsigned t = e->start.type;
  a->st.events[t]++;
  if (!e->stopped) a->st.never_stopped[t]++;
  if (e->start.flags & NS_RF_PXN) a->st.pxn[t]++;
  if (e->start.flags & NS_RF_PARENT_LOST) a->st.parent_lost[t]++;
  if (e->start.parent && (e->start.flags & NS_RF_PARENT_RAW)) {
    a->st.raw_parent[t]++;
  } else if (e->start.parent) {
    a->st.with_parent[t]++;
    a->st.hierarchy_digest[t] += ns_asm_edge_digest(e->id, e->start.parent);
  }
}

void asm_release(ns_asm* a, ns_event* e) {
  asm_q_remove(a, e);
  asm_unhold(a, e);
  if (e->started && !e->stopped && (e->start.type == NS_EV_PROXY_OP || e->start.type == NS_EV_KERNEL_CH))
    child_gone(a, e);
  count_released(a, e);
  if (a->cfg.sink.done) a->cfg.sink.done(a->cfg.sink.user, e);
  entry_unhome(a, e);
  a->st.live--;
  if (a->nfree < NS_ASM_MAX_FREE) {
    e->link.q_next = a->free_list;
    a->free_list = e;
    a->nfree++;
  } else {
    free(e);
  }
}

/* A running event released before the end of the data. */
void asm_evict(ns_asm* a, ns_event* e, uint64_t* counter) {
  e->flags |= NS_EVF_EVICTED;
  (*counter)++;
  asm_release(a, e);
}

/* ---- timers ---- */

static int waited(const ns_asm* a, const ns_event* head, uint64_t wait) {
  return head && a->now - head->link.q_since >= wait;
}

void asm_release_due(ns_asm* a) {
  ns_event* h;
  if (a->cfg.max_age_ns)
    while ((h = a->q[Q_OPEN].head) && a->now - h->link.q_since > a->cfg.max_age_ns) asm_evict(a, h, &a->st.evicted_age);
  while ((h = a->q[Q_UNSTARTED].head) && a->now - h->link.q_since > a->cfg.orphan_wait_ns) asm_release(a, h);
  while (waited(a, h = a->q[Q_WAITING].head, a->cfg.expect_wait_ns)) {
    h->flags |= NS_EVF_FORCED;
    a->st.forced++;
    asm_release(a, h);
  }
  while (waited(a, h = a->q[Q_SETTLING].head, a->cfg.grace_ns)) asm_release(a, h);
  while (a->cfg.max_held && a->nheld > a->cfg.max_held) {
    h = a->held_head;
    if (h->started && !children_done(a, h)) {
      h->flags |= NS_EVF_FORCED;
      a->st.forced++;
    }
    asm_release(a, h);
  }
  a->due_at = UINT64_MAX;
  for (int k = Q_OPEN; k < Q_COUNT; k++) {
    uint64_t due = a->q[k].head ? due_time(a, k, a->q[k].head->link.q_since) : UINT64_MAX;
    if (due < a->due_at) a->due_at = due;
  }
}

void ns_asm_advance(ns_asm* a, uint64_t now_ns) {
  if (now_ns > a->now) a->now = now_ns;
  asm_release_if_due(a);
}

/* ---- the end ---- */

static int by_start(const void* x, const void* y) {
  const ns_event* p = *(ns_event* const*)x;
  const ns_event* q = *(ns_event* const*)y;
  if (p->start.ts != q->start.ts) return p->start.ts < q->start.ts ? -1 : 1;
  return p->id < q->id ? -1 : p->id > q->id;
}

void ns_asm_flush(ns_asm* a) {
  a->flushing = 1;
  while (a->held_head) asm_release(a, a->held_head);
  /* every entry in by_id, for one walk in start order (an entry there is no
   * room for is released first: out of order, never lost) */
  for (ns_event* e; (e = entries_to_map(a));) asm_release(a, e);
  size_t n = a->by_id.len, k = 0;
  ns_event** v = n ? malloc(n * sizeof *v) : NULL;
  uint64_t id, ptr;
  for (size_t pos = 0; v && ns_idmap_next(&a->by_id, &pos, &id, &ptr);) v[k++] = (ns_event*)(uintptr_t)ptr;
  if (v) {
    qsort(v, k, sizeof *v, by_start);
    for (size_t i = 0; i < k; i++) asm_release(a, v[i]);
  } else {
    for (size_t pos = 0; ns_idmap_next(&a->by_id, &pos, &id, &ptr); pos = 0) asm_release(a, (ns_event*)(uintptr_t)ptr);
  }
  free(v);
  a->flushing = 0;
}

void ns_asm_get_stats(const ns_asm* a, ns_asm_stats* out) { *out = a->st; }

void ns_asm_free(ns_asm* a) {
  if (!a) return;
  uint64_t id, ptr;
  for (size_t pos = 0; ns_idmap_next(&a->by_id, &pos, &id, &ptr);) free((void*)(uintptr_t)ptr);
  for (size_t i = 0; i < NS_IDMAP_RECENT; i++)
    if (a->recent.slot[i].key) free((void*)(uintptr_t)a->recent.slot[i].val);
  while (a->free_list) {
    ns_event* e = a->free_list;
    a->free_list = e->link.q_next;
    free(e);
  }
  ns_idmap_free(&a->by_id);
  free(a->comms);
  free(a);
}
