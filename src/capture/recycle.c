/* ncclscope: recycling event slots (see recycle.h). Writer thread only. */
#include "capture/recycle.h"

#include <stdlib.h>
#include <string.h>

#include "capture/context.h"
#include "util/idmap.h"

/* Handles of recycled events that can be parents, with their ids, in two
 * FIFOs (the oldest forgotten first): API events and operations (the
 * parents NCCL names seconds later: a Coll after its CollApi, a KernelCh
 * after its Coll), and proxy events (a NetPlugin after its ProxyStep), so
 * that millions of steps never push an API event out; plus, apart, the
 * pinned graph-captured API events of live communicators. Memory: at most
 * 2^17 + 2^16 entries (about 6 MiB with the maps at half load). */
typedef struct {
  ns_idmap map;
  uint64_t* fifo; /* keys, oldest first from head */
  uint32_t head, len, cap; /* cap: a power of two (positions wrap with a mask) */
} history;
static history api_hist = {.cap = 1u << 17}, proxy_hist = {.cap = 1u << 16};
static ns_idmap pinned;
static uint8_t progress_states[NS_MAX_SLABS]; /* ns_recycle_note_progress_states */
/* Connections NCCL stopped a ProxyOp of (net ones: copy transports never
 * stop theirs), by net_conn_key; their ProxyOps are never "never stopped". */
static ns_idmap net_conns;
/* Per communicator: the latest start (writer time) of a ProxyOp NCCL
 * stopped. A communicator's collectives complete in order, so a stateless
 * ProxyOp that started before it is not waiting for its turn. */
static uint64_t stopped_op_start[NS_MAX_SLABS];

static uint64_t net_conn_key(uint32_t k, uint32_t conn) { return (uint64_t)(k + 1) << 32 | conn; }

/* The writer-only type word: the type, whether the handle is pinned, and
 * whether the slot is in its slab's live list (at most once: the list never
 * outgrows the slab, however many events a slot holds between two runs). */
#define W_PINNED 0x100u
#define W_LISTED 0x200u

/* The history a type's handles go to; NULL: no child names it after it stopped. */
static history* history_of(unsigned type) {
  switch (type) {
    case NS_EV_GROUP_API: case NS_EV_COLL_API: case NS_EV_P2P_API: case NS_EV_GROUP:
    case NS_EV_COLL: case NS_EV_P2P: case NS_EV_CE_COLL:
      return &api_hist;
    case NS_EV_PROXY_OP: case NS_EV_PROXY_STEP:
      return &proxy_hist;
    default:
      return NULL;
  }
}

static void remember(history* h, uint64_t handle, uint64_t id, int is_pinned) {
  int ins;
  if (is_pinned) {
    uint64_t* v = ns_idmap_put(&pinned, handle, &ins);
    if (v) *v = id;
    return;
  }
  if (!h->fifo && !(h->fifo = calloc(h->cap, sizeof *h->fifo))) return;
  if (h->len == h->cap) { /* forget the oldest */
    ns_idmap_del(&h->map, h->fifo[h->head]);
    h->head = (h->head + 1) & (h->cap - 1);
    h->len--;
  }
  uint64_t* v = ns_idmap_put(&h->map, handle, &ins);
  if (!v) return;
  *v = id;
  if (ins) h->fifo[(h->head + h->len++) & (h->cap - 1)] = handle;
}

uint64_t ns_recycle_parent_id(uint64_t handle) {
  uint64_t* v = ns_idmap_get(&pinned, handle);
  if (!v) v = ns_idmap_get(&api_hist.map, handle);
  if (!v) v = ns_idmap_get(&proxy_hist.map, handle);
  return v ? *v : 0;
}

static void history_free(history* h) {
  ns_idmap_free(&h->map);
  free(h->fifo);
  h->fifo = NULL;
  h->head = h->len = 0;
}

void ns_recycle_started(uint64_t slot_addr, uint64_t id, unsigned type, uint64_t ts, int is_pinned, uint32_t conn) {
  ns_slot* s = ns_slot_from_handle((void*)(uintptr_t)slot_addr);
  if (!s) return;
  ns_slab* sl = &ns_reg.slabs[ns_slot_slab(s)];
  uint32_t i = (uint32_t)(s - sl->slots);
  ns_slot_w* w = &sl->w[i];
  unsigned listed = w->type & W_LISTED;
  if (!listed && sl->nlive < sl->n) {
    sl->live[sl->nlive++] = i;
    listed = W_LISTED;
  }
  w->id = id;
  w->type = type | (is_pinned ? W_PINNED : 0) | listed;
  w->start_ns = ts ? ts : 1;
  w->conn = conn;
}

