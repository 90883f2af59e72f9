/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: whose times an operation's KernelCh pTimers are.
 *
 * NCCL's proxy numbers the works it has a profiler op for, per channel of a
 * communicator, and gives KernelCh op number b the time found in slot
 * b % 64 of the channel's 64-slot device ring once that slot's counter
 * reached b (transport/profiler.cc). The device numbers every work, so the
 * time is the op's own only while both counters agree and the ring did not
 * wrap. A pTimer of another work converts, with however good a clock fit,
 * into another work's time (docs/simulator.md, NCCL behaviour 3). An op's
 * pTimers are therefore taken as its own only when none of these holds:
 *  - Drift: a work without a profiler op ran on the communicator before
 *    it. A self send/recv (a P2p whose peer is the rank itself: NCCL gives
 *    it no proxy op) and, from NCCL 2.29, a Broadcast run through the
 *    AllGatherV scheduler (a CollApi Broadcast that never gets a Coll)
 *    advance the device counter alone, on channels the events do not name;
 *    from then on every later op of the communicator may carry an earlier
 *    or a later work's time. Drift does not heal: it lasts as long as the
 *    communicator. A Broadcast CollApi is pending until its Coll starts:
 *    ops after a pending one are judged as drifted; one still without a
 *    Coll after 5 grace periods is a drift source for good.
 *  - Overrun: NS_PT_OVERRUN_LAUNCHES or more ops of the communicator were
 *    launched between the op's own launch and its last callback, or, when
 *    the clock bounds it, the GPU time of its largest pTimer. The slot
 *    holds the time of a work numbered b + 64k (k >= 0: the counter passed
 *    b); one with k >= 1 started after its launch, which came after 64 more
 *    works of the channel were numbered, and an op has at most one work per
 *    channel: with fewer launches before the time read, k = 0. The margin
 *    (32, not 64) leaves room for works without an op of their own that
 *    the events do not show. The analysis keeps the last NS_PT_LAUNCH_LOG
 *    launches: an op judged after more later launches than that cannot be
 *    counted, and is judged an overrun.
 *  - Causality: the op's converted start lies wholly before the start of
 *    its own launch call (a kernel cannot begin before it is launched): the
 *    time of an earlier work, whatever the reason (graph numbering, a stale
 *    timestamp read on a weakly ordered host).
 * The checks are per communicator: NCCL keeps the counters per channel of a
 * communicator. Judgments are kept as id ranges of the ops found to own
 * their pTimers, so that `ncclscope export` can ask about any op after its
 * first pass (ns_analysis_ptimers_own; cfg.keep_op_verdicts, off in the
 * plugin); an op never judged (its Coll/P2p START was lost) does not own
 * its pTimers.
 * Runs on the thread that owns the ns_analysis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

#define NS_PT_OVERRUN_LAUNCHES 32
#define NS_PT_MAX_RANGES 65536u /* per communicator; beyond, further ops are not recorded as owning their pTimers */

static void drift_at(ns_pt_comm* pt, uint64_t ts) {
  if (!pt->drift_since || ts < pt->drift_since) pt->drift_since = ts;
}

static void bcast_remove(ns_pt_comm* pt, uint32_t i) {
  pt->nbcast--;
  pt->bcast_id[i] = pt->bcast_id[pt->nbcast];
  pt->bcast_ts[i] = pt->bcast_ts[pt->nbcast];
}

void ns_pt_api_started(ns_analysis* a, const ns_event* api) {
  const ns_record* r = &api->start;
  if (r->type != NS_EV_COLL_API) return;
  if (ns_func_code_memo(&a->memo_func, ns_an_string(a, r->str[NS_COLL_API_FUNC])) != NS_FUNC_BROADCAST) return;
  ns_comm_state* cs = ns_an_comm(a, r->comm, 1);
  if (!cs) return;
  ns_pt_comm* pt = &cs->pt;
  if (pt->nbcast == NS_PT_PENDING_BCAST) { /* full: the oldest counts as a drift source */
    uint32_t old = 0;
    for (uint32_t i = 1; i < pt->nbcast; i++)
      if (pt->bcast_ts[i] < pt->bcast_ts[old]) old = i;
    drift_at(pt, pt->bcast_ts[old]);
    bcast_remove(pt, old);
  }
  pt->bcast_id[pt->nbcast] = r->id;
  pt->bcast_ts[pt->nbcast] = r->ts;
  pt->nbcast++;
}

