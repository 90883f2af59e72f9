/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: kernel batches.
 *
 * NCCL (2.27+, device/common.h) runs the works of a plan in batches, and
 * writes one start and one end time per batch into every work's profiler
 * slot: grouped collectives of one function, type, algorithm and protocol,
 * and the P2ps of a group (up to 8 per batch), all get the batch's interval
 * (docs/simulator.md, NCCL behaviour 2). Such an op has no GPU duration of
 * its own, and dividing its bytes by the batch's time understates its
 * bandwidth up to the number of ops in the batch. So ops are published as
 * what they were part of: ops of one plan (their legacy Group, on one
 * communicator), all P2ps or all Colls of one function, datatype, algorithm
 * and protocol, whose GPU intervals overlap and began within one timer
 * quantum of each other form a batch (two batches of one channel run one
 * after the other, so their intervals do not overlap). The batch has the
 * bytes of its ops and its interval (earliest start to latest stop, raw
 * pTimers of one GPU clock); each op says it was part of it and has no
 * bandwidth of its own. A batch counts once in the windows and the summary.
 *
 * Only ops whose pTimers are their own (ptimers.c) and give a GPU duration
 * are held here, until no op joined their batch for NS_BATCH_HOLD_GRACES
 * grace periods (ops of one batch end together, so they become final
 * together, give or take how late their records arrive) and no op of their
 * plan is still to become final (one whose KernelCh come late), at most
 * NS_BATCH_OPEN at once (the oldest is closed first). Every other op is
 * published at once. Closed batches are remembered (op id -> batch, up to
 * NS_BATCH_KEEP ops) for ns_analysis_batch_of when cfg.keep_op_verdicts asks.
 * Runs on the thread that owns the ns_analysis.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

#define NS_BATCH_OPEN 256
/* A batch closes when no op joined it for this many grace periods. Its ops
 * end together, but their records need not reach the analysis together: a
 * thread descheduled between its timestamp and its ring commit, or a ring
 * drained a pass later, delivers them behind the newest time seen (up to 46
 * ms under TSan in CI, where one grace period, 20 ms, split a batch of a
 * Send and a Recv). The oldest batch closes first when NS_BATCH_OPEN are
 * open: above about 2,500 ops a second a batch is held for less (each new
 * op scans the open batches: more would cost the writer more per op). */
#define NS_BATCH_HOLD_GRACES 5
#define NS_BATCH_KEEP (1u << 21) /* batched ops remembered for ns_analysis_batch_of (about 48 MB at most) */
/* Plans with ops not yet final. Every op that starts becomes final once (the
 * assembler's `done`), so this counts the plans in flight; the cap only
 * guards memory should that ever fail: the counts are then forgotten, and
 * the batches of those plans close on their quiet time alone. */
#define NS_PLANS_PENDING_MAX (1u << 16)

void ns_an_publish(ns_analysis* a, const ns_op_result* r) {
  a->st.ops++;
  if (r->flags & NS_OPF_INCOMPLETE) a->st.ops_incomplete++;
  if (a->cfg.on_op) a->cfg.on_op(a->cfg.user, r);
  ns_win_op_done(a, r);
}

/* The held op's strings are its own: point the result at them. */
static ns_op_result* held_result(ns_held_op* h) {
  h->r.func_name = h->func;
  h->r.dtype = h->dtype;
  h->r.algo = h->algo;
  h->r.proto = h->proto;
  return &h->r;
}

static int same_kind(ns_held_op* h, const ns_op_result* r) {
  if (h->r.type != r->type) return 0;
  if (r->type == NS_EV_P2P) return 1;
  return strcmp(h->func, r->func_name) == 0 && strcmp(h->dtype, r->dtype) == 0 && strcmp(h->algo, r->algo) == 0 &&
         strcmp(h->proto, r->proto) == 0;
}

