/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: from assembled events to completed operations.
 *
 * The event assembler (include/ncclscope/events.h) decides the hierarchy
 * and when a Coll/P2p is final (its children done and grace_ns of quiet, or
 * given up); these are its callbacks. They add what only the analysis
 * needs: each op's window, the GPU clock samples (KernelCh pTimers after
 * their CPU times; the kernel launch and the receive handover before),
 * per-link transfer times from ProxySteps, and the op's result.
 * Runs on the thread that owns the ns_analysis.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "analysis/internal.h"

static ns_an_event* an(const ns_event* ev) { return ns_event_user(ev); }

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
 * process's op) have no local op and are left out. The bound holds for
 * the latest stop of all the op's channels only: with a channel's stop
 * pTimer missing (a dropped record), the one that consumed the last chunk
 * may be the missing one, so such an op gives no sample. */
static void recv_handed_over(ns_analysis* a, const ns_event* step, uint64_t ts) {
  ns_event* pop = (step->start.flags & NS_RF_PARENT_RAW) ? NULL : ns_asm_find(a->as, step->start.parent);
  if (!pop || !pop->started || pop->type != NS_EV_PROXY_OP || pop->start.num[NS_PROXY_OP_IS_SEND] ||
      (pop->start.flags & NS_RF_PXN) || !pop->op)
    return;
  ns_event* op = ns_asm_find(a->as, pop->op);
  if (op && op->op_like && ts > an(op)->recv_ready_ts) an(op)->recv_ready_ts = ts;
}

static int is_simple_proto(const char* proto) { return strcasecmp(proto, "Simple") == 0; }

/* The largest pTimer a KernelCh of the op carried, start or stop: a start
 * read from an overwritten slot can exceed every stop (ptimers.c). */
static void note_ptimer(ns_analysis* a, const ns_event* kch, uint64_t ptimer) {
  ns_event* op = kch->op ? ns_asm_find(a->as, kch->op) : NULL;
  if (op && op->op_like && ptimer > an(op)->ptimer_last) an(op)->ptimer_last = ptimer;
}

/* ---- the assembler's callbacks ---- */

static void on_created(void* user, ns_event* ev) {
  ns_analysis* a = user;
  if (!ev->op_like) return;
  an(ev)->window = ns_win_attach(a, ev->started ? ev->start.ts : ev->first_seen);
  an(ev)->has_window = 1;
}

static void on_started(void* user, ns_event* ev) {
  ns_analysis* a = user;
  const ns_record* r = &ev->start;
  ns_an_event* x = an(ev);
  switch (r->type) {
    case NS_EV_COLL:
    case NS_EV_P2P: {
      uint64_t api_id = (r->flags & NS_RF_PARENT_RAW) ? 0 : r->parent;
      x->launch_ts = ns_launch_for(a, api_id, r->comm);
      /* The flag is never wrongly set: a Coll names a CollApi that stopped
       * long before only for a graph replay, and a replay's Coll start does
       * precede its kernel. */
      x->graph = (uint8_t)ns_launch_graph(a, api_id);
      /* its plan: the legacy Group every op of its kernel shares (v5+ name it in
       * parentGroup; before v5 it is their parent) */
      x->plan = r->num[r->type == NS_EV_COLL ? NS_COLL_PARENT_GROUP : NS_P2P_PARENT_GROUP];
      const ns_event* p = x->plan || !api_id ? NULL : ns_asm_find(a->as, api_id);
      if (p && p->type == NS_EV_GROUP) x->plan = api_id;
      ns_batch_plan_started(a, x->plan);
      ns_comm_state* cs = ns_an_comm(a, r->comm, 1);
      if (cs) ns_pt_op_started(a, cs, ev, x->launch_ts);
      return;
    }
    case NS_EV_KERNEL_CH: {
      uint64_t ptimer = r->num[NS_KERNEL_CH_PTIMER];
      ns_comm_state* cs = ns_an_comm(a, r->comm, 1);
      ns_clockfit* clock = cs && ptimer ? ns_an_clock_at_kch(a, cs, r->id >> 40, r->tid) : NULL;
      if (clock) ns_cf_add_after(clock, r->ts, ptimer); /* whichever work's time it is, it precedes the callback */
      note_ptimer(a, ev, ptimer);
      break;
    }
    case NS_EV_COLL_API:
      ns_pt_api_started(a, ev);
      ns_launch_started(a, ev);
      break;
    case NS_EV_GROUP_API:
    case NS_EV_P2P_API:
    case NS_EV_KERNEL_LAUNCH:
      ns_launch_started(a, ev);
      break;
    default:
      break;
  }
  if (x->has_window) { /* named as a parent by a child, but not an op after all */
    ns_win_op_dropped(a, x->window);
    x->has_window = 0;
  }
}

