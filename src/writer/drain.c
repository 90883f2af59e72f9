/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: draining the rings (drain.h). */
#include "writer/drain.h"

#include <stdlib.h>
#include <string.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "session/session.h"
#include "writer/analysis_feed.h"
#include "writer/closed_events.h"
#include "writer/lifecycle_queue.h"
#include "writer/open_events.h"
#include "writer/restarts.h"
#include "writer/writer_state.h"

static struct {
  ns_strtab* strs;
  uint32_t* ring_serial_seen; /* by ring index: the owner whose THREAD block was written */
  uint8_t* ring_shedding;     /* by ring index: its ProxySteps skip the analysis (shedding_now) */
  int shedding;               /* the ring being drained sheds: its ProxySteps that start now skip it */
  /* the ring being drained: its blocks, begun on demand */
  ns_buf ev, sb;
  ns_event_encoder enc;
  ns_strings_encoder senc;
  int ev_open, st_open;
  uint32_t ev_tid, ev_ring; /* the thread and ring of the block D.ev holds */
} D;

int ns_drain_open(void) {
  D.strs = ns_strtab_new();
  D.ring_serial_seen = calloc(ns_ring_pool_count() + 1, sizeof *D.ring_serial_seen);
  D.ring_shedding = calloc(ns_ring_pool_count() + 1, 1);
  if (D.strs && D.ring_serial_seen && D.ring_shedding) return 0;
  ns_drain_close();
  return -1;
}

void ns_drain_close(void) {
  ns_buf_free(&D.ev);
  ns_buf_free(&D.sb);
  ns_strtab_free(D.strs);
  free(D.ring_serial_seen);
  free(D.ring_shedding);
  memset(&D, 0, sizeof D);
}

const ns_strtab* ns_drain_strings(void) { return D.strs; }

/* An API event of a graph capture: its handle comes back as a parent at
 * every replay. */
static int graph_captured_api(const ns_record* rec) {
  switch (rec->type) {
    case NS_EV_GROUP_API: return rec->num[NS_GROUP_API_GRAPH_CAPTURED] != 0;
    case NS_EV_COLL_API: return rec->num[NS_COLL_API_GRAPH_CAPTURED] != 0;
    case NS_EV_P2P_API: return rec->num[NS_P2P_API_GRAPH_CAPTURED] != 0;
    default: return 0;
  }
}

/* One record into the block of the ring being drained (opened on demand),
 * the flight recorder and, unless its event skips it (shedding_now), the
 * analysis. */
static void put_record(const ns_record* rec, int analysed) {
  if (!D.ev_open) {
    (ns_sess.abi_version >= 7 ? ns_events13_begin : ns_events_begin)(&D.enc, &D.ev, D.ev_tid, D.ev_ring, rec->ts,
                                                                     rec->id);
    D.ev_open = 1;
  }
  ns_events_put(&D.enc, rec);
  ns_feed_record(rec, analysed);
}

/* An NS_ST_REPEATED record: the event's previous state came `n` more times. */
static ns_record repeated(const ns_record* at, uint64_t n) {
  ns_record r = ns_record_make(NS_REC_STATE, at->type, at->comm, at->ts, at->id, 0);
  r.tid = at->tid;
  r.state = NS_ST_REPEATED;
  r.flags = NS_RF_HAS_ARG;
  r.arg = n;
  ns_ws.state_repeats += n;
  return r;
}

/* The origin pid of PXN event id: held open or remembered by the writer, or
 * still in a ring it has not drained (a NetPlugin event's helper thread may
 * be drained before the proxy thread that started its ProxyStep). Its ring
 * is the one whose serial the id carries; a PXN child's own START names its
 * parent in turn (depth: NetPlugin, ProxyStep, ProxyOp). */