static void remember(ns_analysis* a, const ns_batch_open* b, const ns_batch_info* info) {
  if (!a->cfg.keep_op_verdicts) return;
  if (a->batch_store_full) return;
  ns_batch_info* grown = ns_array_room(a->batches, &a->capbatches, a->nbatches, sizeof *grown, 64);
  if (!grown) {
    a->batch_store_full = 1;
    return;
  }
  a->batches = grown;
  a->batches[a->nbatches] = *info;
  for (size_t i = 0; i < b->n; i++) {
    int inserted;
    uint64_t* slot = a->batch_of.len < NS_BATCH_KEEP ? ns_idmap_put(&a->batch_of, b->ops[i].r.id, &inserted) : NULL;
    if (!slot) {
      a->batch_store_full = 1; /* from now on an op not found may have been batched */
      return;
    }
    *slot = a->nbatches + 1;
  }
  a->nbatches++;
}

int ns_analysis_batch_of(ns_analysis* a, uint64_t op_id, ns_batch_info* out) {
  const uint64_t* at = ns_idmap_get(&a->batch_of, op_id);
  if (at) {
    *out = a->batches[*at - 1];
    return 1;
  }
  memset(out, 0, sizeof *out);
  return a->batch_store_full || !a->cfg.keep_op_verdicts ? -1 : 0;
}

/* The open_plans key of the batches of plan on comm: never 0. Two pairs
 * may share a key; their counts then add up and a search looks at more
 * batches, never at fewer. */
static uint64_t batch_key(uint32_t comm, uint64_t plan) {
  uint64_t k = plan * 0x9E3779B97F4A7C15ull + comm;
  return k ? k : 1;
}

/* b is no longer open: its key counts one batch less. */
static void batch_gone(ns_analysis* a, const ns_batch_open* b) {
  uint64_t key = batch_key(b->comm, b->plan);
  uint64_t* n = ns_idmap_get(&a->open_plans, key);
  if (n && --*n == 0) ns_idmap_del(&a->open_plans, key);
}

/* The i-th open batch, oldest first. */
static ns_batch_open* open_at(ns_analysis* a, size_t i) {
  return &a->open_batches[(a->open_head + i) % NS_BATCH_OPEN];
}

/* Publishes b's ops and frees them; the caller takes b off the ring. */
static void close_batch(ns_analysis* a, ns_batch_open* b) {
  batch_gone(a, b);
  if (b->n == 1 || b->nown == 0) { /* alone, or no op whose times are known to be the batch's */
    for (size_t k = 0; k < b->n; k++) ns_an_publish(a, held_result(&b->ops[k]));
  } else if (b->n > 1) {
    ns_batch_info info = {.ops = (uint32_t)b->n, .func = b->ops[0].r.func, .dur_ns = b->p1 - b->p0,
                          .first_op = b->ops[0].r.id};
    ns_op_result batch = *held_result(&b->ops[0]); /* the batch as one call, for windows and the summary */
    char label[NS_STR_LEN];
    batch.count = 0;
    for (size_t k = 0; k < b->n; k++) {
      const ns_op_result* r = &b->ops[k].r;
      info.bytes += r->bytes;
      batch.count += r->count;
      if (r->func != info.func) info.func = NS_FUNC_SENDRECV; /* sends and receives of one group */
      if (r->id < info.first_op) info.first_op = r->id;
    }
    info.algbw_gbs = ns_algbw_gbs(info.bytes, info.dur_ns);
    info.busbw_gbs = info.algbw_gbs * ns_busbw_factor(info.func, batch.nranks);
    remember(a, b, &info);
    batch.func = info.func;
    if (info.func != b->ops[0].r.func) {
      ns_an_copy_str(label, ns_func_name(info.func));
      batch.func_name = label;
    }
    batch.bytes = info.bytes;
    batch.dur_ns = info.dur_ns;
    batch.basis = NS_BASIS_GPU;
    batch.batch_ops = info.ops;
    ns_win_batch_done(a, &batch);
    a->st.batches++;
    a->st.ops_batched += b->n;
    for (size_t k = 0; k < b->n; k++) {
      ns_op_result* r = held_result(&b->ops[k]);
      r->flags |= NS_OPF_BATCHED;
      r->batch_ops = info.ops;
      r->batch_func = info.func;
      r->batch_bytes = info.bytes;
      r->batch_dur_ns = info.dur_ns;
      r->batch_algbw_gbs = info.algbw_gbs;
      r->batch_busbw_gbs = info.busbw_gbs;
      r->batch_id = info.first_op;
      r->basis = NS_BASIS_BATCH;
      r->dur_ns = info.dur_ns;
      r->algbw_gbs = r->busbw_gbs = 0; /* never its bytes over the batch's time */
      ns_an_publish(a, r);
    }
  }
  free(b->ops);
  b->ops = NULL;
}