static void on_state(void* user, ns_event* ev, const ns_record* r) {
  ns_analysis* a = user;
  if (!ev) return;
  if (ev->type == NS_EV_PROXY_STEP) {
    ns_an_event* x = an(ev);
    if (r->state == NS_ST_PROXY_STEP_SEND_WAIT || r->state == NS_ST_PROXY_STEP_RECV_WAIT) { /* the transfer is under way */
      x->wait_ts = r->ts;
      x->has_wait = 1;
    }
    if (r->state == NS_ST_PROXY_STEP_RECV_GPU_WAIT) recv_handed_over(a, ev, r->ts);
    /* transSize is this step's own only in SendWait (the isend's size) and
     * RecvFlushWait (the size received); the other states carry the previous
     * step's (NCCL 2.27+, net.cc). Before 2.27 steps carry no size at all. */
    if ((r->state == NS_ST_PROXY_STEP_SEND_WAIT || r->state == NS_ST_PROXY_STEP_RECV_FLUSH_WAIT) &&
        (r->flags & NS_RF_HAS_ARG) && r->arg)
      x->size = r->arg;
  } else if (ev->type == NS_EV_KERNEL_CH && r->state == NS_ST_KERNEL_CH_STOP && r->arg) {
    ns_comm_state* cs = ns_an_comm(a, ev->start.comm, 1);
    ns_clockfit* clock = cs ? ns_an_clock_at_kch(a, cs, ev->start.id >> 40, ev->start.tid) : NULL;
    if (clock) ns_cf_add_after(clock, r->ts, r->arg);
    note_ptimer(a, ev, r->arg);
  }
}

/* A ProxyStep's transfer time, per link (comm, rank, peer, direction, channel). */
static void on_stopped(void* user, ns_event* ev) {
  ns_analysis* a = user;
  if (ev->type != NS_EV_PROXY_STEP) return;
  a->st.steps++;
  const ns_an_event* x = an(ev);
  ns_event* pop = (ev->start.flags & NS_RF_PARENT_RAW) ? NULL : ns_asm_find(a->as, ev->start.parent);
  if (!pop || !pop->started || pop->type != NS_EV_PROXY_OP) return;
  if (!x->has_wait || x->size == 0 || ev->stop_ts < x->wait_ts) return;
  if ((pop->start.flags & NS_RF_PXN) || pop->start.comm == 0) {
    a->st.pxn_skipped++;
    return;
  }
  ns_comm_state* cs = ns_an_comm(a, pop->start.comm, 0);
  ns_link_stats key;
  memset(&key, 0, sizeof key);
  key.comm = pop->start.comm;
  key.rank = cs ? cs->rank : -1;
  key.peer = (int32_t)(int64_t)pop->start.num[NS_PROXY_OP_PEER];
  key.is_send = pop->start.num[NS_PROXY_OP_IS_SEND] != 0;
  key.channel = (int32_t)pop->start.num[NS_PROXY_OP_CHANNEL];
  ns_event* op = ev->op ? ns_asm_find(a->as, ev->op) : NULL;
  uint64_t win = op && op->op_like && an(op)->has_window ? an(op)->window : UINT64_MAX;
  /* A send queued behind an earlier step of its connection still in flight
   * (up to 8 are, of its op or the one before: docs/simulator.md, NCCL behaviour 8) measures that
   * wait too, not the link: steps complete in order, so it queued if the
   * previous one stopped after its SendWait. Receives are waits anyway. */
  int queued = 0;
  if (key.is_send) {
    uint64_t conn = ns_idmap_mix(((uint64_t)key.comm << 32) ^ ((uint64_t)(uint32_t)key.peer << 8) ^
                                 (uint64_t)(uint8_t)key.channel) | 1;
    int inserted;
    uint64_t* last = ns_idmap_put(&a->conn_last_stop, conn, &inserted);
    if (last) {
      queued = *last > x->wait_ts;
      if (ev->stop_ts > *last) *last = ev->stop_ts;
    }
  }
  ns_win_step(a, win, &key, x->size, (double)(ev->stop_ts - x->wait_ts) / 1000.0, queued, &an(pop)->links);
}