static uint32_t origin_pid_of(uint64_t id, int depth) {
  uint32_t pid = ns_open_origin_pid(id);
  if (pid || depth > 2) return pid;
  for (uint32_t i = 0; i < ns_ring_pool_count(); i++) {
    ns_ring* r = ns_ring_pool_get(i);
    /* has_data's acquire of head (R2) first: the serial was written before the ring's first publish */
    if (!ns_ring_has_data(r) || (r->serial & 0xFFFFu) != ((id >> 40) & 0xFFFFu)) continue;
    const uint64_t* e = ns_ring_find_start(r, id);
    if (!e || !(NS_ENT_FLAGS(e[NS_ENT_W0]) & NS_RF_PXN)) continue;
    pid = NS_ENT_AUX(e[NS_ENT_COMM_AUX]);
    if (!pid && !(NS_ENT_FLAGS(e[NS_ENT_W0]) & NS_RF_PARENT_RAW) && e[NS_ENT_START_PARENT])
      pid = origin_pid_of(e[NS_ENT_START_PARENT], depth + 1);
    return pid;
  }
  return 0;
}

/* A START: a ProxyStep started again closes the earlier one; a child of a
 * PXN event takes its parent's origin pid; a ProxyOp's connection in
 * *conn_out, for hold_started. Returns whether its records go to the
 * analysis (not a ProxyStep while its ring sheds). */
static int on_start_entry(ns_record* rec, unsigned flags, unsigned ctxi, uint32_t* conn_out) {
  rec->flags = (uint16_t)flags;
  unsigned type = rec->type;
  int analysed = !(type == NS_EV_PROXY_STEP && D.shedding);
  ns_ws.events[type]++;
  ns_ws.steps_unanalysed += !analysed;
  if (ctxi < NS_MAX_CONTEXTS) ns_ws.ctx_events[ctxi][type]++;
  if (flags & NS_RF_PXN) ns_ws.pxn_events++;
  if (flags & NS_RF_PARENT_LOST) ns_ws.parent_lost++;
  if ((flags & NS_RF_PXN) && !(flags & NS_RF_PARENT_RAW) && !rec->origin_pid && rec->parent)
    rec->origin_pid = origin_pid_of(rec->parent, 0);
  uint32_t conn = type == NS_EV_PROXY_OP && !(flags & NS_RF_PXN)
                      ? ns_open_conn(rec->num[NS_PROXY_OP_CHANNEL], (int64_t)rec->num[NS_PROXY_OP_PEER],
                                     rec->num[NS_PROXY_OP_IS_SEND] != 0)
                      : 0;
  if (type == NS_EV_PROXY_STEP) {
    uint64_t old = ns_restarts_start(rec->parent, rec->num[NS_PROXY_STEP_STEP], rec->id, ns_open_is_open);
    uint32_t old_type;
    if (old && ns_open_close(old, &old_type)) {
      ns_record c = ns_closed_record(old, NS_EV_PROXY_STEP, ctxi, NS_CLOSE_RESTARTED, rec->ts, rec->tid);
      put_record(&c, !(old_type & NS_OPEN_UNANALYSED));
    }
  }
  *conn_out = conn;
  return analysed;
}

/* A START the tracker took (put_record): the writer holds its event open. */
static void hold_started(const ns_record* rec, int analysed, unsigned ctxi, uint32_t conn) {
  ns_open_started(rec->id, rec->type | (analysed ? 0 : NS_OPEN_UNANALYSED), ctxi < NS_MAX_CONTEXTS ? ctxi : NS_OPEN_PXN,
                  rec->ts, graph_captured_api(rec), conn, rec->comm, rec->origin_pid);
}

/* A STOP, STATE or REPEAT: the event's communicator, from its START. One
 * the writer saw end is not recorded: a second stop, a state after the
 * stop, a call after the writer closed it (counted). 0: drop the entry;
 * LATER_ANALYSED: record it; LATER_UNANALYSED: record it, its event skips
 * the analysis (shedding_now). */
