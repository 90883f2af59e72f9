/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler (model and rules: include/ncclscope/events.h):
 * its configuration and communicators, and what each record does to the
 * entries: it finds its event's entry by id, or makes it; a START applies
 * its event's place in the hierarchy, a STATE or
 * a STOP its own; records that come before the START they belong to wait
 * for it; the plugin's own states close an event or count repeats. Where
 * each entry then waits and when it leaves: entries.c.
 * Single-threaded (the feeding thread).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/array.h"

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

/* ---- entries by id ---- */

/* Keeps one recycled entry at hand, so that an id the map has made room
 * for always gets its entry. 0, or -1 when out of memory. */
static int entry_reserve(ns_asm* a) {
  if (a->free_list) return 0;
  ns_event* e = malloc(a->entry_bytes);
  if (!e) return -1;
  e->link.q_next = NULL;
  a->free_list = e;
  a->nfree = 1;
  return 0;
}

/* A new entry for id in the place the map made for it (home), from the
 * entry entry_reserve kept. */
static ns_event* entry_new(ns_asm* a, uint64_t id, uint64_t* home) {
  ns_event* e = a->free_list;
  a->free_list = e->link.q_next;
  a->nfree--;
  *home = (uint64_t)(uintptr_t)e;
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

/* The entry of id, and with make a new one when there is none (*made = 1:
 * the caller sets what it knows, then announces it). NULL when there is
 * none, or no memory for one. One look in the id map either way. */
static inline ns_event* entry_at(ns_asm* a, uint64_t id, int make, int* made) {
  /* The last entry found: a feeder that looks an event up before it feeds
   * its record (the plugin's writer) has the assembler find it again. */
  *made = 0;
  if (a->found && a->found->id == id) return a->found;
  uint64_t* home = ns_idmap_home_slot(&a->recent, &a->by_id, id, make && entry_reserve(a) == 0, made);
  if (!home) return NULL;
  return a->found = *made ? entry_new(a, id, home) : (ns_event*)(uintptr_t)*home;
}

ns_event* ns_asm_find(const ns_asm* a, uint64_t id) {
  int made;
  /* make 0 changes nothing but the last-found cache, which is no state of the assembler */
  return entry_at((ns_asm*)(uintptr_t)a, id, 0, &made);
}

static void start_clear(ns_event* e) { memset(&e->start, 0, sizeof e->start); }

static void announce(ns_asm* a, ns_event* e) {
  if (a->cfg.sink.created) a->cfg.sink.created(a->cfg.sink.user, e);
}

static int is_op_type(unsigned t) { return t == NS_EV_COLL || t == NS_EV_P2P; }

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
  int made;
  ns_event* p = entry_at(a, r->parent, 1, &made);
  if (!p) return NULL;
  if (made) {
    start_clear(p);
    p->op_like = 1;
    asm_q_set(a, p, Q_UNSTARTED);
    asm_hold(a, p);
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
    asm_op_update(a, op);
  } else if (op && e->type == NS_EV_PROXY_STEP) {
    op->n_steps++;
  }
  if (e->op_like)
    asm_op_update(a, e);
  else
    asm_release(a, e);
}

static void on_start(ns_asm* a, const ns_record* r) {
  int created;
  ns_event* e = entry_at(a, r->id, 1, &created);
  if (!e) return;
  if (e->started) {
    a->st.duplicate_starts++;
    return;
  }
  int stopped_first = e->stopped;
  asm_unhold(a, e);
  asm_q_remove(a, e);
  while (a->cfg.max_open && a->q[Q_OPEN].n >= a->cfg.max_open) asm_evict(a, a->q[Q_OPEN].head, &a->st.evicted_open);
  e->start = *r;
  e->started = 1;
  e->type = r->type;
  e->op_like = is_op_type(r->type); /* a parent named by children is an op only if its START says so */
  if (!stopped_first) asm_q_set(a, e, Q_OPEN);
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
      asm_op_update(a, p); /* a stopped op is busy again */
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
    asm_release(a, e);
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
  int made;
  ns_event* e = entry_at(a, r->id, 1, &made);
  if (!e) return;
  if (e->stopped) {
    a->st.orphan_stops++;
    return;
  }
  if (made) { /* its START may follow (another thread's block was written later) */
    start_clear(e);
    e->type = r->type;
    e->op_like = is_op_type(r->type);
    asm_q_set(a, e, Q_UNSTARTED);
    asm_hold(a, e);
    announce(a, e);
  }
  e->stopped = 1;
  e->stop_ts = r->ts;
  e->stop_tid = r->tid;
  if (!e->started) { /* applied at its START */
    if (e->type == NS_EV_UNKNOWN) e->type = r->type;
    return;
  }
  asm_q_remove(a, e);
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
  asm_release_if_due(a);
}
