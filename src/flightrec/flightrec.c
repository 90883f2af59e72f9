/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: records -> operations and their progress
 * (see src/flightrec/flightrec.h). The plugin's writer thread, or a
 * tool reading a trace; single-threaded.
 *
 * Each communicator keeps a ring of cfg.entries operations, in the order
 * they were first seen (their START, or a child that came first). An
 * operation is found by id through `ops`; a running child (ProxyOp,
 * ProxyStep, KernelCh) is the assembler's event, which names its operation
 * and channel, with the recorder's part of it (fr_child) saying where they
 * sit here. Per-channel detail exists while an operation is not done. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ncclscope/nccl_names.h"
#include "util/array.h"

const char* ns_fr_stage_name(int stage) {
  switch (stage) {
    case NS_FR_ENQUEUED: return "enqueued";
    case NS_FR_ON_PROXY: return "onProxy";
    case NS_FR_ON_GPU: return "onGpu";
    case NS_FR_DONE: return "done";
    default: return "unknown";
  }
}

ns_fr* ns_fr_create(const ns_fr_config* cfg) {
  ns_fr* fr = calloc(1, sizeof *fr);
  if (!fr) return NULL;
  fr->cfg = *cfg;
  fr->detail_full = fr->detail_prev = 1;
  if (fr->cfg.entries < 1) fr->cfg.entries = 1;
  uint64_t cap = 1;
  while (cap < fr->cfg.entries) cap <<= 1;
  fr->ring_mask = cap - 1;
  ns_idmap_init(&fr->comm_index);
  ns_idmap_init(&fr->ops);
  return fr;
}

static void comm_free(ns_fr* fr, fr_comm* c) {
  if (c->ring) {
    uint64_t from = c->head > fr->cfg.entries ? c->head - fr->cfg.entries : 0;
    for (uint64_t p = from; p < c->head; p++) {
      ns_fr_op* op = fr_at(fr, c, p);
      ns_idmap_del(&fr->ops, op->id);
      free(op->ch);
    }
    free(c->ring);
  }
  memset(c, 0, sizeof *c);
}

void ns_fr_destroy(ns_fr* fr) {
  if (!fr) return;
  for (size_t i = 0; i < fr->ncomms; i++) comm_free(fr, &fr->comms[i]);
  free(fr->comms);
  ns_idmap_free(&fr->comm_index);
  ns_idmap_free(&fr->ops);
  free(fr);
}

fr_comm* fr_comm_of(const ns_fr* fr, uint32_t comm) {
  uint64_t* at = comm ? ns_idmap_get(&fr->comm_index, comm) : NULL;
  return at ? &fr->comms[*at - 1] : NULL;
}

const char* fr_str(const ns_fr* fr, uint32_t id) {
  const char* s = id && fr->cfg.string ? fr->cfg.string(fr->cfg.string_user, id) : NULL;
  return s ? s : "";
}

void ns_fr_comm(ns_fr* fr, const ns_comm_info* ci) {
  if (!ci->comm || fr_comm_of(fr, ci->comm)) return;
  size_t idx = fr->ncomms;
  for (size_t i = 0; i < fr->ncomms; i++)
    if (!fr->comms[i].comm) {
      idx = i;
      break;
    }
  fr_comm* grown = ns_array_reach(fr->comms, &fr->capcomms, idx, sizeof *grown, 8);
  if (!grown) return;
  fr->comms = grown;
  fr_comm* c = &fr->comms[idx];
  memset(c, 0, sizeof *c);
  c->ring = calloc(fr->ring_mask + 1, sizeof *c->ring);
  int inserted;
  uint64_t* slot = c->ring ? ns_idmap_put(&fr->comm_index, ci->comm, &inserted) : NULL;
  if (!slot) {
    free(c->ring);
    c->ring = NULL;
    return;
  }
  *slot = idx + 1;
  if (idx == fr->ncomms) fr->ncomms++;
  c->comm = ci->comm;
  c->comm_id = ci->comm_id;
  c->rank = ci->rank;
  c->nranks = ci->nranks;
  if (ci->has_name) snprintf(c->name, sizeof c->name, "%.63s", ci->comm_name);
  c->abi = ci->abi_version;
  c->want_kch = (ci->event_mask & (1u << NS_EV_KERNEL_CH)) && (ci->abi_version == 0 || ci->abi_version >= 3);
  c->want_pop = (ci->event_mask & (1u << NS_EV_PROXY_OP)) != 0;
}

