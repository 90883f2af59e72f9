/* ncclscope analysis: from records to completed operations.
 *
 * Runs on the thread that owns the ns_analysis. Tracks every Coll/P2p and
 * its children (ProxyOp, ProxyStep, KernelCh) by event id, tolerating any
 * interleaving across threads: a child naming an unknown parent creates a
 * pending parent; a stop arriving before its start is kept and applied when
 * the start comes. An operation is final once it started and stopped, has
 * no running child, its expected KernelCh children (nChannels, when this
 * communicator produces KernelCh events) are done, and nothing happened to
 * it for grace_ns; anything older than max_age_ns is finalized or evicted.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "analysis/internal.h"

static int is_op_type(uint8_t t) { return t == NS_EV_COLL || t == NS_EV_P2P || t == NS_NODE_OP_PENDING; }

static void copy_str(char* dst, const char* src) {
  if (!src) {
    dst[0] = '\0';
    return;
  }
  size_t len = strnlen(src, NS_STR_LEN - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

/* The Coll/P2p with that id, created pending if it is not known yet. */
static ns_node* op_for_child(ns_analysis* a, uint64_t id, uint32_t comm, uint64_t ts) {
  if (id == 0) return NULL;
  ns_node* p = ns_an_find(a, id);
  if (p) return is_op_type(p->type) ? p : NULL;
  p = ns_an_get(a, id, ts);
  if (!p) return NULL;
  p->type = NS_NODE_OP_PENDING;
  p->comm = comm;
  p->u.op.func = NS_FUNC_UNKNOWN;
  p->u.op.window = ns_win_attach(a, ts);
  return p;
}

/* ---- kernel launches: the "before" side of the GPU clock bound ----
 * A kernel cannot begin before the call that launched it began. NCCL (v5+)
 * brackets that call with a KernelLaunch event whose parent is the GroupApi;
 * a Coll/P2p reaches the same GroupApi through its CollApi/P2pApi parent.
 * The Coll/P2p start itself is no such bound in general: NCCL starts it
 * after the launch call returned, when the kernel may already be running.
 * Only for a graph-captured plan does NCCL start it in a host callback that
 * the kernel waits for (enqueue.cc: persistent plans use the host stream);
 * the CollApi/P2pApi's graphCaptured flag says so. CollApi, P2pApi and
 * GroupApi nodes only carry these links and expire once idle. */
static int is_link_type(uint8_t t) { return t == NS_EV_GROUP_API || t == NS_EV_COLL_API || t == NS_EV_P2P_API; }

static void touch(ns_node* n, uint64_t ts) {
  if (ts > n->last_activity) n->last_activity = ts;
}

/* The fields every tracked START sets. */
static void node_started(ns_node* n, const ns_record* r) {
  n->type = r->type;
  n->started = 1;
  n->start_ts = r->ts;
  n->comm = r->comm;
}

/* The parent id, unless the record names a raw (foreign) pointer. */
static uint64_t parent_id(const ns_record* r) { return (r->flags & NS_RF_PARENT_RAW) ? 0 : r->parent; }

static void api_started(ns_analysis* a, const ns_record* r) {
  ns_node* n = ns_an_get(a, r->id, r->ts);
  if (!n || (n->started && n->type != r->type)) return;
  node_started(n, r);
  n->parent = parent_id(r);
  n->u.api_graph = (r->type == NS_EV_COLL_API ? r->num[NS_COLL_API_GRAPH_CAPTURED] : r->num[NS_P2P_API_GRAPH_CAPTURED]) != 0;
  touch(n, r->ts);
}

static void launch_started(ns_analysis* a, const ns_record* r) {
  if (!r->parent || (r->flags & NS_RF_PARENT_RAW)) return;
  ns_node* g = ns_an_find(a, r->parent);
  if (!g) {
    g = ns_an_get(a, r->parent, r->ts);
    if (!g) return;
    g->type = NS_EV_GROUP_API;
    g->started = 1;
    memset(&g->u.grp, 0, sizeof g->u.grp);
  } else if (g->type != NS_EV_GROUP_API) {
    return;
  }
  touch(g, r->ts);
  ns_group_state* gs = &g->u.grp;
  for (uint32_t i = 0; i < gs->n; i++)
    if (gs->comm[i] == r->comm) {
      if (r->ts < gs->launch_ts[i]) gs->launch_ts[i] = r->ts;
      return;
    }
  if (gs->n == NS_GROUP_COMMS) return; /* more comms in one group: theirs stay unknown (no bound, never a wrong one) */
  gs->comm[gs->n] = r->comm;
  gs->launch_ts[gs->n] = r->ts;
  gs->n++;
}

