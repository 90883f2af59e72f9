/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the events the writer holds open (see open_events.h). Writer thread only. */
#include "writer/open_events.h"

#include <stdlib.h>
#include <string.h>

#include "capture/context.h"
#include "session/session.h"
#include "util/idmap.h"

/* The open events live in one pool, found by id through a table of the
 * newest ids (most events end a few hundred events after they start: a
 * ProxyStep, a KernelCh) and a map that holds only those a newer id pushed
 * out of it, as the assembler does (util/idmap.h). */
static ns_open_event* pool;
static uint8_t* listed;  /* pool index is in `live` (at most once, however often the place is reused) */
static uint32_t pool_len, pool_cap;
static uint32_t* free_idx; /* free pool indexes (a stack, pool_cap of room) */
static uint32_t nfree;
static ns_idmap_recent* recent; /* id -> index + 1, the newest ids */
static ns_idmap by_id;          /* id -> index + 1, ids pushed out of `recent` */
static uint32_t* live;          /* indexes of started events, in start order; cleaned by ns_open_run */
static uint32_t nlive, live_cap;
static uint32_t ctx_open[NS_OPEN_CONTEXTS];

/* Ended ids, direct-mapped: id << 2 | NS_OPEN_STOPPED or NS_OPEN_CLOSED,
 * and a PXN event's origin pid (a NetPlugin event may start under a
 * ProxyStep that already stopped). A newer id in the same place forgets the
 * older one (its late call is then recorded as a call whose START is not
 * drained yet would be). */
#define ENDED_SLOTS (1u << 16)
typedef struct {
  uint64_t key;
  uint64_t origin_pid;
} ended_id;
static ended_id* ended;
/* An id is serial << 40 | counter: one ring's consecutive ids take
 * consecutive places (its last 2^16 never meet), each ring from a place of
 * its own (its serial, mixed). */
static inline ended_id* ended_at(uint64_t id) {
  return &ended[(id + ns_idmap_mix(id >> 40)) & (ENDED_SLOTS - 1)];
}

static uint8_t progress_states[NS_OPEN_CONTEXTS]; /* ns_open_note_progress_states */
/* Connections NCCL stopped a ProxyOp of (net ones: copy transports never
 * stop theirs), by net_conn_key; their ProxyOps are never "never stopped". */
static ns_idmap net_conns;
/* Per communicator: the latest start (writer time) of a ProxyOp NCCL
 * stopped. A communicator's collectives complete in order, so a stateless
 * ProxyOp that started before it is not waiting for its turn. */
static uint64_t stopped_op_start[NS_OPEN_CONTEXTS];

#define T_PINNED 0x100u
_Static_assert(!(T_PINNED & NS_OPEN_UNANALYSED), "open event flags: one bit each");

static uint64_t net_conn_key(uint32_t k, uint32_t conn) { return (uint64_t)(k + 1) << 32 | conn; }

static uint32_t cap_per_context(void) { return ns_sess.cfg.slab_events ? ns_sess.cfg.slab_events : 65536u; }

static int grow(void) {
  uint32_t cap = pool_cap ? pool_cap * 2 : 1024;
  ns_open_event* p = realloc(pool, (size_t)cap * sizeof *p);
  if (!p) return -1;
  pool = p;
  uint8_t* l = realloc(listed, cap);
  if (!l) return -1;
  listed = l;
  memset(listed + pool_cap, 0, cap - pool_cap);
  uint32_t* f = realloc(free_idx, (size_t)cap * sizeof *f);
  if (!f) return -1;
  free_idx = f;
  pool_cap = cap;
  return 0;
}

ns_open_event* ns_open_find(uint64_t id) {
  uint64_t v = recent && id ? ns_idmap_home_get(recent, &by_id, id) : 0;
  return v ? &pool[v - 1] : NULL;
}