/* The op's GPU interval. Its pTimers are judged first (ptimers.c): a
 * pTimer of an earlier work would claim a GPU time after the launch that it
 * does not have, so an op that may carry one gives no "before" sample; only
 * an op that owns its pTimers gets a published interval. */
static void gpu_interval(ns_analysis* a, const ns_event* ev, ns_comm_state* cs, const char* proto, ns_op_result* r) {
  ns_an_event* x = an(ev);
  ns_clockfit* clock = ns_an_clock(a, cs);
  if (!clock) return;
  /* its kernel began after this: the other side of the clock bound. A
   * launch after the op's own start names the wrong group (a stale parent
   * handle of a graph replay) or a host-callback plan: no bound from it. */
  if (!x->launch_ts)
    x->launch_ts = ns_launch_for(a, (ev->start.flags & NS_RF_PARENT_RAW) ? 0 : ev->start.parent, ev->start.comm);
  uint64_t lower = x->graph ? ev->start.ts : x->launch_ts && x->launch_ts <= ev->start.ts ? x->launch_ts : 0;
  int why = ns_pt_judge(a, cs, ev, lower, x->ptimer_last, clock);
  /* Without drift, the slots an op reads hold its own work's time or a
   * later work's (the counter passed its number), which began after its
   * launch and ends after its receives: the "before" samples hold even for
   * an op whose ring may have wrapped. */
  if (why == NS_PT_OWN || why == NS_PT_OVERRUN) {
    if (lower) ns_cf_add_before(clock, lower, ev->ptimer_min);
    uint32_t nch = r->nchannels;
    if (x->recv_ready_ts && nch > 0 && ev->n_kch_timed >= nch && ev->type == NS_EV_COLL && is_simple_proto(proto))
      ns_cf_add_before(clock, x->recv_ready_ts, ev->ptimer_max);
  }
  if (why != NS_PT_OWN) {
    r->flags |= NS_OPF_PTIMER_FOREIGN;
    return;
  }
  if (!ev->has_ptimer_max || ev->ptimer_max < ev->ptimer_min) return;
  /* Its own pTimers: its GPU duration, in the GPU's one clock, whatever the
   * fit (sparse samples under NCCLSCOPE_DETAIL=sampled may not have one yet). */
  r->ptimer_start = ev->ptimer_min;
  r->ptimer_stop = ev->ptimer_max;
  double e1 = INFINITY, e2 = INFINITY;
  uint64_t t1 = 0, t2 = 0;
  int ok1 = ns_cf_convert(clock, ev->ptimer_min, &t1, &e1);
  int ok2 = ns_cf_convert(clock, ev->ptimer_max, &t2, &e2);
  if (ok1 && ok2) {
    r->gpu_start_ns = t1;
    r->gpu_stop_ns = t2;
    r->gpu_err_ns = fmax(e1, e2);
    if (!isfinite(r->gpu_err_ns)) r->flags |= NS_OPF_GPU_UNBOUNDED;
  }
}

