/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: operations by userTag (ns_tag_stats, analysis.h).
 *
 * A tag is any 64-bit value the application chose, so a run may carry
 * thousands: a table keeps the NS_TAGS_MAX smallest tag values of a
 * communicator it has seen, and folds the operations of every other tag
 * into that communicator's `other` row (a smaller tag coming later takes the
 * row of the largest, whose counts move to `other`). The rule depends on
 * the set of tags alone, not on the order they came in, so tables merged
 * (windows into the run, ranks into the summary) stay exact: a tag among the
 * NS_TAGS_MAX smallest of the union is among the smallest of every table
 * that saw it. Memory: (NS_TAGS_MAX + 1) rows a communicator.
 * Runs on the thread that owns the analysis (or the summary).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

static uint64_t comm_key(const ns_tag_table* t, const ns_tag_stats* x) { return t->by_id ? x->comm_id : x->comm; }

/* A row key's hash (never 0, the map's empty key); keys that collide are told apart by same_row. */
static uint64_t row_hash(const ns_tag_table* t, const ns_tag_stats* x) {
  return (ns_idmap_mix(comm_key(t, x) * 2 + (x->other ? 1 : 0)) ^ ns_idmap_mix(~x->tag)) | 1;
}

static int same_row(const ns_tag_table* t, const ns_tag_stats* a, const ns_tag_stats* b) {
  return comm_key(t, a) == comm_key(t, b) && a->tag == b->tag && !a->other == !b->other;
}

static ns_tag_stats* find(const ns_tag_table* t, const ns_tag_stats* x, uint64_t h) {
  uint64_t* at = ns_idmap_get(&t->at, h);
  if (!at) return NULL;
  if (same_row(t, &t->t[*at - 1], x)) return &t->t[*at - 1];
  for (size_t i = 0; i < t->n; i++) /* another key with this hash holds the slot */
    if (same_row(t, &t->t[i], x)) return &t->t[i];
  return NULL;
}

static ns_tag_stats* make(ns_tag_table* t, const ns_tag_stats* key, uint64_t h) {
  ns_tag_stats* r;
  NS_ARRAY_PUSH(r, t->t, t->cap, t->n, 16);
  if (!r) return NULL;
  r->comm = key->comm;
  r->comm_id = key->comm_id;
  r->tag = key->other ? 0 : key->tag;
  r->other = key->other ? 1 : 0;
  int fresh = 0;
  uint64_t* at = ns_idmap_put(&t->at, h, &fresh);
  if (!at) { /* a row that find() could not reach: none */
    t->n--;
    return NULL;
  }
  if (fresh) *at = t->n; /* else the slot stays another key's: find() scans */
  return r;
}

/* The row index made again, after rows moved or changed keys. */
static void reindex(ns_tag_table* t) {
  ns_idmap_free(&t->at);
  ns_idmap_free(&t->largest);
  for (size_t i = 0; i < t->n; i++) {
    int fresh = 0;
    uint64_t* at = ns_idmap_put(&t->at, row_hash(t, &t->t[i]), &fresh);
    if (at && fresh) *at = i + 1;
  }
}

/* The index of the kept row of x's communicator with the largest tag (it has NS_TAGS_MAX of them). */
static size_t largest_kept(ns_tag_table* t, const ns_tag_stats* x) {
  uint64_t ck = comm_key(t, x) + 1;
  uint64_t* cached = ns_idmap_get(&t->largest, ck);
  if (cached) return (size_t)(*cached - 1);
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < t->n; i++)
    if (!t->t[i].other && comm_key(t, &t->t[i]) == ck - 1 && (best == SIZE_MAX || t->t[i].tag > t->t[best].tag))
      best = i;
  int fresh = 0;
  uint64_t* slot = best != SIZE_MAX ? ns_idmap_put(&t->largest, ck, &fresh) : NULL;
  if (slot) *slot = best + 1;
  return best;
}

static ns_tag_stats* other_row(ns_tag_table* t, const ns_tag_stats* x) {
  ns_tag_stats o = *x;
  o.other = 1;
  o.tag = 0;
  uint64_t oh = row_hash(t, &o);
  ns_tag_stats* r = find(t, &o, oh);
  return r ? r : make(t, &o, oh);
}

static void add_counts(ns_tag_table* t, ns_tag_stats* r, const ns_tag_stats* x) {
  /* a table of merged rows counts each rank's row; one rank's table (a window into the total) keeps 1 */
  r->ranks = t->by_id ? r->ranks + x->ranks : (x->ranks > r->ranks ? x->ranks : r->ranks);
  r->ops += x->ops;
  r->bytes += x->bytes;
  r->timed += x->timed;
  r->dur_ns_sum += x->dur_ns_sum;
}

/* x's tag takes the row of its communicator's largest kept tag, when smaller; NULL: x is folded. */
static ns_tag_stats* displace(ns_tag_table* t, const ns_tag_stats* x) {
  size_t big = largest_kept(t, x);
  if (big == SIZE_MAX || x->tag >= t->t[big].tag) return NULL;
  ns_tag_stats gone = t->t[big];
  ns_tag_stats* o = other_row(t, &gone); /* may move the rows */
  if (!o) return NULL;
  add_counts(t, o, &gone);
  ns_tag_stats* r = &t->t[big];
  memset(r, 0, sizeof *r);
  r->comm = x->comm;
  r->comm_id = x->comm_id;
  r->tag = x->tag;
  reindex(t);
  return r;
}

int ns_tags_add(ns_tag_table* t, const ns_tag_stats* x) {
  uint64_t h = row_hash(t, x);
  ns_tag_stats* r = find(t, x, h);
  if (!r && !x->other) {
    int fresh = 0;
    uint64_t* kept = ns_idmap_put(&t->kept, comm_key(t, x) + 1, &fresh); /* +1: never the empty key 0 */
    if (!kept) return -1;
    if (*kept < NS_TAGS_MAX) {
      r = make(t, x, h);
      if (!r) return -1;
      ++*kept;
      ns_idmap_del(&t->largest, comm_key(t, x) + 1);
    } else {
      r = displace(t, x);
    }
  }
  if (!r) r = other_row(t, x); /* folded into the communicator's other row */
  if (!r) return -1;
  add_counts(t, r, x);
  return 0;
}
void ns_tags_op(ns_tag_table* t, const ns_op_result* r) {
  int own_time = r->basis != NS_BASIS_NONE && !(r->flags & NS_OPF_BATCHED);
  ns_tag_stats x = {.comm = r->comm,
                    .comm_id = r->comm_id,
                    .tag = r->user_tag,
                    .ranks = 1,
                    .ops = 1,
                    .bytes = r->bytes,
                    .timed = own_time ? 1 : 0,
                    .dur_ns_sum = own_time ? r->dur_ns : 0};
  (void)ns_tags_add(t, &x); /* out of memory: the op is left out of its tag's counts */
}

void ns_tags_sort(ns_tag_table* t, int (*cmp)(const void*, const void*)) {
  if (t->n) qsort(t->t, t->n, sizeof *t->t, cmp);
  reindex(t); /* the rows moved */
}

void ns_tags_free(ns_tag_table* t) {
  free(t->t);
  ns_idmap_free(&t->at);
  ns_idmap_free(&t->kept);
  ns_idmap_free(&t->largest);
  int by_id = t->by_id;
  memset(t, 0, sizeof *t);
  t->by_id = by_id;
}
