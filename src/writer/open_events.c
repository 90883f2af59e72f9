/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the events the writer holds open (see open_events.h). Writer thread only. */
#include "writer/open_events.h"

#include <stdlib.h>
#include <string.h>

#include "capture/context.h"
#include "session/session.h"
#include "util/idmap.h"

/* What the writer knows of an event lives in the writer's part of the
 * tracker's entry (ns_open_attach); id 0 there: not held (never, or no longer). */
static ns_asm* tracker;
static size_t area;
static uint32_t ctx_open[NS_OPEN_CONTEXTS];

static ns_open_event* held_of(const ns_event* e) { return ns_event_area(e, area); }

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

ns_open_event* ns_open_find(uint64_t id) {
  ns_event* e = tracker && id ? ns_asm_find(tracker, id) : NULL;
  if (!e || !e->started || e->stopped) return NULL;
  ns_open_event* o = held_of(e);
  return o->id == id ? o : NULL;
}

void ns_open_started(uint64_t id, unsigned type, uint32_t ctx, uint64_t ts, int pinned, uint32_t conn, uint32_t comm,
                     uint32_t origin_pid) {
  if (!id || ctx >= NS_OPEN_CONTEXTS || ctx_open[ctx] >= cap_per_context()) return;
  ns_event* e = tracker ? ns_asm_find(tracker, id) : NULL;
  if (!e || !e->started || e->stopped || held_of(e)->id) return; /* its STOP came first; a second START */
  *held_of(e) = (ns_open_event){.id = id,
                                .start_ns = ts ? ts : 1,
                                .type = type | (pinned ? T_PINNED : 0),
                                .conn = conn,
                                .comm = comm,
                                .origin_pid = origin_pid,
                                .ctx = ctx};
  ctx_open[ctx]++;
}

/* The held event o ended (how: NS_OPEN_STOPPED or NS_OPEN_CLOSED). */
static void end_event(ns_open_event* o, int how) {
  if (!ended) ended = calloc(ENDED_SLOTS, sizeof *ended);
  if (ended) *ended_at(o->id) = (ended_id){o->id << 2 | (uint64_t)how, o->origin_pid};
  ctx_open[o->ctx]--;
  o->id = 0;
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
  end_event(e, NS_OPEN_STOPPED);
}

int ns_open_is_open(uint64_t id) { return ns_open_find(id) != NULL; }

int ns_open_close(uint64_t id, uint32_t* type) {
  ns_open_event* e = ns_open_find(id);
  if (!e) return 0;
  if (type) *type = e->type;
  end_event(e, NS_OPEN_CLOSED);
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

/* The writer closes held event o: it ends here, then on_close records it
 * (the record releases the tracker's entry; its running next one stays). */
static void close_held(ns_open_event* o, unsigned reason, ns_close_fn on_close, void* user) {
  uint64_t id = o->id;
  uint32_t type = o->type, ctx = o->ctx;
  end_event(o, NS_OPEN_CLOSED);
  if (on_close) on_close(user, id, type & 0xFF, !(type & NS_OPEN_UNANALYSED), ctx, reason);
}

void ns_open_run(uint64_t now, ns_close_fn on_close, void* user) {
  if (!tracker) return;
  uint64_t max_age = (uint64_t)ns_sess.cfg.max_age_ms * 1000000u;
  uint64_t hold = (uint64_t)ns_sess.cfg.hold_ms * 1000000u;
  uint32_t pressure_at = cap_per_context() / 8 * 7;
  uint8_t pressed[NS_OPEN_CONTEXTS]; /* decided before the run: it closes all that qualify, not just enough */
  for (uint32_t k = 0; k < NS_OPEN_CONTEXTS; k++) pressed[k] = ctx_open[k] > pressure_at;
  for (ns_event *ev = ns_asm_running_first(tracker), *next; ev; ev = next) {
    next = ns_asm_running_next(ev);
    ns_open_event* e = held_of(ev);
    if (!e->id) continue;
    uint64_t age = now > e->start_ns ? now - e->start_ns : 0;
    unsigned type = e->type & 0xFF;
    unsigned reason = age >= max_age && !(e->type & T_PINNED) ? NS_CLOSE_MAX_AGE
                      : never_stopped(e, age, hold, 0)          ? NS_CLOSE_NEVER_STOPPED
                      : pressed[e->ctx] && leak_prone(type) && age >= hold ? NS_CLOSE_PRESSURE
                                                                          : 0;
    if (reason) close_held(e, reason, on_close, user);
  }
}

/* Closes every held event of context k (all contexts: k == NS_OPEN_CONTEXTS). */
static void close_context(uint32_t k, unsigned reason, ns_close_fn on_close, void* user) {
  if (!tracker) return;
  for (ns_event *ev = ns_asm_running_first(tracker), *next; ev; ev = next) {
    next = ns_asm_running_next(ev);
    ns_open_event* e = held_of(ev);
    if (!e->id || (k != NS_OPEN_CONTEXTS && e->ctx != k)) continue;
    /* a copy transport's ProxyOp would not have stopped later either: say so */
    unsigned why = never_stopped(e, 0, 0, reason == NS_CLOSE_COMM_END) ? NS_CLOSE_NEVER_STOPPED : reason;
    close_held(e, why, on_close, user);
  }
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

/* The tracker gave up an event the writer holds (more running than it
 * keeps, or its flush): forgotten, not remembered as ended. */
static void on_released(void* user, ns_event* ev) {
  (void)user;
  ns_open_event* e = ev->started ? held_of(ev) : NULL;
  if (!e || !e->id) return;
  ctx_open[e->ctx]--;
  e->id = 0;
}

size_t ns_open_event_bytes(void) { return sizeof(ns_open_event); }

void ns_open_attach(ns_asm* as, size_t area_offset, ns_asm_sink* sink) {
  tracker = as;
  area = area_offset;
  *sink = (ns_asm_sink){.done = on_released};
}

void ns_open_reset(void) {
  tracker = NULL;
  free(ended);
  ended = NULL;
  ns_idmap_free(&net_conns);
  ns_idmap_init(&net_conns);
  memset(ctx_open, 0, sizeof ctx_open);
  memset(progress_states, 0, sizeof progress_states);
  memset(stopped_op_start, 0, sizeof stopped_op_start);
}