void ns_fr_comm_end(ns_fr* fr, uint32_t comm) {
  fr_comm* c = fr_comm_of(fr, comm);
  if (!c) return;
  ns_idmap_del(&fr->comm_index, comm);
  comm_free(fr, c);
}

/* ---- operations ---- */

static void op_release_detail(ns_fr_op* op) {
  free(op->ch);
  op->ch = NULL;
  op->nch = 0;
  op->ch_low = 0;
}

/* A started collective's seqNumber + 1 into last[its function] where it is more (fr_comm's posted, completed). */
static void note_seq(uint64_t* last, const ns_fr_op* op) {
  if (!op->started || op->type != NS_EV_COLL || op->func < 0 || op->func >= FR_SEQ_FUNCS) return;
  if (op->seq + 1 > last[op->func]) last[op->func] = op->seq + 1;
}

/* The operation at pos is done (how: 1 itself, 2 a later one finished);
 * so is every earlier one. */
static void op_done(ns_fr* fr, fr_comm* c, uint64_t pos, int how, uint64_t ts) {
  ns_fr_op* op = fr_at(fr, c, pos);
  if (op->done) return;
  op->done = (uint8_t)how;
  op->stage = NS_FR_DONE;
  op->t_done = ts;
  op_release_detail(op);
  note_seq(c->completed, op);
  if (pos < c->first_open) return;
  for (uint64_t p = c->first_open; p < pos; p++) {
    ns_fr_op* o = fr_at(fr, c, p);
    if (o->done) continue;
    o->done = 2;
    o->stage = NS_FR_DONE;
    o->t_done = ts;
    op_release_detail(o);
    note_seq(c->completed, o);
  }
  c->first_open = pos + 1;
  while (c->first_open < c->head && fr_at(fr, c, c->first_open)->done) c->first_open++;
}

/* Whether op's own events say it is done (flightrec.h). */
static int op_complete(const fr_comm* c, const ns_fr_op* op) {
  if (!op->started) return 0;
  if (!c->want_kch && !c->want_pop) return op->stopped;
  if (op->type == NS_EV_P2P && c->abi >= 4 && op->peer_or_root == c->rank && !op->proxy_ops && !op->kch)
    return op->stopped;
  if (c->want_kch && op->nchannels > 0 && op->kch >= op->nchannels && op->kch_done >= op->kch) return 1;
  return op->proxy_ops > 0 && op->proxy_ops_done >= op->proxy_ops;
}

void ns_fr_set_detail(ns_fr* fr, int full, uint64_t ts) {
  fr->detail_prev = fr->detail_full;
  fr->detail_full = full != 0;
  fr->detail_ts = ts;
  if (!full) fr->detail_dynamic = 1;
}

/* Whether a later operation of c than pos has a KernelCh: NCCL launches
 * in order, so one without any by then had none to show (its task read a
 * mask without detail around a change). */
static int later_has_kch(ns_fr* fr, const fr_comm* c, uint64_t pos) {
  for (uint64_t p = pos + 1; p < c->head; p++)
    if (fr_at(fr, c, p)->kch) return 1;
  return 0;
}

