/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler (model and rules: include/ncclscope/events.h).
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
 * Single-threaded (the feeding thread).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ncclscope/events.h"
#include "util/array.h"
#include "util/idmap.h"

enum { Q_NONE, Q_OPEN, Q_UNSTARTED, Q_WAITING, Q_SETTLING, Q_COUNT };

#define NS_ASM_MAX_FREE 4096u               /* recycled entries kept; more are freed */
#define NS_ASM_MAX_COMM_SERIAL (1u << 20)   /* comm serials above this are taken as corruption */

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
   * entry took that slot, in by_id; each in exactly one (entry_home). A
   * record mostly names an event its thread started a few events before (a
   * state, a stop, a ProxyStep's ProxyOp), so most finds end in `recent`,
   * which stays in the cache, and most entries (a ProxyStep lives a few
   * records) come and go without a hash insert or removal. */
  ns_idmap_recent recent;
  ns_idmap by_id; /* id -> ns_event*, the entries `recent` displaced */
  size_t user_off, states_off, entry_bytes;
  ns_event* free_list;   /* linked through link.q_next */
  size_t nfree;
  evq q[Q_COUNT];
  ns_event *held_head, *held_tail;
  size_t nheld;
  uint64_t hold_seq;
  uint64_t now;
  int flushing;          /* ns_asm_flush: releases do not cascade */
  comm_rec* comms;       /* by serial */
  size_t ncomms;
  ns_asm_stats st;
};

void ns_asm_config_default(ns_asm_config* cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->expect_wait_ns = NS_ASM_WAIT_NS;
  cfg->orphan_wait_ns = NS_ASM_WAIT_NS;
  cfg->max_open = NS_ASM_OPEN_MAX;
  cfg->max_held = NS_ASM_HELD_MAX;
}

void ns_asm_set_sink(ns_asm* a, const ns_asm_sink* sink) { a->cfg.sink = *sink; }

uint64_t ns_asm_edge_digest(uint64_t id, uint64_t parent) { return ns_idmap_mix(id ^ ns_idmap_mix(parent)); }

ns_asm* ns_asm_new(const ns_asm_config* cfg) {
  ns_asm* a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->cfg = *cfg;
  ns_idmap_init(&a->by_id);
  a->user_off = (sizeof(ns_event) + 15) & ~(size_t)15;
  a->states_off = a->user_off + ((cfg->user_bytes + 15) & ~(size_t)15);
  a->entry_bytes = a->states_off + cfg->keep_states * sizeof(ns_event_state);
  return a;
}

/* ---- queues and the held list ----
 * Both are intrusive doubly linked lists through two fields of ns_event's
 * link (prev, next): a timer queue (q_prev, q_next), the held list
 * (hold_prev, hold_next). head and tail are lvalues. */
#define LIST_APPEND(head, tail, e, prev, next) \
  do {                                         \
    (e)->link.prev = (tail);                   \
    (e)->link.next = NULL;                     \
    if (tail) (tail)->link.next = (e);         \
    else (head) = (e);                         \
    (tail) = (e);                              \
  } while (0)

#define LIST_UNLINK(head, tail, e, prev, next)                      \
  do {                                                              \
    if ((e)->link.prev) (e)->link.prev->link.next = (e)->link.next; \
    else (head) = (e)->link.next;                                   \
    if ((e)->link.next) (e)->link.next->link.prev = (e)->link.prev; \
    else (tail) = (e)->link.prev;                                   \
    (e)->link.prev = (e)->link.next = NULL;                         \
  } while (0)

static void q_remove(ns_asm* a, ns_event* e) {
  if (e->link.q == Q_NONE) return;
  evq* q = &a->q[e->link.q];
  LIST_UNLINK(q->head, q->tail, e, q_prev, q_next);
  e->link.q = Q_NONE;
  q->n--;
}

/* Moves e to the tail of queue `which` (joining it now), or off every queue. */
static void q_set(ns_asm* a, ns_event* e, int which) {
  q_remove(a, e);
  if (which == Q_NONE) return;
  evq* q = &a->q[which];
  e->link.q = (uint8_t)which;
  e->link.q_since = a->now;
  LIST_APPEND(q->head, q->tail, e, q_prev, q_next);
  q->n++;
}

