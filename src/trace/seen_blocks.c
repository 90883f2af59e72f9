/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope reader: the set of blocks already read (see seen_blocks.h). */
#include "trace/seen_blocks.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* Index of the last run whose lo <= seq, or SIZE_MAX when none. */
static size_t run_before(const ns_seen_blocks* s, uint64_t seq) {
  size_t lo = 0, hi = s->n; /* runs[0..lo) have lo <= seq; runs[hi..) have lo > seq */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->runs[mid].lo <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo ? lo - 1 : SIZE_MAX;
}

static int run_holds(const ns_seen_run* r, uint64_t seq) { return seq >= r->lo && seq - r->lo < r->n; }

int ns_seen_blocks_has(const ns_seen_blocks* s, uint64_t seq, uint32_t crc) {
  size_t i = s->last < s->n && run_holds(&s->runs[s->last], seq) ? s->last : run_before(s, seq);
  if (i == SIZE_MAX || !run_holds(&s->runs[i], seq)) return 0;
  return s->runs[i].crc[seq - s->runs[i].lo] == crc;
}

static int run_append(ns_seen_run* r, uint32_t crc) {
  uint32_t* grown = ns_array_room(r->crc, &r->cap, r->n, sizeof *r->crc, 16);
  if (!grown) return -1;
  r->crc = grown;
  r->crc[r->n++] = crc;
  return 0;
}

/* Joins run i + 1 to run i when they have become adjacent. */
static int join_next(ns_seen_blocks* s, size_t i) {
  if (i + 1 >= s->n) return 0;
  ns_seen_run *a = &s->runs[i], *b = &s->runs[i + 1];
  if (a->lo + a->n != b->lo) return 0;
  if (a->cap < a->n + b->n) {
    uint32_t* grown = realloc(a->crc, (a->n + b->n) * sizeof *a->crc);
    if (!grown) return -1; /* left adjacent: lookups still find both */
    a->crc = grown;
    a->cap = a->n + b->n;
  }
  memcpy(a->crc + a->n, b->crc, b->n * sizeof *b->crc);
  a->n += b->n;
  free(b->crc);
  memmove(b, b + 1, (s->n - i - 2) * sizeof *b);
  s->n--;
  return 0;
}

int ns_seen_blocks_add(ns_seen_blocks* s, uint64_t seq, uint32_t crc) {
  size_t i = s->last < s->n && s->runs[s->last].lo <= seq &&
                     (s->last + 1 == s->n || s->runs[s->last + 1].lo > seq)
                 ? s->last
                 : run_before(s, seq);
  if (i != SIZE_MAX && run_holds(&s->runs[i], seq)) return 0;
  if (i != SIZE_MAX && seq - s->runs[i].lo == s->runs[i].n) { /* extends run i */
    if (run_append(&s->runs[i], crc)) return -1;
    s->last = i;
    return join_next(s, i);
  }
  /* A new run after run i (at 0 when none is before). */
  size_t at = i == SIZE_MAX ? 0 : i + 1;
  ns_seen_run* grown = ns_array_room(s->runs, &s->cap, s->n, sizeof *s->runs, 8);
  if (!grown) return -1;
  s->runs = grown;
  ns_seen_run r = {.lo = seq};
  if (run_append(&r, crc)) return -1;
  memmove(&s->runs[at + 1], &s->runs[at], (s->n - at) * sizeof *s->runs);
  s->runs[at] = r;
  s->n++;
  s->last = at;
  return join_next(s, at);
}

void ns_seen_blocks_free(ns_seen_blocks* s) {
  for (size_t i = 0; i < s->n; i++) free(s->runs[i].crc);
  free(s->runs);
  memset(s, 0, sizeof *s);
}