/* The event types slab k records: its communicator's mask, the session's for PXN. */
static uint32_t recorded_types(uint32_t k) {
  return k < NS_MAX_CONTEXTS ? ns_ctx_table[k].mask : ns_sess.cfg.event_mask;
}

/* The history a recycled handle goes to, if a child may still name it: a
 * ProxyStep's only children are NetPlugin events, so where those are not
 * recorded (the default mask) no later start can name a step. Remembering
 * every step anyway cost the writer a miss into a 4 MiB map per step: 14 %
 * of its time at 2 M records/s of steps (perf, ns-bench-rate). */
static history* history_for(unsigned type, uint32_t k) {
  if (type == NS_EV_PROXY_STEP && !(recorded_types(k) & (1u << NS_EV_NET_PLUGIN))) return NULL;
  return history_of(type);
}

/* S4: the event in s is over: its handle is remembered (parents), the slot
 * leaves the live list at the next run and goes back to its slab now. */
static void recycle(ns_slot* s) {
  uint32_t k = ns_slot_slab(s);
  ns_slot_w* w = ns_slot_writer(s);
  history* h = history_for(w->type & 0xFF, k);
  if (h) remember(h, (uint64_t)(uintptr_t)ns_slot_handle(s), w->id, (w->type & W_PINNED) != 0);
  w->id = 0;
  w->start_ns = 0;
  w->type &= W_LISTED;
  ns_slab_free(k, s); /* generation + 1, running 0, S1 release */
}

/* The slot at slot_addr if it holds event id, open (its START drained, not recycled since). */
static ns_slot* open_slot(uint64_t slot_addr, uint64_t id) {
  ns_slot* s = ns_slot_from_handle((void*)(uintptr_t)slot_addr);
  if (!s) return NULL;
  const ns_slot_w* w = ns_slot_writer(s);
  return w->id == id && w->start_ns ? s : NULL;
}

void ns_recycle_stopped(uint64_t slot_addr, uint64_t id) {
  ns_slot* s = open_slot(slot_addr, id);
  if (!s) return;
  const ns_slot_w* w = ns_slot_writer(s);
  uint32_t k = ns_slot_slab(s);
  if ((w->type & 0xFF) == NS_EV_PROXY_OP) {
    if (w->start_ns > stopped_op_start[k]) stopped_op_start[k] = w->start_ns;
    if (w->conn && !(w->conn & NS_CONN_SEND)) {
      int ins;
      ns_idmap_put(&net_conns, net_conn_key(k, w->conn), &ins); /* out of memory: the other rules decide */
    }
  }
  recycle(s);
}

int ns_recycle_is_open(uint64_t slot_addr, uint64_t id) { return open_slot(slot_addr, id) != NULL; }

int ns_recycle_close(uint64_t slot_addr, uint64_t id) {
  ns_slot* s = open_slot(slot_addr, id);
  if (!s) return 0;
  recycle(s);
  return 1;
}

void ns_recycle_note_progress_states(uint32_t ctx_index) {
  if (ctx_index < NS_MAX_SLABS) progress_states[ctx_index] = 1;
}

/* A ProxyOp of a communicator whose net ProxyOps record InProgress, that
 * recorded no state in hold time: a copy transport's, which NCCL starts and
 * never stops (2.27+; transport/net.cc alone stops them). Not a net send,
 * nor a receive on a connection NCCL stopped a ProxyOp of, nor one no
 * later ProxyOp of its communicator was stopped after: those wait their
 * turn on their connection without a state (recycle.h), a rank late at
 * the first collectives included; at its communicator's end (at_end) no op
 * waits any more. The slot's last_state is written by the event's
 * recording thread (relaxed: a state that races this check only delays
 * the close by a run). */
static int never_stopped(const ns_slot* s, const ns_slot_w* w, uint32_t k, uint64_t age, uint64_t hold, int at_end) {
  if ((w->type & 0xFF) != NS_EV_PROXY_OP || !progress_states[k] || age < hold) return 0;
  if (w->conn & NS_CONN_SEND) return 0; /* a net send: NCCL stops it once its turn came */
  if (w->conn && ns_idmap_get(&net_conns, net_conn_key(k, w->conn))) return 0; /* queued on a net connection */
  if (!at_end && stopped_op_start[k] <= w->start_ns) return 0; /* nothing after it finished: it may be next */
  return atomic_load_explicit(&s->last_state, memory_order_relaxed) == 0;
}

/* Types NCCL may leave running: closed first when a slab runs short. */
static int leak_prone(unsigned type) {
  return type == NS_EV_PROXY_OP || type == NS_EV_PROXY_STEP || type == NS_EV_KERNEL_CH ||
         type == NS_EV_NET_PLUGIN || type == NS_EV_PROXY_CTRL;
}

