/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: mismatched calls (report_ranks_match.h).
 *
 * Every rank of a communicator must post its collectives in the same order
 * with the same function and arguments; NCCL counts seq per function, so a
 * rank that posts AllGather where the others post AllReduce, or skips one,
 * is matched by (function, seq) with the wrong collective of the others, or
 * with none. Here each rank's collectives of a communicator are put in the
 * order it posted them (its trace's Colls by their start: the host's order,
 * which the GPU's may not keep within a group; a flight record's ops carry
 * no arguments and are left out), and place p of every rank is
 * compared: the value (function and arguments) most ranks posted there, by
 * a majority vote over the ranks (Boyer-Moore: one pass, no table), is
 * the reference when more than half of the ranks that posted something
 * there agree on it. A rank that differs is odd at its first such place
 * (later places of it are consequences and only counted): it skipped the
 * reference when its calls from p match the reference's from p + 1 for up
 * to NS_XR_SHIFT_PLACES places, it posted one more when its calls from
 * p + 1 match the reference's from p, else it posted another call. A place
 * where no value has a majority (two ranks that disagree) names no rank.
 * A rank whose record ends early (a hang, a crash) simply has no more
 * places: that is the hang view's to judge, not a mismatch; a rank whose
 * record is not complete (ns_xr_file_end: a lost block, dropped events) is
 * left out, since any of its collectives may be missing.
 *
 * Memory: per communicator, an index of 4 bytes per op and the reference
 * (24 bytes a place). */
#include "report/report_ranks_match.h"

#include <string.h>

typedef struct {
  int16_t func;
  uint32_t call;
} ns_xrank_value;

static int same(ns_xrank_value a, ns_xrank_value b) { return a.func == b.func && a.call == b.call; }

typedef struct {
  const ns_xrank_op* ops;
  uint32_t* order; /* its trace ops, in the order posted */
  size_t n;
} rank_calls;

