/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: records -> operations and their progress
 * (see src/flightrec/flightrec.h). The plugin's writer thread, or a
 * tool reading a trace; single-threaded.
 *
 * Each communicator keeps a ring of cfg.entries operations, in the order
 * they were first seen (their START, or a child that came first). An
 * operation is found by id through `ops`; a running child (ProxyOp,
 * ProxyStep, KernelCh) through `children`, which says which operation,
 * channel and direction it works for: STOP and STATE records carry only
 * their own id. Per-channel detail exists while an operation is not done. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ncclscope/nccl_names.h"
#include "util/array.h"

#define FR_DEFAULT_CHILDREN (1u << 20)
#define FR_SWEEP_NS 1000000000ull

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
  if (!fr->cfg.max_children) fr->cfg.max_children = FR_DEFAULT_CHILDREN;
  uint64_t cap = 1;
  while (cap < fr->cfg.entries) cap <<= 1;
  fr->ring_mask = cap - 1;
  ns_idmap_init(&fr->comm_index);
  ns_idmap_init(&fr->ops);
  ns_idmap_init(&fr->children);
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
  free(fr->pool);
  ns_idmap_free(&fr->comm_index);
  ns_idmap_free(&fr->ops);
  ns_idmap_free(&fr->children);
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
 * no child came before it) or STOP (the first one, of a known operation). */
static void op_start_stop(ns_fr* fr, const ns_record* r) {
  int start = r->kind == NS_REC_START;
  fr_comm* c;
  uint64_t pos, at;
  ns_fr_op* op = op_find(fr, r->id, r->comm, start, r->ts, &c, &pos, &at);
  if (!op || (start ? op->started : op->stopped)) return;
  if (start) {
    op_take_start(fr, c, op, r);
  } else {
    op->stopped = 1;
    op->t_stop = r->ts;
  }
  if (!op->done && op_complete(c, op)) op_done(fr, c, pos, 1, r->ts);
}

/* ---- children ---- */

/* A child lives in `recent`, the slot of its id, until a newer child takes
 * that slot, and in `children` after that (ns_idmap_home_*): a ProxyStep,
 * started, given a state or two and stopped within a few hundred children,
 * is never hashed in or out of the map. */
static fr_child* child_get(const ns_fr* fr, uint64_t id) {
  uint64_t at = ns_idmap_home_get(&fr->recent, &fr->children, id);
  return at ? &fr->pool[at - 1] : NULL;
}

static fr_child* child_add(ns_fr* fr, uint64_t id) {
  fr_child* dup = child_get(fr, id);
  if (dup) return dup; /* a duplicate START: keep the first */
  if (!fr->free_head) {
    if (fr->pool_cap >= fr->cfg.max_children) return NULL;
    size_t nc = fr->pool_cap ? fr->pool_cap * 2 : 1024;
    if (nc > fr->cfg.max_children) nc = fr->cfg.max_children;
    fr_child* np = realloc(fr->pool, nc * sizeof *np);
    if (!np) return NULL;
    memset(np + fr->pool_cap, 0, (nc - fr->pool_cap) * sizeof *np);
    for (size_t i = nc; i-- > fr->pool_cap;) {
      np[i].next_free = fr->free_head;
      fr->free_head = (uint32_t)i + 1;
    }
    fr->pool = np;
    fr->pool_cap = nc;
  }
  uint32_t i = fr->free_head - 1;
  if (ns_idmap_home_put(&fr->recent, &fr->children, id, (uint64_t)i + 1) != 0) return NULL;
  fr_child* ch = &fr->pool[i];
  fr->free_head = ch->next_free;
  memset(ch, 0, sizeof *ch);
  ch->id = id;
  fr->pool_used++;
  return ch;
}

static void child_del(ns_fr* fr, fr_child* ch) {
  ns_idmap_home_del(&fr->recent, &fr->children, ch->id);
  uint32_t i = (uint32_t)(ch - fr->pool);
  memset(ch, 0, sizeof *ch);
  ch->next_free = fr->free_head;
  fr->free_head = i + 1;
  fr->pool_used--;
}

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

static void child_start(ns_fr* fr, const ns_record* r) {
  if (r->flags & (NS_RF_PXN | NS_RF_PARENT_RAW)) return; /* another process's operation */
  fr_comm* c;
  uint64_t pos;
  uint64_t op_id = r->parent, at = 0;
  int32_t channel = -1;
  int64_t step = -1;
  uint8_t dir = 0;
  if (r->type == NS_EV_PROXY_STEP) {
    const fr_child* parent = child_get(fr, r->parent);
    if (!parent || parent->type != NS_EV_PROXY_OP) return;
    op_id = parent->op;
    at = parent->op_at;
    channel = parent->channel;
    dir = parent->dir;
    step = (int64_t)r->num[NS_PROXY_STEP_STEP];
  } else if (r->type == NS_EV_PROXY_OP) {
    channel = (int32_t)r->num[NS_PROXY_OP_CHANNEL];
    dir = r->num[NS_PROXY_OP_IS_SEND] ? 1 : 0;
  } else {
    channel = (int32_t)r->num[NS_KERNEL_CH_CHANNEL];
  }
  if (!op_id) return;
  ns_fr_op* op = at ? op_at(fr, op_id, at, &c, &pos) : NULL;
  if (!op) op = op_find(fr, op_id, r->comm, 1, r->ts, &c, &pos, &at);
  if (!op) return;
  fr_child* ch = child_add(fr, r->id);
  if (!ch) {
    fr->st.children_untracked++;
    return;
  }
  ch->op = op_id;
  ch->op_at = at;
  ch->since = r->ts;
  ch->type = r->type;
  ch->channel = channel;
  ch->dir = dir;
  ch->step = step;
  op->t_last = r->ts;
  /* Channels usually arrive in order (NCCL starts an op's KernelCh and
   * ProxyOps channel by channel), so channel c usually sits at c. */
  ch->chan_at = (uint32_t)channel;
  ns_fr_chan* pc = chan_of(op, channel, &ch->chan_at);
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
    pc->dir[dir].last_step = step;
    pc->dir[dir].last_state = -1;
    pc->dir[dir].last_ts = r->ts;
  }
}