static ns_node* api_node(ns_analysis* a, uint64_t api_id) {
  ns_node* api = api_id ? ns_an_find(a, api_id) : NULL;
  return api && (api->type == NS_EV_COLL_API || api->type == NS_EV_P2P_API) ? api : NULL;
}

/* The earliest KernelLaunch start of the op's group on its comm, 0 if unknown. */
static uint64_t launch_for(ns_analysis* a, uint64_t api_id, uint32_t comm, uint64_t now) {
  ns_node* api = api_node(a, api_id);
  if (!api || !api->parent) return 0;
  ns_node* g = ns_an_find(a, api->parent);
  if (!g || g->type != NS_EV_GROUP_API) return 0;
  touch(api, now);
  touch(g, now);
  for (uint32_t i = 0; i < g->u.grp.n; i++)
    if (g->u.grp.comm[i] == comm) return g->u.grp.launch_ts[i];
  return 0;
}

static void child_started(ns_node* op, uint64_t ts) {
  op->u.op.live_children++;
  if (ts > op->last_activity) op->last_activity = ts;
}

static void child_stopped(ns_analysis* a, ns_node* child, uint64_t ts) {
  uint64_t root = child->type == NS_EV_PROXY_OP ? child->u.pop.root : child->parent;
  ns_node* op = root ? ns_an_find(a, root) : NULL;
  if (!op || !is_op_type(op->type)) return;
  if (op->u.op.live_children > 0) op->u.op.live_children--;
  if (ts > op->u.op.exec_stop) op->u.op.exec_stop = ts;
  if (ts > op->last_activity) op->last_activity = ts;
  if (child->type == NS_EV_KERNEL_CH) {
    op->u.op.n_kch_done++;
    op->u.op.n_kch_timed += child->u.kch.has_stop != 0;
    if (child->u.kch.has_stop && (!op->u.op.has_ptimer_stop || child->u.kch.ptimer_stop > op->u.op.ptimer_max)) {
      op->u.op.ptimer_max = child->u.kch.ptimer_stop;
      op->u.op.has_ptimer_stop = 1;
    }
  }
}

static void step_stopped(ns_analysis* a, ns_node* n, uint64_t ts) {
  a->st.steps++;
  ns_node* pop = ns_an_find(a, n->parent);
  if (!pop || pop->type != NS_EV_PROXY_OP) return;
  ns_node* op = pop->u.pop.root ? ns_an_find(a, pop->u.pop.root) : NULL;
  if (op && is_op_type(op->type)) op->u.op.n_steps++;
  if (!n->u.step.has_wait || n->u.step.size == 0 || ts < n->u.step.wait_ts) return;
  if (pop->u.pop.pxn || pop->comm == 0) {
    a->st.pxn_skipped++;
    return;
  }
  ns_comm_state* cs = ns_an_comm(a, pop->comm, 0);
  ns_link_stats key;
  memset(&key, 0, sizeof key);
  key.comm = pop->comm;
  key.rank = cs ? cs->rank : -1;
  key.peer = pop->u.pop.peer;
  key.is_send = pop->u.pop.is_send;
  key.channel = pop->u.pop.channel;
  uint64_t win = op && is_op_type(op->type) ? op->u.op.window : UINT64_MAX;
  ns_win_step(a, win, &key, n->u.step.size, (double)(ts - n->u.step.wait_ts) / 1000.0);
}