void ns_fr_settle(ns_fr* fr, uint64_t now) {
  for (size_t i = 0; i < fr->ncomms; i++) {
    fr_comm* c = &fr->comms[i];
    if (!c->ring || (!c->want_kch && !c->want_pop)) continue;
    while (c->first_open < c->head) {
      uint64_t pos = c->first_open;
      ns_fr_op* op = fr_at(fr, c, pos);
      uint64_t quiet_since = op->t_last > op->t_stop ? op->t_last : op->t_stop;
      if (op->done || !op->started || !op->stopped || op->kch || now < quiet_since + NS_FR_UNDETAILED_GRACE_NS) break;
      /* One with full detail but no child at all (no kernel work: NCCL gives
       * it none) waits, under full detail alone, for a later one to finish;
       * once the mask changes, the later ones may show no progress either. */
      int childless = !op->proxy_ops && !op->kch;
      if (op->detail && !(fr->detail_dynamic && childless)) {
        if (c->settle_pos == pos + 1 && c->settle_head == c->head) break; /* looked already: nothing new */
        if (!later_has_kch(fr, c, pos)) {
          c->settle_pos = pos + 1;
          c->settle_head = c->head;
          break;
        }
      }
      op_done(fr, c, pos, 1, op->t_stop);
    }
  }
}

/* A new operation at the head of c's ring (the oldest kept is pushed out). */
static ns_fr_op* op_new(ns_fr* fr, fr_comm* c, size_t comm_idx, uint64_t id, uint64_t ts) {
  uint64_t pos = c->head;
  if (pos >= fr->cfg.entries) { /* cfg.entries kept: the oldest goes */
    ns_fr_op* old = fr_at(fr, c, pos - fr->cfg.entries);
    if (!old->done) fr->st.ops_evicted++;
    ns_idmap_del(&fr->ops, old->id);
    op_release_detail(old);
    old->id = 0; /* no child finds it through a remembered position */
  }
  ns_fr_op* op = fr_at(fr, c, pos);
  int inserted;
  uint64_t* slot = ns_idmap_put(&fr->ops, id, &inserted);
  if (!slot) return NULL;
  memset(op, 0, sizeof *op);
  op->id = id;
  op->t_start = ts;
  op->t_last = ts;
  op->peer_or_root = -1;
  op->func = NS_FUNC_UNKNOWN;
  *slot = ((uint64_t)comm_idx << FR_POS_BITS | pos) + 1;
  c->head++;
  if (c->first_open + fr->cfg.entries < c->head) c->first_open = c->head - fr->cfg.entries;
  while (c->first_open < c->head - 1 && fr_at(fr, c, c->first_open)->done) c->first_open++;
  fr->st.ops++;
  return op;
}

/* The operation with that id at `at` (a value `ops` held for it), with
 * its communicator and position; NULL when that ring slot has moved on to
 * another operation (or its communicator ended). */
static ns_fr_op* op_at(ns_fr* fr, uint64_t id, uint64_t at, fr_comm** cout, uint64_t* pos) {
  size_t ci = fr_value_comm(at);
  uint64_t p = fr_value_pos(at);
  if (ci >= fr->ncomms || !fr->comms[ci].ring) return NULL;
  fr_comm* c = &fr->comms[ci];
  ns_fr_op* op = fr_at(fr, c, p);
  if (op->id != id) return NULL;
  *pos = p;
  *cout = c;
  return op;
}

/* The operation with that id (created for a child that comes before its
 * START when `create`), with its communicator, position and place in `ops`
 * (*at, for op_at). */
static ns_fr_op* op_find(ns_fr* fr, uint64_t id, uint32_t comm, int create, uint64_t ts, fr_comm** cout,
                         uint64_t* pos, uint64_t* at) {
  uint64_t* known = ns_idmap_get(&fr->ops, id);
  if (known) {
    *at = *known;
    return op_at(fr, id, *known, cout, pos);
  }
  fr_comm* c = create ? fr_comm_of(fr, comm) : NULL;
  if (!c) return NULL;
  *pos = c->head;
  *cout = c;
  *at = ((uint64_t)(c - fr->comms) << FR_POS_BITS | c->head) + 1;
  return op_new(fr, c, (size_t)(c - fr->comms), id, ts);
}

