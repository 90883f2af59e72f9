/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: how late each local rank arrives at a collective.
 *
 * Runs on the thread that owns the ns_analysis. A process often holds
 * several ranks of one communicator (one per GPU of a node, or the
 * simulator's ranks per process); for every collective (communicator id,
 * function, seq) that all of them reached, each rank's lateness is its
 * arrival minus the earliest arrival, and the rank that arrived last (alone)
 * is counted. Arrival is the op's GPU kernel start in the trace clock when it
 * has one, else its Coll start: the definition of `ncclscope report`'s
 * cross-rank view (tools/report/report_ranks.h), which compares every process.
 * Here one process compares only its own ranks; ranks in other processes are
 * that view's.
 *
 * The results count in the window of the op that completed the comparison:
 * ns_late_op hands them to windows.c, which folds them in while that window
 * is still open. Memory: at most
 * NS_LATE_OPEN collectives waiting for their other local ranks; one that
 * waits longer than max_age_ns (a rank that never calls it) is forgotten.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

#define NS_LATE_OPEN 4096

struct ns_late_open {
  uint64_t key, comm_id, seq, first_seen;
  int func;
  uint32_t n, want, n_gpu; /* n_gpu: arrivals that are GPU kernel starts */
  uint32_t comm[NS_LATE_RANKS];
  int32_t rank[NS_LATE_RANKS];
  uint64_t arrival[NS_LATE_RANKS];
};

/* Local ranks of communicator id: comm states that share it. */
static uint32_t local_ranks(ns_analysis* a, uint64_t comm_id) {
  uint32_t n = 0;
  for (size_t i = 0; i < a->ncomms; i++)
    if (a->comms[i] && a->comms[i]->known && a->comms[i]->comm_id == comm_id) n++;
  return n;
}

static int arrives_on_gpu(const ns_op_result* r) {
  return (r->basis == NS_BASIS_GPU || r->basis == NS_BASIS_BATCH) && r->gpu_start_ns &&
         !(r->flags & NS_OPF_PTIMER_FOREIGN);
}

static uint64_t arrival(const ns_op_result* r) { return arrives_on_gpu(r) ? r->gpu_start_ns : r->start_ns; }

static void drop_open(ns_analysis* a, size_t i) {
  ns_idmap_del(&a->late_index, a->late_open[i].key);
  size_t last = a->nlate_open - 1;
  if (i != last) {
    a->late_open[i] = a->late_open[last];
    uint64_t* v = ns_idmap_get(&a->late_index, a->late_open[i].key);
    if (v) *v = i + 1;
  }
  a->nlate_open--;
}

static void compare(const struct ns_late_open* o, ns_late_cmp* out) {
  uint64_t first = UINT64_MAX, latest = 0;
  uint32_t nlatest = 0;
  for (uint32_t i = 0; i < o->n; i++)
    if (o->arrival[i] < first) first = o->arrival[i];
  for (uint32_t i = 0; i < o->n; i++) {
    if (o->arrival[i] > latest) latest = o->arrival[i], nlatest = 0;
    if (o->arrival[i] == latest) nlatest++;
  }
  out->n = o->n;
  out->gpu = o->n_gpu == o->n;
  out->comm_id = o->comm_id;
  for (uint32_t i = 0; i < o->n; i++) {
    out->comm[i] = o->comm[i];
    out->rank[i] = o->rank[i];
    out->late_ns[i] = o->arrival[i] - first;
    out->last[i] = o->arrival[i] == latest && nlatest == 1 && out->late_ns[i] > 0;
  }
}

int ns_late_op(ns_analysis* a, const ns_op_result* r, ns_late_cmp* out) {
  if (r->type != NS_EV_COLL || !r->comm_id || (r->flags & (NS_OPF_NO_START | NS_OPF_INCOMPLETE))) return 0;
  uint64_t key = ns_idmap_mix(ns_idmap_mix(r->comm_id ^ ((uint64_t)(uint32_t)r->func << 56)) ^ r->seq) | 1;
  uint64_t* v = ns_idmap_get(&a->late_index, key);
  struct ns_late_open* o = NULL;
  if (v) {
    o = &a->late_open[*v - 1];
    if (o->comm_id != r->comm_id || o->seq != r->seq || o->func != r->func) return 0; /* a key collision: skipped */
    for (uint32_t i = 0; i < o->n; i++)
      if (o->comm[i] == r->comm) return 0; /* seen twice (a replay of the same seq): compare the first */
  } else {
    uint32_t want = local_ranks(a, r->comm_id);
    if (want < 2 || want > NS_LATE_RANKS || a->nlate_open >= NS_LATE_OPEN) return 0;
    struct ns_late_open* grown = ns_array_room(a->late_open, &a->caplate_open, a->nlate_open, sizeof *grown, 64);
    if (!grown) return 0;
    a->late_open = grown;
    int inserted = 0;
    v = ns_idmap_put(&a->late_index, key, &inserted);
    if (!v) return 0;
    o = &a->late_open[a->nlate_open++];
    memset(o, 0, sizeof *o);
    o->key = key;
    o->comm_id = r->comm_id;
    o->seq = r->seq;
    o->func = r->func;
    o->want = want;
    o->first_seen = a->now;
    *v = a->nlate_open;
  }
  o->comm[o->n] = r->comm;
  o->rank[o->n] = r->rank;
  o->arrival[o->n] = arrival(r);
  o->n_gpu += (uint32_t)arrives_on_gpu(r);
  o->n++;
  if (o->n < o->want) return 0;
  compare(o, out);
  drop_open(a, (size_t)(o - a->late_open));
  return 1;
}

void ns_late_scan(ns_analysis* a, int flush) {
  for (size_t i = 0; i < a->nlate_open;) {
    if (flush || a->now > a->late_open[i].first_seen + a->cfg.max_age_ns)
      drop_open(a, i);
    else
      i++;
  }
}

void ns_late_free(ns_analysis* a) {
  ns_idmap_free(&a->late_index);
  free(a->late_open);
  a->late_open = NULL;
  a->nlate_open = a->caplate_open = 0;
}