static void hold(ns_asm* a, ns_event* e) {
  if (e->link.hold_seq) return;
  e->link.hold_seq = ++a->hold_seq;
  LIST_APPEND(a->held_head, a->held_tail, e, hold_prev, hold_next);
  a->nheld++;
}

static void unhold(ns_asm* a, ns_event* e) {
  if (!e->link.hold_seq) return;
  LIST_UNLINK(a->held_head, a->held_tail, e, hold_prev, hold_next);
  e->link.hold_seq = 0;
  a->nheld--;
}

/* ---- entries ---- */

ns_event* ns_asm_find(const ns_asm* a, uint64_t id) {
  return (ns_event*)(uintptr_t)ns_idmap_home_get(&a->recent, &a->by_id, id);
}

uint64_t ns_asm_now(const ns_asm* a) { return a->now; }

/* The running events are exactly those on Q_OPEN: a START puts an entry
 * there unless its STOP came first; its STOP, or its release, takes it off. */
ns_event* ns_asm_running_first(const ns_asm* a) { return a->q[Q_OPEN].head; }

ns_event* ns_asm_running_next(const ns_event* e) { return e->link.q == Q_OPEN ? e->link.q_next : NULL; }

/* Gives a new entry its place (ns_idmap_home_put). -1 when there is none. */
static int entry_home(ns_asm* a, uint64_t id, ns_event* e) {
  return ns_idmap_home_put(&a->recent, &a->by_id, id, (uint64_t)(uintptr_t)e);
}

/* Takes a released entry out of wherever it lives. */
static void entry_unhome(ns_asm* a, const ns_event* e) { ns_idmap_home_del(&a->recent, &a->by_id, e->id); }

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

/* A new entry for id (the caller sets what it knows, then announces it). */
static ns_event* entry_new(ns_asm* a, uint64_t id) {
  ns_event* e = a->free_list;
  if (e) {
    a->free_list = e->link.q_next;
    a->nfree--;
  } else {
    e = malloc(a->entry_bytes);
    if (!e) return NULL;
  }
  if (entry_home(a, id, e) != 0) {
    free(e);
    return NULL;
  }
  /* Everything but the START record, which a START overwrites and the
   * other creators clear (start_clear): most entries are made by their START. */
  memset(e, 0, offsetof(ns_event, start));
  memset((char*)e + a->user_off, 0, a->states_off - a->user_off);
  e->id = id;
  e->type = NS_EV_UNKNOWN;
  e->channel = -1;
  e->first_seen = a->now;
  e->states = (ns_event_state*)(void*)((char*)e + a->states_off);
  a->st.live++;
  if (a->st.live > a->st.peak_live) a->st.peak_live = a->st.live;
  return e;
}

static void start_clear(ns_event* e) { memset(&e->start, 0, sizeof e->start); }

static void announce(ns_asm* a, ns_event* e) {
  if (a->cfg.sink.created) a->cfg.sink.created(a->cfg.sink.user, e);
}

static int is_op_type(unsigned t) { return t == NS_EV_COLL || t == NS_EV_P2P; }

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

static void release(ns_asm* a, ns_event* e);

/* Where a started, stopped op goes after something changed. */
static void op_update(ns_asm* a, ns_event* op) {
  if (!op->op_like || !op->started || !op->stopped || a->flushing) return;
  hold(a, op);
  if (op->live_children) {
    q_set(a, op, Q_NONE); /* busy: its children move it on */
  } else if (!children_done(a, op)) {
    q_set(a, op, Q_WAITING);
  } else if (a->cfg.grace_ns == 0) {
    release(a, op);
  } else {
    q_set(a, op, Q_SETTLING);
  }
}