/* Applies a STOP to a started node; removes finished children. */
static void apply_stop(ns_analysis* a, ns_node* n, uint64_t ts) {
  n->stopped = 1;
  n->stop_ts = ts;
  if (ts > n->last_activity) n->last_activity = ts;
  switch (n->type) {
    case NS_EV_PROXY_OP:
    case NS_EV_KERNEL_CH:
      child_stopped(a, n, ts);
      ns_an_remove(a, n);
      break;
    case NS_EV_PROXY_STEP:
      step_stopped(a, n, ts);
      ns_an_remove(a, n);
      break;
    default:
      break; /* Coll/P2p: finalized by the scan */
  }
}

static void start_op(ns_analysis* a, ns_node* n, const ns_record* r, const char* const* s) {
  int was_pending = n->type == NS_NODE_OP_PENDING;
  if (n->started && !was_pending) return; /* duplicate START: keep the first */
  node_started(n, r);
  ns_op_state* o = &n->u.op;
  if (!was_pending) o->window = ns_win_attach(a, r->ts);
  if (r->ts < n->first_seen) n->first_seen = r->ts;
  copy_str(o->func_name, s[0]);
  copy_str(o->dtype, s[1]);
  o->func = ns_func_code(s[0]);
  o->api_id = parent_id(r);
  o->launch_ts = launch_for(a, o->api_id, r->comm, r->ts);
  /* The flag is never wrongly set: a parent handle is stale (its slot
   * recycled, resolving to some newer event) only for a graph replay, and a
   * replay's Coll start does precede its kernel. */
  ns_node* api = api_node(a, o->api_id);
  o->graph = api && api->u.api_graph;
  if (r->type == NS_EV_COLL) {
    copy_str(o->algo, s[2]);
    copy_str(o->proto, s[3]);
    o->seq = r->num[NS_COLL_SEQ];
    o->count = r->num[NS_COLL_COUNT];
    o->root_or_peer = (int64_t)r->num[NS_COLL_ROOT];
    o->nchannels = (uint32_t)r->num[NS_COLL_CHANNELS];
  } else {
    o->root_or_peer = (int64_t)r->num[NS_P2P_PEER];
    o->count = r->num[NS_P2P_COUNT];
    o->nchannels = (uint32_t)r->num[NS_P2P_CHANNELS];
  }
}

static void handle_start(ns_analysis* a, const ns_record* r, const char* const* s) {
  switch (r->type) {
    case NS_EV_COLL_API:
    case NS_EV_P2P_API:
      api_started(a, r);
      return;
    case NS_EV_KERNEL_LAUNCH:
      launch_started(a, r);
      return;
    case NS_EV_GROUP_API:
      return; /* known through its children only */
    default:
      break;
  }
  ns_node* n = ns_an_find(a, r->id);
  int stopped_early = 0;
  uint64_t stop_ts = 0;
  if (n && !is_op_type(n->type) && n->stopped && !n->started) {
    /* its STOP came first (another thread's records were ahead) */
    stopped_early = 1;
    stop_ts = n->stop_ts;
  }
  if (!n) n = ns_an_get(a, r->id, r->ts);
  if (!n) return;
  switch (r->type) {
    case NS_EV_COLL:
    case NS_EV_P2P:
      start_op(a, n, r, s);
      return;
    case NS_EV_PROXY_OP: {
      memset(&n->u.pop, 0, sizeof n->u.pop);
      node_started(n, r);
      n->u.pop.channel = (int32_t)r->num[NS_PROXY_OP_CHANNEL];
      n->u.pop.peer = (int32_t)(int64_t)r->num[NS_PROXY_OP_PEER];
      n->u.pop.is_send = r->num[NS_PROXY_OP_IS_SEND] != 0;
      n->u.pop.pxn = (r->flags & NS_RF_PXN) != 0;
      if (!(r->flags & (NS_RF_PARENT_RAW | NS_RF_PXN))) {
        n->parent = r->parent;
        ns_node* op = op_for_child(a, r->parent, r->comm, r->ts);
        if (op) {
          n->u.pop.root = op->id;
          child_started(op, r->ts);
          op->u.op.n_proxy_ops++;
        }
      }
      break;
    }
    case NS_EV_PROXY_STEP:
      memset(&n->u.step, 0, sizeof n->u.step);
      node_started(n, r);
      n->parent = parent_id(r);
      break;
    case NS_EV_KERNEL_CH: {
      memset(&n->u.kch, 0, sizeof n->u.kch);
      node_started(n, r);
      n->parent = parent_id(r);
      uint64_t ptimer = r->num[NS_KERNEL_CH_PTIMER];
      n->u.kch.ptimer_start = ptimer;
      ns_comm_state* cs = ns_an_comm(a, r->comm, 1);
      if (cs) {
        cs->kernel_seen = 1;
        if (ptimer) ns_cf_add_after(&cs->clock, r->ts, ptimer);
      }
      ns_node* op = op_for_child(a, n->parent, r->comm, r->ts);
      if (op) {
        child_started(op, r->ts);
        op->u.op.n_kernel_ch++;
        if (ptimer && (!op->u.op.has_ptimer_start || ptimer < op->u.op.ptimer_min)) {
          op->u.op.ptimer_min = ptimer;
          op->u.op.has_ptimer_start = 1;
        }
      } else {
        n->parent = 0;
      }
      break;
    }
    default:
      ns_an_remove(a, n); /* not tracked */
      return;
  }
  if (stopped_early) apply_stop(a, n, stop_ts);
}

