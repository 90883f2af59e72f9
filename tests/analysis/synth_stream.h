/* ncclscope analysis tests: synthetic record streams. Each producing thread
 * pushes its records in its own time order; synth_order then puts them in
 * the order a batching writer delivers them: by arrival time, threads in
 * turn, and each thread's records in the order it pushed them (qsort is not
 * stable, so the push order is an explicit key: a KernelChStop state and
 * the stop that share a timestamp must not swap). */
#ifndef NCCLSCOPE_TEST_SYNTH_STREAM_H
#define NCCLSCOPE_TEST_SYNTH_STREAM_H
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
  ns_record r;
  int thread;
  int tag;          /* the test's own (e.g. which function names a Coll) */
  uint64_t arrival; /* set by the test before synth_order */
  size_t seq;       /* push order */
} synth_ev;

typedef struct {
  synth_ev* v;
  size_t n, cap;
} synth_stream;

static inline synth_ev* synth_push(synth_stream* s, int thread, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id,
                                   uint64_t parent) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 4096;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (!s->v) abort();
  }
  synth_ev* e = &s->v[s->n];
  memset(e, 0, sizeof *e);
  e->r.kind = kind;
  e->r.type = type;
  e->r.comm = 1;
  e->r.ts = ts;
  e->r.id = id;
  e->r.parent = parent;
  e->thread = thread;
  e->seq = s->n++;
  return e;
}

static inline int synth_cmp_arrival(const void* a, const void* b) {
  const synth_ev *x = a, *y = b;
  if (x->arrival != y->arrival) return x->arrival < y->arrival ? -1 : 1;
  if (x->thread != y->thread) return x->thread - y->thread;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static inline void synth_order(synth_stream* s) { qsort(s->v, s->n, sizeof *s->v, synth_cmp_arrival); }

static inline void synth_free(synth_stream* s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
#endif