/* What an operation's START says about it. */
static void op_take_start(ns_fr* fr, fr_comm* c, ns_fr_op* op, const ns_record* r) {
  op->started = 1;
  if (r->ts < fr->detail_ts) op->detail = (uint8_t)fr->detail_prev;
  else op->detail = fr->detail_full && (fr->detail_prev || r->ts >= fr->detail_ts + NS_FR_DETAIL_SETTLE_NS);
  op->type = r->type;
  if (op->stage < NS_FR_ENQUEUED) op->stage = NS_FR_ENQUEUED;
  op->t_start = r->ts;
  int coll = r->type == NS_EV_COLL;
  op->seq = coll ? r->num[NS_COLL_SEQ] : 0;
  op->count = r->num[coll ? NS_COLL_COUNT : NS_P2P_COUNT];
  op->nchannels = (uint32_t)r->num[coll ? NS_COLL_CHANNELS : NS_P2P_CHANNELS];
  op->peer_or_root = (int64_t)r->num[coll ? NS_COLL_ROOT : NS_P2P_PEER];
  op->func_str = r->str[coll ? NS_COLL_FUNC : NS_P2P_FUNC];
  op->dtype_str = r->str[coll ? NS_COLL_DTYPE : NS_P2P_DTYPE];
  op->algo_str = coll ? r->str[NS_COLL_ALGO] : 0;
  op->proto_str = coll ? r->str[NS_COLL_PROTO] : 0;
  int func = ns_func_code_memo(&fr->memo_func, fr_str(fr, op->func_str));
  op->func = (int8_t)(func >= 0 && func < FR_SEQ_FUNCS ? func : NS_FUNC_UNKNOWN);
  unsigned ts = ns_dtype_size_memo(&fr->memo_dtype, fr_str(fr, op->dtype_str));
  op->bytes = ts ? ns_coll_bytes(func, op->count, ts, c->nranks) : 0;
  note_seq(c->posted, op);
  if (op->done) note_seq(c->completed, op); /* done by a later operation before its START came */
}

/* An operation's START (the first one only; it creates the operation when
 * no child came before it) or STOP (start 0: the first one, of a known
 * operation). */
static void op_start_stop(ns_fr* fr, const ns_event* e, int start) {
  uint64_t ts = start ? e->start.ts : e->stop_ts;
  fr_comm* c;
  uint64_t pos, at;
  ns_fr_op* op = op_find(fr, e->id, e->start.comm, start, ts, &c, &pos, &at);
  if (!op || (start ? op->started : op->stopped)) return;
  if (start) {
    op_take_start(fr, c, op, &e->start);
  } else {
    op->stopped = 1;
    op->t_stop = ts;
  }
  if (!op->done && op_complete(c, op)) op_done(fr, c, pos, 1, ts);
}

/* ---- children ----
 * The assembler decides which operation and channel a ProxyOp, ProxyStep or
 * KernelCh works for (e->op, e->channel); the recorder keeps, in its part
 * of the event, where that operation and channel sit in its own tables and
 * the direction. */

static int child_type(unsigned t) { return t == NS_EV_PROXY_OP || t == NS_EV_PROXY_STEP || t == NS_EV_KERNEL_CH; }

static fr_child* child_of(const ns_fr* fr, const ns_event* e) { return ns_event_area(e, fr->area); }

/* The channel record of op (made on first use); NULL once op is done.
 * *at: where to look first (a child's chan_at), then where it is. */
static ns_fr_chan* chan_of(ns_fr_op* op, int32_t channel, uint32_t* at) {
  if (op->done) return NULL;
  if (*at < op->nch && op->ch[*at].channel == channel) return &op->ch[*at];
  int low = channel >= 0 && channel < 64;
  /* A channel below 64 that is not in ch yet needs no search (each op's
   * KernelCh and ProxyOps bring their channels one by one). */
  if (!low || (op->ch_low >> channel & 1))
    for (uint32_t i = 0; i < op->nch; i++)
      if (op->ch[i].channel == channel) {
        *at = i;
        return &op->ch[i];
      }
  /* Room: 8 channels, then doubling (a 32-channel op reallocates twice, not 4 times). */
  if (op->nch == 0 || (op->nch >= 8 && (op->nch & (op->nch - 1)) == 0)) {
    ns_fr_chan* n = realloc(op->ch, (op->nch ? op->nch * 2 : 8) * sizeof *n);
    if (!n) return NULL;
    op->ch = n;
  }
  *at = op->nch;
  if (low) op->ch_low |= 1ull << channel;
  ns_fr_chan* ch = &op->ch[op->nch++];
  memset(ch, 0, sizeof *ch);
  ch->channel = channel;
  for (int d = 0; d < 2; d++) {
    ch->dir[d].peer = -1;
    ch->dir[d].last_step = -1;
    ch->dir[d].last_state = -1;
  }
  return ch;
}