/* ---- network receives: a second "before" side of the GPU clock bound ----
 * With the Simple protocol a kernel consumes a received chunk only after the
 * proxy has advanced the receive tail the kernel polls, and NCCL's net
 * transport records RecvGPUWait before that store (net.cc, 2.23 to 2.30: the
 * state, a fence, then the tail). So the op's last kernel channel stop comes
 * after every RecvGPUWait of its own receives. Unlike the launch call this
 * stays tight when the GPU is busy: a kernel queued behind other work (a
 * straggler's) starts long after its launch, but still ends a few
 * microseconds after its last chunk was handed over. LL and LL128 kernels
 * poll flags in the data itself, which the NIC writes before the proxy sees
 * the completion: no bound from them, nor from a P2p, whose descriptor
 * names no protocol (small ones may use LL). PXN receives (another
 * process's op) have no local root and are left out. The bound holds for
 * the latest stop of all the op's channels only: with a channel's stop
 * pTimer missing (a dropped record), the one that consumed the last chunk
 * may be the missing one, so such an op gives no sample. */
static void recv_handed_over(ns_analysis* a, const ns_node* step, uint64_t ts) {
  ns_node* pop = ns_an_find(a, step->parent);
  if (!pop || pop->type != NS_EV_PROXY_OP || pop->u.pop.is_send || pop->u.pop.pxn || !pop->u.pop.root) return;
  ns_node* op = ns_an_find(a, pop->u.pop.root);
  if (op && is_op_type(op->type) && ts > op->u.op.recv_ready_ts) op->u.op.recv_ready_ts = ts;
}

static int is_simple_proto(const char* proto) { return strcasecmp(proto, "Simple") == 0; }

static void handle_state(ns_analysis* a, const ns_record* r) {
  ns_node* n = ns_an_find(a, r->id);
  if (!n || !n->started) return;
  if (n->type == NS_EV_PROXY_STEP) {
    if (r->state == NS_ST_PROXY_STEP_SEND_WAIT || r->state == NS_ST_PROXY_STEP_RECV_WAIT) { /* the transfer is under way */
      n->u.step.wait_ts = r->ts;
      n->u.step.has_wait = 1;
    }
    if (r->state == NS_ST_PROXY_STEP_RECV_GPU_WAIT) recv_handed_over(a, n, r->ts);
    if ((r->flags & NS_RF_HAS_ARG) && r->arg) n->u.step.size = r->arg; /* transSize, last seen */
  } else if (n->type == NS_EV_KERNEL_CH && r->state == NS_ST_KERNEL_CH_STOP && r->arg) {
    n->u.kch.ptimer_stop = r->arg;
    n->u.kch.has_stop = 1;
    ns_comm_state* cs = ns_an_comm(a, n->comm, 1);
    if (cs) ns_cf_add_after(&cs->clock, r->ts, r->arg);
  }
}