void ns_pt_op_started(ns_analysis* a, ns_comm_state* cs, const ns_event* op, uint64_t launch_ts) {
  const ns_record* r = &op->start;
  ns_pt_comm* pt = &cs->pt;
  uint64_t parent = (r->flags & NS_RF_PARENT_RAW) ? 0 : r->parent;
  if (r->type == NS_EV_COLL && parent) /* its CollApi got its Coll: no AllGatherV Broadcast */
    for (uint32_t i = 0; i < pt->nbcast; i++)
      if (pt->bcast_id[i] == parent) {
        bcast_remove(pt, i);
        break;
      }
  uint64_t t = launch_ts && launch_ts <= r->ts ? launch_ts : r->ts;
  uint32_t at = pt->nlaunch % NS_PT_LAUNCH_LOG;
  uint64_t* entry = &pt->launch_log[at];
  if (pt->nlaunch >= NS_PT_LAUNCH_LOG && *entry > pt->launch_lost_max) pt->launch_lost_max = *entry;
  uint64_t before = pt->nlaunch ? pt->launch_max[(pt->nlaunch - 1) % NS_PT_LAUNCH_LOG] : 0;
  *entry = t;
  pt->launch_max[at] = t > before ? t : before;
  pt->launch_min[at] = t;
  /* launches come nearly in time order: this stops after a step or two */
  uint64_t oldest = pt->nlaunch + 1 > NS_PT_LAUNCH_LOG ? pt->nlaunch + 1 - NS_PT_LAUNCH_LOG : 0;
  for (uint64_t k = pt->nlaunch; k > oldest && pt->launch_min[(k - 1) % NS_PT_LAUNCH_LOG] > t; k--)
    pt->launch_min[(k - 1) % NS_PT_LAUNCH_LOG] = t;
  pt->nlaunch++;
  if (r->type == NS_EV_P2P && cs->known && (int64_t)r->num[NS_P2P_PEER] == cs->rank) {
    /* A self send/recv: every op of its group may follow it on the device,
     * and they all start after the group's API calls (its parent, a P2pApi
     * or the legacy Group, started before them). */
    const ns_event* p = parent ? ns_asm_find(a->as, parent) : NULL;
    if (p && p->started && p->start.ts < t) t = p->start.ts;
    drift_at(pt, t);
  }
}

void ns_pt_scan(ns_analysis* a, int flush) {
  uint64_t wait = 5 * a->cfg.grace_ns;
  for (size_t c = 0; c < a->ncomms; c++) {
    ns_comm_state* cs = a->comms[c];
    if (!cs) continue;
    ns_pt_comm* pt = &cs->pt;
    for (uint32_t i = 0; i < pt->nbcast;) {
      if (flush || a->now - pt->bcast_ts[i] > wait) {
        drift_at(pt, pt->bcast_ts[i]);
        bcast_remove(pt, i);
      } else {
        i++;
      }
    }
  }
}

/* ---- the ranges of ops judged to own their pTimers ---- */

/* Index of the first range with lo > id. */
static size_t range_after(const ns_pt_comm* pt, uint64_t id) {
  size_t at;
  NS_LOWER_BOUND(at, pt->nown, i, pt->own[i].lo <= id);
  return at;
}

static int range_insert(ns_pt_comm* pt, size_t at, uint64_t lo, uint64_t hi) {
  if (pt->nown >= NS_PT_MAX_RANGES) return -1;
  ns_id_range* grown = ns_array_room(pt->own, &pt->capown, pt->nown, sizeof *grown, 16);
  if (!grown) return -1;
  pt->own = grown;
  memmove(pt->own + at + 1, pt->own + at, (pt->nown - at) * sizeof *pt->own);
  pt->own[at] = (ns_id_range){lo, hi};
  pt->nown++;
  return 0;
}

/* Consecutive judgments of owned pTimers extend the newest range; a range
 * can therefore span ids judged later, out of order: a later "not own"
 * verdict inside one splits it. */
static void record_verdict(ns_pt_comm* pt, uint64_t id, int own) {
  size_t i = range_after(pt, id);
  ns_id_range* r = i > 0 ? &pt->own[i - 1] : NULL;
  int inside = r && r->hi >= id;
  if (own && !inside) {
    if (r && i == pt->nown && pt->last_own && pt->last_judged == r->hi)
      r->hi = id;
    else
      range_insert(pt, i, id, id);
  } else if (!own && inside) {
    if (r->lo == id && r->hi == id) {
      memmove(r, r + 1, (pt->nown - i) * sizeof *r);
      pt->nown--;
    } else if (r->lo == id) {
      r->lo++;
    } else if (r->hi == id) {
      r->hi--;
    } else {
      uint64_t hi = r->hi;
      r->hi = id - 1;
      range_insert(pt, i, id + 1, hi); /* out of memory: those ops count as not owning theirs */
    }
  }
  pt->last_judged = id;
  pt->last_own = own;
}

