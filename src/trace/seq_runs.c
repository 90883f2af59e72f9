/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope reader: the sequence numbers accounted for (see seq_runs.h). */
#include "trace/seq_runs.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* Index of the last run whose lo <= seq, or SIZE_MAX when none. */
static size_t run_before(const ns_seq_runs* s, uint64_t seq) {
  if (s->last < s->n && s->runs[s->last].lo <= seq && (s->last + 1 == s->n || s->runs[s->last + 1].lo > seq))
    return s->last;
  size_t lo = 0, hi = s->n; /* runs[0..lo) have lo <= seq; runs[hi..) have lo > seq */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->runs[mid].lo <= seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? lo - 1 : SIZE_MAX;
}

/* For a run with lo <= seq: how far seq is past its last seq (0: it holds seq, 1: seq extends it).
 * Written without lo + n, which overflows for a run that ends at UINT64_MAX. */
static uint64_t past(const ns_seq_run* r, uint64_t seq) { return seq - r->lo < r->n ? 0 : seq - r->lo - r->n + 1; }

int ns_seq_runs_has(const ns_seq_runs* s, uint64_t seq) {
  size_t i = run_before(s, seq);
  return i != SIZE_MAX && past(&s->runs[i], seq) == 0;
}

int ns_seq_runs_add(ns_seq_runs* s, uint64_t seq) {
  size_t i = run_before(s, seq);
  if (i != SIZE_MAX && past(&s->runs[i], seq) == 0) return 0;
  size_t next = i == SIZE_MAX ? 0 : i + 1; /* the run after seq, if any */
  /* seq below every run opens the gap up to the first; above every run, the
   * gap from the last; between two runs, it fills one seq of their gap. */
  uint64_t missing = s->missing;
  if (s->n && i == SIZE_MAX)
    missing += s->runs[0].lo - seq - 1;
  else if (s->n && next == s->n)
    missing += past(&s->runs[i], seq) - 1;
  else if (s->n)
    missing -= 1;

  int extends = i != SIZE_MAX && past(&s->runs[i], seq) == 1;
  int precedes = next < s->n && seq + 1 == s->runs[next].lo;
  if (extends && precedes) { /* fills the one-seq gap between run i and the next: they become one */
    s->runs[i].n += 1 + s->runs[next].n;
    memmove(&s->runs[next], &s->runs[next + 1], (s->n - next - 1) * sizeof *s->runs);
    s->n--;
  } else if (extends) {
    s->runs[i].n++;
  } else if (precedes) {
    s->runs[next].lo--;
    s->runs[next].n++;
    i = next;
  } else {
    ns_seq_run* grown = ns_array_room(s->runs, &s->cap, s->n, sizeof *s->runs, 8);
    if (!grown) return -1;
    s->runs = grown;
    memmove(&s->runs[next + 1], &s->runs[next], (s->n - next) * sizeof *s->runs);
    s->runs[next] = (ns_seq_run){.lo = seq, .n = 1};
    s->n++;
    i = next;
  }
  s->last = i;
  s->missing = missing;
  return 0;
}

void ns_seq_runs_free(ns_seq_runs* s) {
  free(s->runs);
  memset(s, 0, sizeof *s);
}