static void handle_stop(ns_analysis* a, const ns_record* r) {
  ns_node* n = ns_an_find(a, r->id);
  if (!n) {
    if (r->type != NS_EV_COLL && r->type != NS_EV_P2P && r->type != NS_EV_PROXY_OP && r->type != NS_EV_PROXY_STEP &&
        r->type != NS_EV_KERNEL_CH)
      return;
    n = ns_an_get(a, r->id, r->ts); /* STOP before START: keep it for the START */
    if (!n) return;
    n->type = r->type;
    n->comm = r->comm;
    n->stopped = 1;
    n->stop_ts = r->ts;
    if (r->type == NS_EV_COLL || r->type == NS_EV_P2P) {
      n->type = NS_NODE_OP_PENDING;
      n->u.op.func = NS_FUNC_UNKNOWN;
      n->u.op.window = ns_win_attach(a, r->ts);
    }
    return;
  }
  if (is_op_type(n->type)) {
    n->stopped = 1;
    n->stop_ts = r->ts;
    if (r->ts > n->last_activity) n->last_activity = r->ts;
    return;
  }
  if (!n->started) return;
  apply_stop(a, n, r->ts);
}

void ns_an_handle(ns_analysis* a, const ns_record* r, const char* const strs[NS_REC_STRS]) {
  switch (r->kind) {
    case NS_REC_START:
      handle_start(a, r, strs);
      break;
    case NS_REC_STATE:
      handle_state(a, r);
      break;
    case NS_REC_STOP:
      handle_stop(a, r);
      break;
    default:
      break;
  }
}

/* ---- finalization ---- */
static int due(const ns_analysis* a, const ns_node* n) {
  const ns_op_state* o = &n->u.op;
  if (!n->started || !n->stopped || o->live_children > 0) return 0;
  uint64_t quiet = a->now > n->last_activity ? a->now - n->last_activity : 0;
  if (quiet < a->cfg.grace_ns) return 0;
  const ns_comm_state* cs = n->comm < a->ncomms ? a->comms[n->comm] : NULL;
  int want_kernels = cs && cs->kernel_seen && o->nchannels > 0;
  if (want_kernels && o->n_kch_done < o->nchannels && quiet < 5 * a->cfg.grace_ns) return 0;
  return 1;
}