int ns_analysis_ptimers_own(ns_analysis* a, uint32_t comm, uint64_t op_id) {
  const ns_comm_state* cs = ns_an_comm(a, comm, 0);
  if (!cs) return 0;
  size_t i = range_after(&cs->pt, op_id);
  return i > 0 && cs->pt.own[i - 1].hi >= op_id;
}

/* ---- the judgment ---- */

/* Launches in (after, until], counted up to NS_PT_OVERRUN_LAUNCHES (the
 * verdict needs no more); UINT32_MAX when the log has overwritten one
 * after `after`: how many there were is then unknown (an op judged after
 * more than NS_PT_LAUNCH_LOG later launches, as when its KernelCh come
 * late while the application launches on). */
static uint32_t launches_between(const ns_pt_comm* pt, uint64_t after, uint64_t until) {
  if (pt->launch_lost_max > after) return UINT32_MAX;
  uint64_t n = pt->nlaunch < NS_PT_LAUNCH_LOG ? pt->nlaunch : NS_PT_LAUNCH_LOG;
  uint32_t count = 0;
  /* Only the entries between the first whose running maximum is later than
   * `after` (none before it is) and the first whose running minimum to the
   * newest is later than `until` (none from it on is) can count: a binary
   * search finds the one, the walk stops at the other, or once the verdict
   * is certain. An op judged long after its launch no longer walks every
   * launch since. */
  uint64_t lo = pt->nlaunch - n, hi = pt->nlaunch; /* ordinals; the first with max > after is in [lo, hi] */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (pt->launch_max[mid % NS_PT_LAUNCH_LOG] > after)
      hi = mid;
    else
      lo = mid + 1;
  }
  for (uint64_t k = lo; k < pt->nlaunch && count < NS_PT_OVERRUN_LAUNCHES; k++) {
    uint32_t i = k % NS_PT_LAUNCH_LOG;
    if (pt->launch_min[i] > until) break;
    count += pt->launch_log[i] > after && pt->launch_log[i] <= until;
  }
  return count;
}

int ns_pt_judge(ns_analysis* a, ns_comm_state* cs, const ns_event* op, uint64_t lower_ts, uint64_t ptimer_last,
                const ns_clockfit* clock) {
  ns_pt_comm* pt = &cs->pt;
  uint64_t start = op->start.ts;
  int why = NS_PT_OWN;
  if (pt->drift_since && start >= pt->drift_since) why = NS_PT_DRIFT;
  for (uint32_t i = 0; why == NS_PT_OWN && i < pt->nbcast; i++)
    if (pt->bcast_ts[i] <= start) why = NS_PT_DRIFT;
  if (why == NS_PT_OWN && lower_ts && clock) {
    uint64_t t = 0;
    double err = INFINITY;
    if (ns_cf_convert(clock, op->ptimer_min, &t, &err) && isfinite(err) && (double)t + err < (double)lower_ts)
      why = NS_PT_CAUSAL;
  }
  if (why == NS_PT_OWN) {
    /* The works that could have overwritten its slots were launched after
     * its own launch and before its last callback read them; better still,
     * before the GPU time of its largest pTimer, when that is bounded: a
     * later work's time lies after that work's launch. */
    uint64_t from = lower_ts ? lower_ts : start;
    uint64_t until = op->has_exec_stop ? op->exec_stop : a->now;
    uint64_t t = 0;
    double err = INFINITY;
    if (clock && ptimer_last && ns_cf_convert(clock, ptimer_last, &t, &err) && isfinite(err) &&
        (double)t + err < (double)until)
      until = (uint64_t)((double)t + err) + 1;
    if (launches_between(pt, from, until) >= NS_PT_OVERRUN_LAUNCHES) why = NS_PT_OVERRUN;
  }
  if (a->cfg.keep_op_verdicts) record_verdict(pt, op->id, why == NS_PT_OWN);
  pt->verdicts[why]++;
  return why;
}

void ns_pt_comms_free(ns_analysis* a) {
  for (size_t i = 0; i < a->ncomms; i++) {
    if (!a->comms[i]) continue;
    ns_pt_comm* pt = &a->comms[i]->pt;
    free(pt->own);
    pt->own = NULL;
    pt->nown = pt->capown = 0;
  }
}