/* A child's STATE, STOP (how 1) or CLOSED record (how 2, reason). */
static void child_event(ns_fr* fr, const ns_record* r, int how, unsigned reason) {
  fr_child* ch = child_get(fr, r->id);
  if (!ch) return;
  fr_comm* c;
  uint64_t pos;
  ns_fr_op* op = op_at(fr, ch->op, ch->op_at, &c, &pos);
  if (!op) {
    if (how) child_del(fr, ch);
    return;
  }
  op->t_last = r->ts;
  ns_fr_chan* pc = chan_of(op, ch->channel, &ch->chan_at);
  ns_fr_dir* d = pc ? &pc->dir[ch->dir] : NULL;
  if (!how) { /* a state */
    if (ch->type == NS_EV_PROXY_STEP && d) {
      d->last_state = r->state;
      d->last_step = ch->step;
    }
    if (ch->type != NS_EV_KERNEL_CH && d) d->last_ts = r->ts;
    return;
  }
  int stopped = how == 1 || (ch->type == NS_EV_PROXY_OP && reason == NS_CLOSE_NEVER_STOPPED);
  if (ch->type == NS_EV_KERNEL_CH) {
    if (how == 1) op->kch_done++;
    else op->closed_children++;
    if (pc) pc->kch |= how == 1 ? NS_FR_KCH_STOPPED : NS_FR_KCH_CLOSED, pc->kch_ts = r->ts;
  } else if (ch->type == NS_EV_PROXY_OP) {
    if (stopped) op->proxy_ops_done++;
    else op->closed_children++;
    if (d) {
      if (stopped) d->ops_done++;
      else d->ops_closed++;
      d->last_ts = r->ts;
    }
  } else if (d && how == 1) {
    d->steps_done++;
    d->last_step = ch->step;
    d->last_ts = r->ts;
  }
  child_del(fr, ch);
  if (!op->done && op_complete(c, op)) op_done(fr, c, pos, 1, r->ts);
}

/* Children still running after child_max_age_ns: their stop was lost (a
 * full ring) or never comes; forgotten, so the table stays bounded. */
static void sweep(ns_fr* fr) {
  fr->last_sweep = fr->now;
  if (!fr->cfg.child_max_age_ns || fr->now < fr->cfg.child_max_age_ns) return;
  uint64_t before = fr->now - fr->cfg.child_max_age_ns;
  for (size_t i = 0; i < fr->pool_cap; i++)
    if (fr->pool[i].id && fr->pool[i].since < before) {
      child_del(fr, &fr->pool[i]);
      fr->st.children_swept++;
    }
}

void ns_fr_record(ns_fr* fr, const ns_record* r) {
  fr->st.records++;
  if (r->ts > fr->now) fr->now = r->ts;
  if (fr->now - fr->last_sweep > FR_SWEEP_NS) sweep(fr);
  int op_type = r->type == NS_EV_COLL || r->type == NS_EV_P2P;
  int child_type = r->type == NS_EV_PROXY_OP || r->type == NS_EV_PROXY_STEP || r->type == NS_EV_KERNEL_CH;
  if (!op_type && !child_type) return;
  if (r->kind == NS_REC_START) {
    if (op_type) op_start_stop(fr, r);
    else child_start(fr, r);
  } else if (r->kind == NS_REC_STOP) {
    if (op_type) op_start_stop(fr, r);
    else child_event(fr, r, 1, 0);
  } else if (r->kind == NS_REC_STATE && child_type) {
    if (r->state == NS_ST_CLOSED) child_event(fr, r, 2, (unsigned)r->arg);
    else if (r->state != NS_ST_REPEATED) child_event(fr, r, 0, 0);
  }
}

void ns_fr_get_stats(const ns_fr* fr, ns_fr_stats* out) {
  *out = fr->st;
  out->children_live = fr->pool_used;
  out->comms = fr->comm_index.len;
  size_t bytes = fr->pool_cap * sizeof(fr_child);
  for (size_t i = 0; i < fr->ncomms; i++) {
    const fr_comm* c = &fr->comms[i];
    if (!c->comm) continue;
    bytes += (fr->ring_mask + 1) * sizeof(ns_fr_op);
    for (uint64_t p = c->first_open; p < c->head; p++) bytes += fr_at(fr, c, p)->nch * sizeof(ns_fr_chan);
  }
  out->detail_bytes = bytes;
}