enum { LATER_DROP, LATER_ANALYSED, LATER_UNANALYSED };
__attribute__((always_inline)) static inline int on_later_entry(ns_record* rec, unsigned kind) {
  ns_open_event* o = ns_open_find(rec->id);
  if (o) {
    int how = o->type & NS_OPEN_UNANALYSED ? LATER_UNANALYSED : LATER_ANALYSED;
    rec->comm = o->comm;
    if (kind == NS_ENT_STATE) {
      o->has_state = 1;
      if (rec->type == NS_EV_PROXY_OP && rec->state == NS_ST_PROXY_OP_IN_PROGRESS)
        ns_open_note_progress_states(o->ctx);
    } else if (kind == NS_ENT_STOP) {
      ns_open_stopped(o); /* o ends here */
    }
    return how;
  }
  if (kind == NS_ENT_REPEAT) return LATER_ANALYSED; /* counts of states recorded before the event ended */
  int ended = ns_open_ended(rec->id);
  if (ended == NS_OPEN_UNKNOWN) return LATER_ANALYSED; /* its START is in a ring not drained yet, or was forgotten */
  _Atomic uint64_t* counter = ended == NS_OPEN_CLOSED ? &ns_cnt.stale_handles
                              : kind == NS_ENT_STOP  ? &ns_cnt.double_stops
                                                     : &ns_cnt.late_states;
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  return LATER_DROP;
}

/* Zeroes a record in pieces of at most 64 bytes, which GCC writes as vector
 * stores: a memset of the whole 160 bytes (or `= {0}`) is a `rep stos`,
 * whose start-up was 6 % of the writer's time at 2 M records/s (perf). */
static inline void record_clear(ns_record* r) {
  _Static_assert(sizeof *r > 128 && sizeof *r <= 192, "record_clear: three pieces");
  memset(r, 0, 64);
  memset((char*)r + 64, 0, 64);
  memset((char*)r + 128, 0, sizeof *r - 128);
}

static void on_entry(void* user, ns_ring* r, const uint64_t* e, uint32_t nwords) {
  (void)user;
  uint64_t w0 = e[NS_ENT_W0];
  unsigned kind = NS_ENT_KIND(w0), type = NS_ENT_TYPE(w0), flags = NS_ENT_FLAGS(w0);
  unsigned ctxi = NS_ENT_CTX(w0);
  if (type >= NS_EV_COUNT) return;
  ns_record rec;
  record_clear(&rec);
  rec.kind = (uint8_t)kind;
  rec.type = (uint8_t)type;
  rec.tid = r->tid;
  rec.ts = ns_clock_to_ns(&ns_sess.clock, e[NS_ENT_TICK]);
  rec.id = e[NS_ENT_ID];
  uint32_t aux = NS_ENT_AUX(e[NS_ENT_COMM_AUX]);
  rec.comm = NS_ENT_COMM(e[NS_ENT_COMM_AUX]);
  if (ctxi < NS_MAX_CONTEXTS && rec.comm && ns_ws.ctx_serial[ctxi] != rec.comm) ns_lq_write_inits_now();
  uint64_t repeats = 0;
  int analysed;
  if (kind == NS_ENT_START) {
    const ns_type_layout* lay = &ns_type_layouts[type];
    if (nwords < NS_ENT_START_NUMS + (unsigned)lay->nums) return;
    rec.origin_pid = aux;
    rec.parent = e[NS_ENT_START_PARENT];
    for (unsigned i = 0; i < lay->nums; i++) rec.num[i] = e[NS_ENT_START_NUMS + i];
    const uint8_t* sp = (const uint8_t*)&e[NS_ENT_START_NUMS + lay->nums];
    const uint8_t* send = (const uint8_t*)&e[nwords];
    for (unsigned i = 0; i < lay->strs && sp < send; i++) {
      uint8_t len = *sp++;
      if (len == NS_STR_NULL) continue;
      if (len > send - sp) break;
      rec.str[i] = ns_strtab_intern(D.strs, (const char*)sp, len, &D.senc, &D.sb, &D.st_open);
      sp += len;
    }
    uint32_t conn;
    analysed = on_start_entry(&rec, flags, ctxi, &conn);
    put_record(&rec, analysed);
    hold_started(&rec, analysed, ctxi, conn);
    return;
  } else if (kind == NS_ENT_STATE) {
    if (nwords < NS_ENT_STATE_WORDS) return;
    rec.flags = (uint16_t)(flags & NS_RF_HAS_ARG);
    rec.state = (int32_t)NS_ENT_AUX_STATE(aux);
    repeats = NS_ENT_AUX_REPEATS(aux);
    rec.arg = e[NS_ENT_STATE_ARG];
    int how = on_later_entry(&rec, kind);
    if (how == LATER_DROP) return;
    analysed = how == LATER_ANALYSED;
  } else if (kind == NS_ENT_STOP) {
    if (nwords < NS_ENT_STOP_WORDS) return;
    repeats = aux;
    int how = on_later_entry(&rec, kind);
    if (how == LATER_DROP) return;
    analysed = how == LATER_ANALYSED;
    if (type == NS_EV_PROXY_OP) ns_restarts_parent_stopped(rec.id);
  } else if (kind == NS_ENT_REPEAT) {
    if (nwords < NS_ENT_REPEAT_WORDS) return;
    int how = on_later_entry(&rec, kind);
    ns_record rep = repeated(&rec, aux);
    put_record(&rep, how == LATER_ANALYSED);
    return;
  } else {
    return;
  }
  if (repeats) {
    ns_record rep = repeated(&rec, repeats);
    put_record(&rep, analysed);
  }
  put_record(&rec, analysed);
}