void ns_open_started(uint64_t id, unsigned type, uint32_t ctx, uint64_t ts, int pinned, uint32_t conn, uint32_t comm,
                     uint32_t origin_pid) {
  if (!id || ctx >= NS_OPEN_CONTEXTS || ctx_open[ctx] >= cap_per_context()) return;
  if (!recent && !(recent = calloc(1, sizeof *recent))) return;
  if (!nfree && pool_len == pool_cap && grow() != 0) return;
  if (nlive == live_cap) {
    uint32_t cap = live_cap ? live_cap * 2 : 1024;
    uint32_t* l = realloc(live, (size_t)cap * sizeof *l);
    if (!l) return;
    live = l;
    live_cap = cap;
  }
  uint32_t i = nfree ? free_idx[--nfree] : pool_len++;
  if (ns_idmap_home_put(recent, &by_id, id, (uint64_t)i + 1) != 0) {
    free_idx[nfree++] = i;
    return;
  }
  pool[i] = (ns_open_event){.id = id,
                            .start_ns = ts ? ts : 1,
                            .type = type | (pinned ? T_PINNED : 0),
                            .conn = conn,
                            .comm = comm,
                            .origin_pid = origin_pid,
                            .ctx = ctx};
  if (!listed[i]) {
    listed[i] = 1;
    live[nlive++] = i;
  }
  ctx_open[ctx]++;
}

/* The event at index i ended (how: NS_OPEN_STOPPED or NS_OPEN_CLOSED). */
static void end_event(uint32_t i, int how) {
  ns_open_event* e = &pool[i];
  if (!ended) ended = calloc(ENDED_SLOTS, sizeof *ended);
  if (ended) *ended_at(e->id) = (ended_id){e->id << 2 | (uint64_t)how, e->origin_pid};
  ns_idmap_home_del(recent, &by_id, e->id);
  ctx_open[e->ctx]--;
  e->id = 0;
  free_idx[nfree++] = i; /* listed[i] stays: ns_open_run takes it off the list */
}

int ns_open_ended(uint64_t id) {
  if (!ended) return NS_OPEN_UNKNOWN;
  uint64_t v = ended_at(id)->key;
  return v >> 2 == id ? (int)(v & 3) : NS_OPEN_UNKNOWN;
}

uint32_t ns_open_origin_pid(uint64_t id) {
  const ns_open_event* e = ns_open_find(id);
  if (e) return e->origin_pid;
  if (!ended || ended_at(id)->key >> 2 != id) return 0;
  return (uint32_t)ended_at(id)->origin_pid;
}

void ns_open_stopped(ns_open_event* e) {
  uint32_t k = e->ctx;
  if ((e->type & 0xFF) == NS_EV_PROXY_OP) {
    if (e->start_ns > stopped_op_start[k]) stopped_op_start[k] = e->start_ns;
    if (e->conn && !(e->conn & NS_CONN_SEND)) {
      int ins;
      ns_idmap_put(&net_conns, net_conn_key(k, e->conn), &ins); /* out of memory: the other rules decide */
    }
  }
  end_event((uint32_t)(e - pool), NS_OPEN_STOPPED);
}

int ns_open_is_open(uint64_t id) { return ns_open_find(id) != NULL; }

int ns_open_close(uint64_t id, uint32_t* type) {
  ns_open_event* e = ns_open_find(id);
  if (!e) return 0;
  if (type) *type = e->type;
  end_event((uint32_t)(e - pool), NS_OPEN_CLOSED);
  return 1;
}

void ns_open_note_progress_states(uint32_t ctx_index) {
  if (ctx_index < NS_OPEN_CONTEXTS) progress_states[ctx_index] = 1;
}

/* A ProxyOp of a communicator whose net ProxyOps record InProgress, that
 * recorded no state in hold time: a copy transport's, which NCCL starts and
 * never stops (2.27+; transport/net.cc alone stops them). Not a net send,
 * nor a receive on a connection NCCL stopped a ProxyOp of, nor one no
 * later ProxyOp of its communicator was stopped after: those wait their
 * turn on their connection without a state (open_events.h), a rank late at
 * the first collectives included; at its communicator's end (at_end) no op
 * waits any more. */
static int never_stopped(const ns_open_event* e, uint64_t age, uint64_t hold, int at_end) {
  uint32_t k = e->ctx;
  if ((e->type & 0xFF) != NS_EV_PROXY_OP || !progress_states[k] || age < hold) return 0;
  if (e->conn & NS_CONN_SEND) return 0; /* a net send: NCCL stops it once its turn came */
  if (e->conn && ns_idmap_get(&net_conns, net_conn_key(k, e->conn))) return 0; /* queued on a net connection */
  if (!at_end && stopped_op_start[k] <= e->start_ns) return 0; /* nothing after it finished: it may be next */
  return !e->has_state;
}

/* Types NCCL may leave running: closed first when a communicator holds too many. */
static int leak_prone(unsigned type) {
  return type == NS_EV_PROXY_OP || type == NS_EV_PROXY_STEP || type == NS_EV_KERNEL_CH ||
         type == NS_EV_NET_PLUGIN || type == NS_EV_PROXY_CTRL;
}