void ns_recycle_run(uint64_t now, ns_close_fn on_close, void* user) {
  uint64_t max_age = (uint64_t)ns_sess.cfg.max_age_ms * 1000000u;
  uint64_t hold = (uint64_t)ns_sess.cfg.hold_ms * 1000000u;
  for (uint32_t k = 0; k < NS_MAX_SLABS; k++) {
    ns_slab* sl = &ns_reg.slabs[k];
    /* Acquire: pairs with ns_slab_activate's release, so its `populated` is seen. */
    if (atomic_load_explicit(&sl->active, memory_order_acquire)) ns_slab_prefault(k);
    if (!sl->nlive) continue;
    /* short of slots: the oldest open leak-prone events older than the hold time go */
    int pressure = ns_slab_free_count(k) < sl->n / 8;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < sl->nlive; i++) {
      ns_slot_w* w = &sl->w[sl->live[i]];
      if (!w->start_ns) { /* recycled since (its STOP was drained) */
        w->type = 0;
        continue;
      }
      /* The slot's own line is read only for a ProxyOp held long enough (never_stopped). */
      ns_slot* s = &sl->slots[sl->live[i]];
      uint64_t age = now > w->start_ns ? now - w->start_ns : 0;
      unsigned type = w->type & 0xFF;
      unsigned reason = age >= max_age && !(w->type & W_PINNED) ? NS_CLOSE_MAX_AGE
                        : never_stopped(s, w, k, age, hold, 0)        ? NS_CLOSE_NEVER_STOPPED
                        : pressure && leak_prone(type) && age >= hold ? NS_CLOSE_PRESSURE
                                                                      : 0;
      if (reason) {
        if (on_close) on_close(user, w->id, type, k, reason);
        recycle(s);
        continue;
      }
      sl->live[keep++] = sl->live[i];
    }
    sl->nlive = keep;
  }
}

static void close_slab(uint32_t k, unsigned reason, ns_close_fn on_close, void* user) {
  ns_slab* sl = &ns_reg.slabs[k];
  for (uint32_t i = 0; i < sl->nlive; i++) {
    ns_slot_w* w = &sl->w[sl->live[i]];
    if (!w->start_ns) continue;
    /* a copy transport's ProxyOp would not have stopped later either: say so */
    int copy_op = never_stopped(&sl->slots[sl->live[i]], w, k, 0, 0, reason == NS_CLOSE_COMM_END);
    unsigned why = copy_op ? NS_CLOSE_NEVER_STOPPED : reason;
    if (on_close) on_close(user, w->id, w->type & 0xFF, k, why);
    w->start_ns = 0;
    w->type = 0;
  }
  sl->nlive = 0;
}

void ns_recycle_release_context(uint32_t ctx_index, ns_close_fn on_close, void* user) {
  close_slab(ctx_index, NS_CLOSE_COMM_END, on_close, user);
  progress_states[ctx_index] = 0;
  stopped_op_start[ctx_index] = 0;
  /* its net connections: the next communicator in this slab has its own */
  for (size_t pos = 0;;) {
    uint64_t key, val;
    if (!ns_idmap_next(&net_conns, &pos, &key, &val)) break;
    if (key >> 32 == (uint64_t)ctx_index + 1) {
      ns_idmap_del(&net_conns, key);
      pos = 0; /* removal moves entries: start over (rare, cold) */
    }
  }
  /* the communicator's handles are gone with it: forget its pinned ones */
  uintptr_t lo = (uintptr_t)ns_reg.base + (uintptr_t)ctx_index * ns_reg.slab_bytes, hi = lo + ns_reg.slab_bytes;
  for (size_t pos = 0;;) {
    uint64_t key, val;
    if (!ns_idmap_next(&pinned, &pos, &key, &val)) break;
    uintptr_t a = (uintptr_t)(key & NS_HANDLE_ADDR_MASK);
    if (a >= lo && a < hi) {
      ns_idmap_del(&pinned, key);
      pos = 0; /* removal moves entries: start over (rare, cold) */
    }
  }
  ns_slab_release(ctx_index);
}

void ns_recycle_close_all(unsigned reason, ns_close_fn on_close, void* user) {
  for (uint32_t k = 0; k < NS_MAX_SLABS; k++)
    if (ns_reg.slabs[k].nlive) close_slab(k, reason, on_close, user);
}

void ns_recycle_reset(void) {
  history_free(&api_hist);
  history_free(&proxy_hist);
  ns_idmap_free(&pinned);
  ns_idmap_free(&net_conns);
  memset(progress_states, 0, sizeof progress_states);
  memset(stopped_op_start, 0, sizeof stopped_op_start);
}