/* Whether ring i sheds at this drain, from how full it is. The writer
 * falls behind when every record goes through the analysis (docs/
 * performance.md section 16); a full ring then drops events from the
 * trace. Before that, from NCCLSCOPE_SHED_FILL percent full until it is
 * back under half of that, the ProxySteps that start in it are recorded
 * but skip the analysis (about 20 % of the writer's instructions per
 * step), each counted (stepsNotAnalysed). A step is one or the other for
 * all its records: the mark is on its tracker entry (tracker.h). The
 * tracker and the flight recorder still see every record: a hang's last
 * steps are exact. */
static int shedding_now(uint32_t i, unsigned fill) {
  unsigned on = ns_sess.cfg.shed_fill;
  if (!on || !ns_feed_enabled()) return 0; /* without the analysis there is nothing to shed */
  D.ring_shedding[i] = fill >= on || (D.ring_shedding[i] && fill >= (on + 1) / 2);
  return D.ring_shedding[i];
}

/* Drains ring i; returns how full it was, in percent (0: empty). */
static unsigned drain_ring(ns_ring* r, uint32_t i) {
  /* R5: acquire pairs with the dying thread's release of DEAD: everything it
   * published is visible to the drain below. */
  uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st != NS_RING_FREE) ns_ring_prefault(r);
  unsigned fill = 0;
  if (ns_ring_has_data(r)) {
    fill = ns_ring_fill_percent(r);
    D.shedding = shedding_now(i, fill);
    if (D.ring_serial_seen && D.ring_serial_seen[i] != r->serial) {
      D.ring_serial_seen[i] = r->serial;
      size_t at = ns_block_begin(&ns_ws.out);
      ns_props_u64(&ns_ws.out, NS_P_TID, r->tid);
      ns_props_u64(&ns_ws.out, NS_P_RING, r->serial);
      ns_props_str(&ns_ws.out, NS_P_NAME, r->name, strnlen(r->name, sizeof r->name));
      ns_block_end(&ns_ws.out, at, NS_BLOCK_THREAD, ns_ws.seq++);
    }
    ns_buf_reset(&D.ev);
    ns_buf_reset(&D.sb);
    D.ev_open = D.st_open = 0;
    D.ev_tid = r->tid;
    D.ev_ring = r->serial;
    ns_ring_drain(r, on_entry, NULL);
    if (D.st_open) {
      ns_strings_end(&D.senc, ns_ws.seq++);
      ns_buf_put(&ns_ws.out, D.sb.data, D.sb.len);
    }
    if (D.ev_open) {
      ns_events_end(&D.enc, ns_ws.seq++);
      ns_buf_put(&ns_ws.out, D.ev.data, D.ev.len);
    }
  }
  if (st == NS_RING_DEAD) {
    /* R5: release: our reads of its words happen before a new owner writes. */
    atomic_store_explicit(&r->state, NS_RING_FREE, memory_order_release);
  }
  return fill;
}

unsigned ns_drain_all(void) {
  unsigned max_fill = 0;
  uint32_t nrings = ns_ring_pool_count();
  for (uint32_t i = 0; i < nrings; i++) {
    unsigned fill = drain_ring(ns_ring_pool_get(i), i);
    if (fill > max_fill) max_fill = fill;
  }
  return max_fill;
}