static void child_start(ns_fr* fr, const ns_event* e) {
  const ns_record* r = &e->start;
  if (r->flags & (NS_RF_PXN | NS_RF_PARENT_RAW)) return; /* another process's operation */
  fr_child* ch = child_of(fr, e);
  fr_comm* c;
  uint64_t pos, at = 0;
  if (r->type == NS_EV_PROXY_STEP) {
    const ns_event* parent = ns_asm_find(fr->as, r->parent);
    const fr_child* pc = parent && parent->started && parent->type == NS_EV_PROXY_OP ? child_of(fr, parent) : NULL;
    if (!pc || !pc->op_at) return; /* a ProxyOp the recorder does not follow */
    at = pc->op_at;
    ch->dir = pc->dir;
    ch->step = (int64_t)r->num[NS_PROXY_STEP_STEP];
  } else if (r->type == NS_EV_PROXY_OP) {
    ch->dir = r->num[NS_PROXY_OP_IS_SEND] ? 1 : 0;
  }
  if (!e->op) return;
  ns_fr_op* op = at ? op_at(fr, e->op, at, &c, &pos) : NULL;
  if (!op) op = op_find(fr, e->op, r->comm, 1, r->ts, &c, &pos, &at);
  if (!op) return;
  ch->op_at = at;
  fr->children_live++;
  op->t_last = r->ts;
  /* Channels usually arrive in order (NCCL starts an op's KernelCh and
   * ProxyOps channel by channel), so channel c usually sits at c. */
  ch->chan_at = (uint32_t)e->channel;
  ns_fr_chan* pc = chan_of(op, e->channel, &ch->chan_at);
  uint8_t dir = ch->dir;
  if (r->type == NS_EV_KERNEL_CH) {
    op->kch++;
    if (!op->t_gpu) op->t_gpu = r->ts;
    if (!op->done) op->stage = NS_FR_ON_GPU;
    if (pc) pc->kch |= NS_FR_KCH_STARTED, pc->kch_ts = r->ts;
  } else if (r->type == NS_EV_PROXY_OP) {
    op->proxy_ops++;
    if (!op->t_proxy) op->t_proxy = r->ts;
    if (!op->done && op->stage < NS_FR_ON_PROXY) op->stage = NS_FR_ON_PROXY;
    if (pc) {
      pc->dir[dir].ops++;
      pc->dir[dir].peer = (int32_t)(int64_t)r->num[NS_PROXY_OP_PEER];
      pc->dir[dir].last_ts = r->ts;
    }
  } else if (pc) {
    pc->dir[dir].steps++;
    pc->dir[dir].last_step = ch->step;
    pc->dir[dir].last_state = -1;
    pc->dir[dir].last_ts = r->ts;
  }
}

/* A child's STATE (how 0, state), STOP (how 1) or the plugin's closing of
 * it (how 2, reason), at ts. A stop or a close ends what the recorder
 * follows of it. */
