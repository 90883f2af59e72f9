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

#include "ncclscope/analysis.h"

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
  e->r = ns_record_make(kind, type, 1, ts, id, parent);
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

/* Record strings: a fixed table; a string's id is its position + 1. */
#define SYNTH_MAX_STRS 64
static const char* synth_strs[SYNTH_MAX_STRS];

static inline uint32_t synth_str(const char* s) {
  if (!s) return 0;
  for (uint32_t i = 0; i < SYNTH_MAX_STRS; i++) {
    if (!synth_strs[i]) synth_strs[i] = s;
    if (strcmp(synth_strs[i], s) == 0) return i + 1;
  }
  abort();
}

/* The resolver ns_analysis_config.string takes. */
static inline const char* synth_string(void* user, uint32_t id) {
  (void)user;
  return id && id <= SYNTH_MAX_STRS ? synth_strs[id - 1] : NULL;
}

static inline void synth_free(synth_stream* s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
#endif