void ns_an_finalize_op(ns_analysis* a, ns_node* n, unsigned flags) {
  ns_op_state* o = &n->u.op;
  ns_comm_state* cs = ns_an_comm(a, n->comm, 0);
  if (n->type == NS_NODE_OP_PENDING) {
    a->st.orphans_evicted++;
    ns_win_op_dropped(a, o->window);
    ns_an_remove(a, n);
    return;
  }
  ns_op_result r;
  memset(&r, 0, sizeof r);
  r.id = n->id;
  r.comm = n->comm;
  r.type = n->type;
  if (cs) {
    r.comm_id = cs->comm_id;
    r.rank = cs->rank;
    r.nranks = cs->nranks;
  } else {
    r.rank = -1;
  }
  r.func = o->func;
  r.func_name = o->func_name;
  r.dtype = o->dtype;
  r.algo = o->algo;
  r.proto = o->proto;
  r.seq = o->seq;
  r.count = o->count;
  r.root_or_peer = o->root_or_peer;
  r.nchannels = o->nchannels;
  r.bytes = ns_coll_bytes(o->func, o->count, ns_dtype_size(o->dtype), r.nranks);
  r.start_ns = n->start_ts;
  r.stop_ns = n->stop_ts;
  r.exec_stop_ns = o->exec_stop;
  r.n_proxy_ops = o->n_proxy_ops;
  r.n_kernel_ch = o->n_kernel_ch;
  r.n_steps = o->n_steps;
  r.window = o->window;
  r.flags = flags | o->flags;
  if (cs && o->has_ptimer_start) {
    /* its kernel began after this: the other side of the clock bound. A
     * launch after the op's own start names the wrong group (a stale parent
     * handle of a graph replay) or a host-callback plan: no bound from it. */
    if (!o->launch_ts) o->launch_ts = launch_for(a, o->api_id, n->comm, a->now);
    if (n->started && o->graph)
      ns_cf_add_before(&cs->clock, n->start_ts, o->ptimer_min);
    else if (n->started && o->launch_ts && o->launch_ts <= n->start_ts)
      ns_cf_add_before(&cs->clock, o->launch_ts, o->ptimer_min);
    if (o->recv_ready_ts && o->nchannels > 0 && o->n_kch_timed >= o->nchannels && n->type == NS_EV_COLL &&
        is_simple_proto(o->proto))
      ns_cf_add_before(&cs->clock, o->recv_ready_ts, o->ptimer_max);
    double e1 = INFINITY, e2 = INFINITY;
    uint64_t t1 = 0, t2 = 0;
    int ok1 = ns_cf_convert(&cs->clock, o->ptimer_min, &t1, &e1);
    int ok2 = o->has_ptimer_stop && ns_cf_convert(&cs->clock, o->ptimer_max, &t2, &e2);
    if (ok1 && ok2 && o->ptimer_max >= o->ptimer_min) {
      r.gpu_start_ns = t1;
      r.gpu_stop_ns = t2;
      r.gpu_err_ns = fmax(e1, e2);
      if (!isfinite(r.gpu_err_ns)) r.flags |= NS_OPF_GPU_UNBOUNDED;
    }
  }
  ns_op_times tm = {.started = n->started,
                    .stopped = n->stopped,
                    .start_ns = n->start_ts,
                    .stop_ns = n->stop_ts,
                    .exec_stop_ns = r.exec_stop_ns,
                    .has_gpu = r.gpu_start_ns && r.gpu_stop_ns,
                    .ptimer_start = o->ptimer_min,
                    .ptimer_stop = o->ptimer_max};
  r.basis = ns_op_duration(&tm, &r.dur_ns);
  if (r.dur_ns > 0 && r.bytes > 0) {
    r.algbw_gbs = ns_algbw_gbs(r.bytes, r.dur_ns);
    r.busbw_gbs = r.algbw_gbs * ns_busbw_factor(r.func, r.nranks);
  }
  a->st.ops++;
  if (r.flags & NS_OPF_INCOMPLETE) a->st.ops_incomplete++;
  if (a->cfg.on_op) a->cfg.on_op(a->cfg.user, &r);
  ns_win_op_done(a, &r);
  ns_an_remove(a, n);
}

static void evict_child(ns_analysis* a, ns_node* n) {
  uint64_t root = n->type == NS_EV_PROXY_OP ? n->u.pop.root : (n->type == NS_EV_KERNEL_CH ? n->parent : 0);
  ns_node* op = root ? ns_an_find(a, root) : NULL;
  if (op && is_op_type(op->type)) {
    if (op->u.op.live_children > 0 && n->started) op->u.op.live_children--;
    op->u.op.flags |= NS_OPF_INCOMPLETE;
  }
  a->st.orphans_evicted++;
  ns_an_remove(a, n);
}

void ns_an_scan(ns_analysis* a, int flush) {
  /* children first, so a flush finalizes ops without running children */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < a->nnodes_cap; i++) {
      ns_node* n = &a->nodes[i];
      if (n->id == 0) continue;
      int op = is_op_type(n->type);
      uint64_t age = a->now > n->first_seen ? a->now - n->first_seen : 0;
      int old = flush || age > a->cfg.max_age_ns;
      if (pass == 0 && is_link_type(n->type)) {
        /* ops resolve their launch at their start (and again at their end) */
        uint64_t idle = a->now > n->last_activity ? a->now - n->last_activity : 0;
        if (old || idle > 5 * a->cfg.grace_ns) ns_an_remove(a, n);
      } else if (pass == 0 && !op) {
        if (old) evict_child(a, n);
      } else if (pass == 1 && op) {
        if (due(a, n)) {
          ns_an_finalize_op(a, n, 0);
        } else if (old) {
          unsigned f = 0;
          if (!n->stopped || n->u.op.live_children > 0) f |= NS_OPF_INCOMPLETE;
          if (!n->started) f |= NS_OPF_NO_START;
          ns_an_finalize_op(a, n, f);
        }
      }
    }
  }
}