/* A running ProxyOp/KernelCh left before it stopped: its op stops waiting for it. */
static void child_gone(ns_asm* a, ns_event* child) {
  ns_event* op = child->op ? ns_asm_find(a, child->op) : NULL;
  if (!op) return;
  if (op->live_children) op->live_children--;
  op->flags |= NS_EVF_CHILD_LOST;
  op_update(a, op);
}

static void count_released(ns_asm* a, const ns_event* e) {
  if (!e->started) {
    if (e->stopped) a->st.orphan_stops++;
    else a->st.lost_parents++;
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

static void release(ns_asm* a, ns_event* e) {
  q_remove(a, e);
  unhold(a, e);
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
static void evict(ns_asm* a, ns_event* e, uint64_t* counter) {
  e->flags |= NS_EVF_EVICTED;
  (*counter)++;
  release(a, e);
}

/* ---- timers ---- */

static int waited(const ns_asm* a, const ns_event* head, uint64_t wait) {
  return head && a->now - head->link.q_since >= wait;
}

static void release_due(ns_asm* a) {
  ns_event* h;
  if (a->cfg.max_age_ns)
    while ((h = a->q[Q_OPEN].head) && a->now - h->link.q_since > a->cfg.max_age_ns) evict(a, h, &a->st.evicted_age);
  while ((h = a->q[Q_UNSTARTED].head) && a->now - h->link.q_since > a->cfg.orphan_wait_ns) release(a, h);
  while (waited(a, h = a->q[Q_WAITING].head, a->cfg.expect_wait_ns)) {
    h->flags |= NS_EVF_FORCED;
    a->st.forced++;
    release(a, h);
  }
  while (waited(a, h = a->q[Q_SETTLING].head, a->cfg.grace_ns)) release(a, h);
  while (a->cfg.max_held && a->nheld > a->cfg.max_held) {
    h = a->held_head;
    if (h->started && !children_done(a, h)) {
      h->flags |= NS_EVF_FORCED;
      a->st.forced++;
    }
    release(a, h);
  }
}

void ns_asm_advance(ns_asm* a, uint64_t now_ns) {
  if (now_ns > a->now) a->now = now_ns;
  release_due(a);
}

/* ---- records ---- */

void ns_asm_comm(ns_asm* a, uint32_t comm, uint64_t event_mask, uint32_t abi_version) {
  if (comm == 0 || comm >= NS_ASM_MAX_COMM_SERIAL) return;
  comm_rec* grown = ns_array_reach(a->comms, &a->ncomms, comm, sizeof *grown, 16);
  if (!grown) return;
  a->comms = grown;
  comm_rec* c = &a->comms[comm];
  *c = (comm_rec){.known = 1, .abi = abi_version, .mask = event_mask, .has_rank = c->has_rank, .rank = c->rank};
}

void ns_asm_comm_rank(ns_asm* a, uint32_t comm, int64_t rank) {
  if (comm == 0 || comm >= a->ncomms || !a->comms[comm].known) return;
  a->comms[comm].has_rank = 1;
  a->comms[comm].rank = rank;
}

/* The parent op of a starting ProxyOp/KernelCh, created unstarted when its START has not come. */
static ns_event* parent_op(ns_asm* a, const ns_record* r) {
  if (!r->parent || (r->flags & NS_RF_PARENT_RAW)) return NULL;
  ns_event* p = ns_asm_find(a, r->parent);
  if (!p) {
    p = entry_new(a, r->parent);
    if (!p) return NULL;
    start_clear(p);
    p->op_like = 1;
    q_set(a, p, Q_UNSTARTED);
    hold(a, p);
    announce(a, p);
  }
  return p->op_like ? p : NULL;
}

/* The bookkeeping of a child's stop on its op, then the child itself. */
static void apply_stop(ns_asm* a, ns_event* e) {
  if (a->cfg.sink.stopped) a->cfg.sink.stopped(a->cfg.sink.user, e);
  ns_event* op = e->op ? ns_asm_find(a, e->op) : NULL;
  if (op && (e->type == NS_EV_PROXY_OP || e->type == NS_EV_KERNEL_CH)) {
    if (op->live_children) op->live_children--;
    if (!op->has_exec_stop || e->stop_ts > op->exec_stop) op->exec_stop = e->stop_ts;
    op->has_exec_stop = 1;
    if (e->type == NS_EV_KERNEL_CH) {
      op->n_kch_done++;
      if (e->has_ptimer_stop && e->ptimer_stop) {
        op->n_kch_timed++;
        if (!op->has_ptimer_max || e->ptimer_stop > op->ptimer_max) op->ptimer_max = e->ptimer_stop;
        op->has_ptimer_max = 1;
      }
    }
    op_update(a, op);
  } else if (op && e->type == NS_EV_PROXY_STEP) {
    op->n_steps++;
  }
  if (e->op_like) op_update(a, e);
  else release(a, e);
}

static void on_start(ns_asm* a, const ns_record* r) {
  ns_event* e = ns_asm_find(a, r->id);
  if (e && e->started) {
    a->st.duplicate_starts++;
    return;
  }
  int created = !e;
  if (created && !(e = entry_new(a, r->id))) return;
  int stopped_first = e->stopped;
  unhold(a, e);
  q_remove(a, e);
  while (a->cfg.max_open && a->q[Q_OPEN].n >= a->cfg.max_open) evict(a, a->q[Q_OPEN].head, &a->st.evicted_open);
  e->start = *r;
  e->started = 1;
  e->type = r->type;
  e->op_like = is_op_type(r->type); /* a parent named by children is an op only if its START says so */
  if (!stopped_first) q_set(a, e, Q_OPEN);
  if (created) announce(a, e);

  switch (r->type) {
    case NS_EV_PROXY_OP:
    case NS_EV_KERNEL_CH: {
      int kch = r->type == NS_EV_KERNEL_CH;
      e->channel = (int32_t)r->num[kch ? NS_KERNEL_CH_CHANNEL : NS_PROXY_OP_CHANNEL];
      ns_event* p = parent_op(a, r);
      if (!p) break;
      e->op = p->id;
      p->live_children++;
      p->children_seen++;
      if (kch) {
        p->n_kernel_ch++;
        uint64_t ptimer = r->num[NS_KERNEL_CH_PTIMER];
        if (ptimer && (!p->has_ptimer_min || ptimer < p->ptimer_min)) {
          p->ptimer_min = ptimer;
          p->has_ptimer_min = 1;
        }
      } else {
        p->n_proxy_ops++;
      }
      op_update(a, p); /* a stopped op is busy again */
      break;
    }
    case NS_EV_PROXY_STEP:
    case NS_EV_NET_PLUGIN:
    case NS_EV_KERNEL_PHASE: {
      ns_event* p = (r->flags & NS_RF_PARENT_RAW) ? NULL : ns_asm_find(a, r->parent);
      if (r->type == NS_EV_KERNEL_PHASE) e->channel = (int32_t)r->num[NS_KERNEL_PHASE_CHANNEL];
      if (p && p->started) {
        if (r->type != NS_EV_KERNEL_PHASE) e->channel = p->channel;
        if ((r->type == NS_EV_PROXY_STEP && p->type == NS_EV_PROXY_OP) ||
            (r->type == NS_EV_KERNEL_PHASE && p->type == NS_EV_KERNEL_CH))
          e->op = p->op; /* a phase belongs to its KernelCh's Coll/P2p */
      }
      break;
    }
    default:
      break;
  }
  if (a->cfg.sink.started) a->cfg.sink.started(a->cfg.sink.user, e);
  if (stopped_first) apply_stop(a, e);
}

/* The plugin's own records (record.h): an event it closed, a run of
 * identical states it folded. 1 if r was one. */
static int own_state(ns_asm* a, ns_event* e, const ns_record* r) {
  if (r->state == NS_ST_CLOSED) {
    if (!e || !e->started || e->stopped) {
      a->st.orphan_states++;
      return 1;
    }
    e->close_reason = (uint8_t)(r->arg < NS_CLOSE_REASONS ? r->arg : 0);
    e->close_ts = r->ts;
    a->st.closed[e->close_reason]++;
    release(a, e);
    return 1;
  }
  if (r->state == NS_ST_REPEATED) {
    if (!e || !e->started || !e->nstates) {
      a->st.orphan_states++;
      return 1;
    }
    e->repeats += r->arg;
    a->st.repeats += r->arg;
    if (e->nstates <= a->cfg.keep_states) e->states[e->nstates - 1].repeats += (uint32_t)r->arg;
    if (a->cfg.sink.state) a->cfg.sink.state(a->cfg.sink.user, e, r);
    return 1;
  }
  return 0;
}

static void on_state(ns_asm* a, const ns_record* r) {
  ns_event* e = ns_asm_find(a, r->id);
  a->st.states++;
  if (r->state >= NS_ST_OWN_FIRST && own_state(a, e, r)) return;
  if (e && e->started) {
    e->last_state = r->state;
    e->last_flags = r->flags;
    e->last_arg = r->arg;
    if (e->nstates < a->cfg.keep_states)
      e->states[e->nstates] =
          (ns_event_state){.ts = r->ts, .arg = r->arg, .state = r->state, .flags = r->flags, .tid = r->tid};
    e->nstates++;
    if (r->flags & NS_RF_HAS_ARG) {
      if (e->type == NS_EV_PROXY_STEP) {
        e->trans_size = r->arg;
        e->has_trans_size = 1;
      } else if ((e->type == NS_EV_KERNEL_CH && r->state == NS_ST_KERNEL_CH_STOP) ||
                 (e->type == NS_EV_KERNEL_PHASE && r->state == NS_ST_KERNEL_PHASE_STOP)) {
        e->ptimer_stop = r->arg;
        e->has_ptimer_stop = 1;
      }
    }
  } else {
    a->st.orphan_states++;
    e = NULL;
  }
  if (a->cfg.sink.state) a->cfg.sink.state(a->cfg.sink.user, e, r);
}

static void on_stop(ns_asm* a, const ns_record* r) {
  ns_event* e = ns_asm_find(a, r->id);
  if (e && e->stopped) {
    a->st.orphan_stops++;
    return;
  }
  if (!e) {
    /* Its START may follow (another thread's block was written later). */
    if (!(e = entry_new(a, r->id))) return;
    start_clear(e);
    e->type = r->type;
    e->op_like = is_op_type(r->type);
    q_set(a, e, Q_UNSTARTED);
    hold(a, e);
    announce(a, e);
  }
  e->stopped = 1;
  e->stop_ts = r->ts;
  e->stop_tid = r->tid;
  if (!e->started) { /* applied at its START */
    if (e->type == NS_EV_UNKNOWN) e->type = r->type;
    return;
  }
  q_remove(a, e);
  apply_stop(a, e);
}

void ns_asm_record(ns_asm* a, const ns_record* r) {
  a->st.records++;
  if (r->ts > a->now) a->now = r->ts;
  if (r->type >= NS_EV_COUNT) return;
  switch (r->kind) {
    case NS_REC_START: on_start(a, r); break;
    case NS_REC_STATE: on_state(a, r); break;
    case NS_REC_STOP: on_stop(a, r); break;
    default: break;
  }
  release_due(a);
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
  while (a->held_head) release(a, a->held_head);
  /* every entry in by_id, for one walk in start order (an entry there is no
   * room for is released first: out of order, never lost) */
  for (ns_event* e; (e = entries_to_map(a));) release(a, e);
  size_t n = a->by_id.len, k = 0;
  ns_event** v = n ? malloc(n * sizeof *v) : NULL;
  uint64_t id, ptr;
  for (size_t pos = 0; v && ns_idmap_next(&a->by_id, &pos, &id, &ptr);) v[k++] = (ns_event*)(uintptr_t)ptr;
  if (v) {
    qsort(v, k, sizeof *v, by_start);
    for (size_t i = 0; i < k; i++) release(a, v[i]);
  } else {
    for (size_t pos = 0; ns_idmap_next(&a->by_id, &pos, &id, &ptr); pos = 0) release(a, (ns_event*)(uintptr_t)ptr);
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