void ns_open_run(uint64_t now, ns_close_fn on_close, void* user) {
  uint64_t max_age = (uint64_t)ns_sess.cfg.max_age_ms * 1000000u;
  uint64_t hold = (uint64_t)ns_sess.cfg.hold_ms * 1000000u;
  uint32_t pressure_at = cap_per_context() / 8 * 7;
  uint8_t pressed[NS_OPEN_CONTEXTS]; /* decided before the run: it closes all that qualify, not just enough */
  for (uint32_t k = 0; k < NS_OPEN_CONTEXTS; k++) pressed[k] = ctx_open[k] > pressure_at;
  uint32_t keep = 0;
  for (uint32_t n = 0; n < nlive; n++) {
    uint32_t i = live[n];
    ns_open_event* e = &pool[i];
    if (!e->id) { /* ended since (its STOP was drained) */
      listed[i] = 0;
      continue;
    }
    uint64_t age = now > e->start_ns ? now - e->start_ns : 0;
    unsigned type = e->type & 0xFF;
    unsigned reason = age >= max_age && !(e->type & T_PINNED) ? NS_CLOSE_MAX_AGE
                      : never_stopped(e, age, hold, 0)          ? NS_CLOSE_NEVER_STOPPED
                      : pressed[e->ctx] && leak_prone(type) && age >= hold ? NS_CLOSE_PRESSURE
                                                                          : 0;
    if (reason) {
      if (on_close) on_close(user, e->id, type, !(e->type & NS_OPEN_UNANALYSED), e->ctx, reason);
      end_event(i, NS_OPEN_CLOSED);
      listed[i] = 0;
      continue;
    }
    live[keep++] = i;
  }
  nlive = keep;
}

/* Closes every open event of context k (all contexts: k == NS_OPEN_CONTEXTS). */
static void close_context(uint32_t k, unsigned reason, ns_close_fn on_close, void* user) {
  uint32_t keep = 0;
  for (uint32_t n = 0; n < nlive; n++) {
    uint32_t i = live[n];
    ns_open_event* e = &pool[i];
    if (e->id && k != NS_OPEN_CONTEXTS && e->ctx != k) {
      live[keep++] = i;
      continue;
    }
    if (e->id) {
      /* a copy transport's ProxyOp would not have stopped later either: say so */
      unsigned why = never_stopped(e, 0, 0, reason == NS_CLOSE_COMM_END) ? NS_CLOSE_NEVER_STOPPED : reason;
      if (on_close) on_close(user, e->id, e->type & 0xFF, !(e->type & NS_OPEN_UNANALYSED), e->ctx, why);
      end_event(i, NS_OPEN_CLOSED);
    }
    listed[i] = 0;
  }
  nlive = keep;
}

void ns_open_release_context(uint32_t ctx_index, ns_close_fn on_close, void* user) {
  if (ctx_index >= NS_OPEN_CONTEXTS) return;
  close_context(ctx_index, NS_CLOSE_COMM_END, on_close, user);
  progress_states[ctx_index] = 0;
  stopped_op_start[ctx_index] = 0;
  /* its net connections: the next communicator in this context has its own */
  for (size_t pos = 0;;) {
    uint64_t key, val;
    if (!ns_idmap_next(&net_conns, &pos, &key, &val)) break;
    if (key >> 32 == (uint64_t)ctx_index + 1) {
      ns_idmap_del(&net_conns, key);
      pos = 0; /* removal moves entries: start over (rare, cold) */
    }
  }
}

void ns_open_close_all(unsigned reason, ns_close_fn on_close, void* user) {
  close_context(NS_OPEN_CONTEXTS, reason, on_close, user);
}

void ns_open_reset(void) {
  free(pool);
  free(listed);
  free(free_idx);
  free(recent);
  free(live);
  free(ended);
  pool = NULL;
  listed = NULL;
  free_idx = NULL;
  recent = NULL;
  live = NULL;
  ended = NULL;
  pool_len = pool_cap = nfree = nlive = live_cap = 0;
  ns_idmap_free(&by_id);
  ns_idmap_init(&by_id);
  ns_idmap_free(&net_conns);
  ns_idmap_init(&net_conns);
  memset(ctx_open, 0, sizeof ctx_open);
  memset(progress_states, 0, sizeof progress_states);
  memset(stopped_op_start, 0, sizeof stopped_op_start);
}