/* Closes the oldest open batch: O(1), the ring's head moves on. */
static void close_oldest(ns_analysis* a) {
  close_batch(a, open_at(a, 0));
  a->open_head = (a->open_head + 1) % NS_BATCH_OPEN;
  a->nopen_batches--;
}

/* An op of `b` whose GPU start is this very pTimer, to the tick. */
static int has_member_start(const ns_batch_open* b, uint64_t p0) {
  for (size_t k = 0; k < b->n; k++)
    if (b->ops[k].p0 == p0) return 1;
  return 0;
}

void ns_batch_op(ns_analysis* a, const ns_op_result* r, uint64_t plan, uint64_t p0, uint64_t p1) {
  /* An op whose pTimers may be another work's (ptimers.c: a KernelCh seen after
   * so many later launches that the slot may have been reused, say) still
   * joins a batch of its plan and kind when an op of it that owns its
   * pTimers started at the very same tick: NCCL writes one start for the
   * batch as a whole (its channels' stops may differ by a tick), so that
   * start is its own too. Then its bytes count in the batch, whose interval
   * stays its own ops', and it has no bandwidth over the batch's time. It
   * never forms a batch without such an op. */
  int own = r->basis == NS_BASIS_GPU && p1 >= p0;
  int weak = !own && plan && (r->flags & NS_OPF_PTIMER_FOREIGN) && p0 && p1 > p0;
  if (!own && !weak) {
    ns_an_publish(a, r);
    return;
  }
  uint64_t q = a->cfg.timer_quantum_ns;
  ns_batch_open* b = NULL;
  /* The oldest open batch it fits. Newest first, and only until every open
   * batch of its key was looked at: a plan's batches are recent, and an op
   * of a plan with none open (most ops) looks at none. */
  uint64_t key = batch_key(r->comm, plan);
  const uint64_t* with_key = ns_idmap_get(&a->open_plans, key);
  size_t left = a->open_plans_lost ? SIZE_MAX : with_key ? *with_key : 0;
  for (size_t i = a->nopen_batches; left && i-- > 0;) {
    ns_batch_open* o = open_at(a, i);
    if (!a->open_plans_lost && batch_key(o->comm, o->plan) != key) continue;
    left--;
    if (o->comm != r->comm || o->plan != plan || !same_kind(&o->ops[0], r)) continue;
    if (own && o->nown) {
      int together = (p0 > o->p0 ? p0 - o->p0 : o->p0 - p0) <= q;
      int overlap = (p0 < o->p1 && o->p0 < p1) || (p0 == o->p0 && p1 == o->p1);
      if (together && overlap) b = o;
    } else if (has_member_start(o, p0)) {
      b = o;
    }
  }
  if (!b) {
    if (!a->open_batches && !(a->open_batches = malloc(NS_BATCH_OPEN * sizeof *a->open_batches))) {
      ns_an_publish(a, r);
      return;
    }
    if (a->nopen_batches == NS_BATCH_OPEN) close_oldest(a);
    int inserted;
    uint64_t* n = ns_idmap_put(&a->open_plans, key, &inserted);
    if (n) ++*n;
    else a->open_plans_lost = 1;
    b = open_at(a, a->nopen_batches++);
    *b = (ns_batch_open){.comm = r->comm, .plan = plan, .p0 = p0, .p1 = p1};
  }
  ns_held_op* ops = ns_array_room(b->ops, &b->cap, b->n, sizeof *ops, 4);
  if (!ops) { /* out of memory: the op goes out alone */
    if (b->n == 0) { /* the batch just opened: the newest, so the ring's tail */
      batch_gone(a, b);
      a->nopen_batches--;
    }
    ns_an_publish(a, r);
    return;
  }
  b->ops = ops;
  ns_held_op* h = &b->ops[b->n++];
  h->r = *r;
  ns_an_copy_str(h->func, r->func_name);
  ns_an_copy_str(h->dtype, r->dtype);
  ns_an_copy_str(h->algo, r->algo);
  ns_an_copy_str(h->proto, r->proto);
  h->p0 = p0;
  h->p1 = p1;
  h->own = (uint8_t)own;
  if (own && b->nown++ == 0) { /* the batch's interval is its own ops' */
    b->p0 = p0;
    b->p1 = p1;
  } else if (own) {
    if (p0 < b->p0) b->p0 = p0;
    if (p1 > b->p1) b->p1 = p1;
  }
  b->last_join = a->now;
}