static void child_event(ns_fr* fr, const ns_event* e, uint64_t ts, int how, int32_t state, unsigned reason) {
  fr_child* ch = child_of(fr, e);
  if (!ch->op_at) return;
  fr_comm* c;
  uint64_t pos;
  ns_fr_op* op = op_at(fr, e->op, ch->op_at, &c, &pos);
  if (how) {
    ch->op_at = 0;
    fr->children_live--;
  }
  if (!op) return;
  op->t_last = ts;
  ns_fr_chan* pc = chan_of(op, e->channel, &ch->chan_at);
  ns_fr_dir* d = pc ? &pc->dir[ch->dir] : NULL;
  if (!how) { /* a state */
    if (e->type == NS_EV_PROXY_STEP && d) {
      d->last_state = state;
      d->last_step = ch->step;
    }
    if (e->type != NS_EV_KERNEL_CH && d) d->last_ts = ts;
    return;
  }
  int stopped = how == 1 || (e->type == NS_EV_PROXY_OP && reason == NS_CLOSE_NEVER_STOPPED);
  if (e->type == NS_EV_KERNEL_CH) {
    if (how == 1) op->kch_done++;
    else op->closed_children++;
    if (pc) pc->kch |= how == 1 ? NS_FR_KCH_STOPPED : NS_FR_KCH_CLOSED, pc->kch_ts = ts;
  } else if (e->type == NS_EV_PROXY_OP) {
    if (stopped) op->proxy_ops_done++;
    else op->closed_children++;
    if (d) {
      if (stopped) d->ops_done++;
      else d->ops_closed++;
      d->last_ts = ts;
    }
  } else if (d && how == 1) {
    d->steps_done++;
    d->last_step = ch->step;
    d->last_ts = ts;
  }
  if (!op->done && op_complete(c, op)) op_done(fr, c, pos, 1, ts);
}

/* ---- the assembler's callbacks ---- */

/* An operation's or a child's START (start 1) or STOP (0), as the assembler applies it. */
static void start_or_stop(ns_fr* fr, const ns_event* e, int start) {
  fr->st.records++;
  if (e->type == NS_EV_COLL || e->type == NS_EV_P2P)
    op_start_stop(fr, e, start);
  else if (!child_type(e->type))
    return;
  else if (start)
    child_start(fr, e);
  else
    child_event(fr, e, e->stop_ts, 1, 0, 0);
}

static void on_started(void* user, ns_event* e) { start_or_stop(user, e, 1); }

static void on_stopped(void* user, ns_event* e) { start_or_stop(user, e, 0); }

static void on_state(void* user, ns_event* e, const ns_record* r) {
  ns_fr* fr = user;
  fr->st.records++;
  if (e && child_type(e->type) && r->state != NS_ST_REPEATED) child_event(fr, e, r->ts, 0, r->state, 0);
}

/* A child released running: closed by the plugin (its CLOSED record), or
 * given up by the assembler (its stop lost: the recorder forgets it). */
static void on_done(void* user, ns_event* e) {
  ns_fr* fr = user;
  if (!e->started || e->stopped || !child_type(e->type) || !child_of(fr, e)->op_at) return;
  if (e->close_reason) {
    fr->st.records++;
    child_event(fr, e, e->close_ts, 2, 0, e->close_reason);
  } else {
    child_of(fr, e)->op_at = 0;
    fr->children_live--;
    fr->st.children_released++;
  }
}

size_t ns_fr_event_bytes(void) { return sizeof(fr_child); }

void ns_fr_attach(ns_fr* fr, const ns_asm* as, size_t area, ns_asm_sink* sink) {
  fr->as = as;
  fr->area = area;
  *sink = (ns_asm_sink){.user = fr, .started = on_started, .state = on_state, .stopped = on_stopped, .done = on_done};
}

void ns_fr_get_stats(const ns_fr* fr, ns_fr_stats* out) {
  *out = fr->st;
  out->children_live = fr->children_live;
  out->comms = fr->comm_index.len;
  size_t bytes = 0;
  for (size_t i = 0; i < fr->ncomms; i++) {
    const fr_comm* c = &fr->comms[i];
    if (!c->comm) continue;
    bytes += (fr->ring_mask + 1) * sizeof(ns_fr_op);
    for (uint64_t p = c->first_open; p < c->head; p++) bytes += fr_at(fr, c, p)->nch * sizeof(ns_fr_chan);
  }
  out->detail_bytes = bytes;
}