static const ns_xrank_op* by_posting_ops;
static int by_posting(const void* a, const void* b) {
  const ns_xrank_op* p = &by_posting_ops[*(const uint32_t*)a];
  const ns_xrank_op* q = &by_posting_ops[*(const uint32_t*)b];
  if (p->posted != q->posted) return p->posted < q->posted ? -1 : 1;
  if (p->func != q->func) return p->func < q->func ? -1 : 1;
  return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static ns_xrank_value value_at(const rank_calls* r, size_t p) {
  const ns_xrank_op* o = &r->ops[r->order[p]];
  return (ns_xrank_value){o->func, o->call};
}

/* Rank r's calls from place a equal the reference's from place b, for up to
 * NS_XR_SHIFT_PLACES places (at least one) where both have one. */
static int matches_shifted(const rank_calls* r, size_t a, const ns_xrank_value* ref, const uint32_t* ref_n, size_t nref,
                           size_t b) {
  size_t k = 0;
  for (; k < NS_XR_SHIFT_PLACES && a + k < r->n && b + k < nref && ref_n[b + k]; k++)
    if (!same(value_at(r, a + k), ref[b + k])) return 0;
  return k > 0;
}

static void add_mismatch(ns_xrank_comm* c, const ns_xrank_mismatch* m) {
  ns_xrank_mismatch* nm = realloc(c->mm, (c->nmm + 1) * sizeof *nm);
  if (!nm) return;
  c->mm = nm;
  c->mm[c->nmm++] = *m;
}

static void match_comm(const ns_xr* x, ns_xrank_comm* c) {
  rank_calls* rc = calloc(c->nranks, sizeof *rc);
  if (!rc) return;
  size_t places = 0;
  for (uint32_t r = 0; r < c->nranks; r++) {
    const ns_xrank_rank* rk = &c->ranks[r];
    rc[r].ops = rk->ops;
    rc[r].order = malloc((rk->nops ? rk->nops : 1) * sizeof *rc[r].order);
    if (!rc[r].order) goto out;
    int complete = rk->has_trace && rk->file >= 0 && !x->files[rk->file].is_fr && x->files[rk->file].clean_end;
    for (size_t i = 0; i < rk->nops && complete; i++) /* an incomplete record may lack any op */
      if (!(rk->ops[i].flags & NS_XRANK_FR) && rk->ops[i].call) rc[r].order[rc[r].n++] = (uint32_t)i;
    by_posting_ops = rk->ops;
    qsort(rc[r].order, rc[r].n, sizeof *rc[r].order, by_posting);
    if (rc[r].n > places) places = rc[r].n;
  }
  ns_xrank_value* ref = malloc((places ? places : 1) * sizeof *ref);
  uint32_t* ref_n = calloc(places ? places : 1, sizeof *ref_n); /* ranks that posted the reference; 0: none */
  uint32_t* present = calloc(places ? places : 1, sizeof *present);
  uint64_t* ref_seq = calloc(places ? places : 1, sizeof *ref_seq);
  if (!ref || !ref_n || !present || !ref_seq) goto out_ref;
  for (size_t p = 0; p < places; p++) {
    ns_xrank_value cand = {0, 0};
    uint32_t votes = 0;
    for (uint32_t r = 0; r < c->nranks; r++) { /* the majority candidate */
      if (p >= rc[r].n) continue;
      ns_xrank_value v = value_at(&rc[r], p);
      present[p]++;
      if (!votes)
        cand = v, votes = 1;
      else
        votes += same(v, cand) ? 1 : (uint32_t)-1;
    }
    uint32_t agree = 0;
    for (uint32_t r = 0; r < c->nranks; r++)
      if (p < rc[r].n && same(value_at(&rc[r], p), cand)) {
        if (!agree) ref_seq[p] = rc[r].ops[rc[r].order[p]].seq;
        agree++;
      }
    ref[p] = cand;
    ref_n[p] = 2 * agree > present[p] ? agree : 0;
    if (agree < present[p]) {
      c->mm_places++;
      if (!ref_n[p] && present[p] >= 2) c->mm_tie = 1;
    }
  }
  for (uint32_t r = 0; r < c->nranks; r++) {
    for (size_t p = 0; p < rc[r].n; p++) {
      if (!ref_n[p]) continue; /* no majority here: no rank to name */
      ns_xrank_value v = value_at(&rc[r], p);
      if (same(v, ref[p])) continue;
      const ns_xrank_op* o = &rc[r].ops[rc[r].order[p]];
      ns_xrank_mismatch m = {.rank = (int32_t)r,
                             .kind = NS_XRANK_MM_CALL,
                             .pos = p,
                             .got_func = o->func,
                             .got_seq = o->seq,
                             .got_call = o->call,
                             .want_func = ref[p].func,
                             .want_seq = ref_seq[p],
                             .want_call = ref[p].call,
                             .agree = ref_n[p],
                             .ranks = present[p]};
      if (matches_shifted(&rc[r], p, ref, ref_n, places, p + 1))
        m.kind = NS_XRANK_MM_SKIPPED;
      else if (matches_shifted(&rc[r], p + 1, ref, ref_n, places, p))
        m.kind = NS_XRANK_MM_EXTRA;
      add_mismatch(c, &m);
      break; /* what follows its first mismatch are consequences */
    }
  }
out_ref:
  free(ref);
  free(ref_n);
  free(present);
  free(ref_seq);
out:
  for (uint32_t r = 0; r < c->nranks; r++) free(rc[r].order);
  free(rc);
}

void ns_xrank_match_calls(ns_xr* x) {
  for (size_t i = 0; i < x->ncomms; i++) {
    ns_xrank_comm* c = &x->comms[i];
    if (c->nranks < 2 || !c->nops) continue;
    match_comm(x, c);
    x->nmismatches += c->nmm || c->mm_tie;
  }
}