static void finalize_op(ns_analysis* a, ns_event* ev) {
  const ns_record* s = &ev->start;
  int coll = ev->type == NS_EV_COLL;
  ns_comm_state* cs = ns_an_comm(a, s->comm, 0);
  char func[NS_STR_LEN], dtype[NS_STR_LEN], algo[NS_STR_LEN], proto[NS_STR_LEN];
  const char* fname = ns_an_string(a, s->str[coll ? NS_COLL_FUNC : NS_P2P_FUNC]);
  ns_an_copy_str(func, fname);
  const char* dname = ns_an_string(a, s->str[coll ? NS_COLL_DTYPE : NS_P2P_DTYPE]);
  ns_an_copy_str(dtype, dname);
  ns_an_copy_str(algo, coll ? ns_an_string(a, s->str[NS_COLL_ALGO]) : NULL);
  ns_an_copy_str(proto, coll ? ns_an_string(a, s->str[NS_COLL_PROTO]) : NULL);
  ns_op_result r;
  memset(&r, 0, sizeof r);
  r.id = ev->id;
  r.comm = s->comm;
  r.type = ev->type;
  if (cs) {
    r.comm_id = cs->comm_id;
    r.rank = cs->rank;
    r.nranks = cs->nranks;
  } else {
    r.rank = -1;
  }
  r.func = ns_func_code_memo(&a->memo_func, fname);
  r.func_name = func;
  r.dtype = dtype;
  r.algo = algo;
  r.proto = proto;
  r.seq = coll ? s->num[NS_COLL_SEQ] : 0;
  r.count = s->num[coll ? NS_COLL_COUNT : NS_P2P_COUNT];
  r.user_tag = s->num[coll ? NS_COLL_USER_TAG : NS_P2P_USER_TAG];
  r.root_or_peer = (int64_t)s->num[coll ? NS_COLL_ROOT : NS_P2P_PEER];
  r.nchannels = (uint32_t)s->num[coll ? NS_COLL_CHANNELS : NS_P2P_CHANNELS];
  r.bytes = ns_coll_bytes(r.func, r.count, ns_dtype_size_memo(&a->memo_dtype, dname), r.nranks);
  r.start_ns = s->ts;
  r.stop_ns = ev->stopped ? ev->stop_ts : 0;
  r.exec_stop_ns = ev->has_exec_stop ? ev->exec_stop : 0;
  r.n_proxy_ops = ev->n_proxy_ops;
  r.n_kernel_ch = ev->n_kernel_ch;
  r.n_steps = ev->n_steps;
  r.window = an(ev)->window;
  if (!ev->stopped || ev->live_children || (ev->flags & NS_EVF_CHILD_LOST)) r.flags |= NS_OPF_INCOMPLETE;
  if (cs && ev->has_ptimer_min) gpu_interval(a, ev, cs, proto, &r);
  ns_op_times tm = {.started = 1,
                    .stopped = ev->stopped,
                    .start_ns = s->ts,
                    .stop_ns = r.stop_ns,
                    .exec_stop_ns = r.exec_stop_ns,
                    .has_gpu = r.ptimer_stop != 0, /* own pTimers (gpu_interval) */
                    .ptimer_start = ev->ptimer_min,
                    .ptimer_stop = ev->ptimer_max};
  r.basis = ns_op_duration(&tm, &r.dur_ns);
  if (r.dur_ns > 0 && r.bytes > 0) {
    r.algbw_gbs = ns_algbw_gbs(r.bytes, r.dur_ns);
    r.busbw_gbs = r.algbw_gbs * ns_busbw_factor(r.func, r.nranks);
  }
  ns_batch_plan_final(a, an(ev)->plan); /* before it joins: its batch may close once it is the last */
  ns_batch_op(a, &r, an(ev)->plan, ev->ptimer_min, ev->ptimer_max);
}

static int is_child_type(unsigned t) { return t == NS_EV_PROXY_OP || t == NS_EV_PROXY_STEP || t == NS_EV_KERNEL_CH; }

static void on_done(void* user, ns_event* ev) {
  ns_analysis* a = user;
  if (ev->op_like && ev->started) {
    finalize_op(a, ev);
  } else if (ev->op_like) { /* children (or a STOP) seen, the op's START never came */
    a->st.orphans_evicted++;
    if (an(ev)->has_window) ns_win_op_dropped(a, an(ev)->window);
  } else if (is_child_type(ev->type) && (!ev->started || !ev->stopped)) {
    a->st.orphans_evicted++;
  }
}

void ns_an_sink(ns_analysis* a, ns_asm_sink* sink) {
  *sink = (ns_asm_sink){.user = a,
                        .created = on_created,
                        .started = on_started,
                        .state = on_state,
                        .stopped = on_stopped,
                        .done = on_done};
}