void ns_batch_plan_started(ns_analysis* a, uint64_t plan) {
  if (a->plan_pending.len >= NS_PLANS_PENDING_MAX) {
    ns_idmap_free(&a->plan_pending);
    ns_idmap_init(&a->plan_pending);
  }
  int inserted;
  uint64_t* n = plan ? ns_idmap_put(&a->plan_pending, plan, &inserted) : NULL;
  if (n) ++*n; /* out of memory: the plan's batches close on the quiet time alone */
}

void ns_batch_plan_final(ns_analysis* a, uint64_t plan) {
  uint64_t* n = plan ? ns_idmap_get(&a->plan_pending, plan) : NULL;
  if (n && --*n == 0) ns_idmap_del(&a->plan_pending, plan);
}

/* A batch is held while an op of its plan may still join it: an op of the
 * batch whose KernelCh records come late (a busy proxy thread sees the GPU's
 * ring writes milliseconds to seconds after the others') becomes final
 * late. The assembler gives such an op up after its kernel wait at the
 * latest, so the hold ends then too; kernel_wait_ns bounds it regardless. */
static int batch_held(ns_analysis* a, const ns_batch_open* b) {
  uint64_t quiet = a->now - b->last_join, hold = NS_BATCH_HOLD_GRACES * a->cfg.grace_ns;
  if (quiet < hold) return 1;
  return b->plan && ns_idmap_get(&a->plan_pending, b->plan) && quiet < hold + a->cfg.kernel_wait_ns;
}

/* Closes the batches no longer held, oldest first, in one pass: those still
 * held move up, in their order, into the places the closed ones left. */
void ns_batch_scan(ns_analysis* a, int flush) {
  size_t kept = 0;
  for (size_t i = 0; i < a->nopen_batches; i++) {
    ns_batch_open* b = open_at(a, i);
    if (flush || !batch_held(a, b))
      close_batch(a, b);
    else if (kept++ != i)
      *open_at(a, kept - 1) = *b;
  }
  a->nopen_batches = kept;
}

void ns_batch_free(ns_analysis* a) {
  for (size_t i = 0; i < a->nopen_batches; i++) free(open_at(a, i)->ops);
  free(a->open_batches);
  free(a->batches);
  ns_idmap_free(&a->batch_of);
  ns_idmap_free(&a->plan_pending);
  ns_idmap_free(&a->open_plans);
  a->open_batches = NULL;
  a->batches = NULL;
  a->nopen_batches = a->open_head = a->nbatches = a->capbatches = 0;
}
