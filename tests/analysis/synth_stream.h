/* SPDX-License-Identifier: Apache-2.0 */
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

/* A writer that drains every `period_ns`: each record arrives at the end of its period. */
static inline void synth_drain_every(synth_stream* s, uint64_t period_ns) {
  for (size_t i = 0; i < s->n; i++) s->v[i].arrival = (s->v[i].r.ts / period_ns + 1) * period_ns;
  synth_order(s);
}

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

/* An analysis with the default configuration, these strings and on_op, and
 * the per-op verdicts kept (the tests ask what `ncclscope export` asks). */
static inline ns_analysis* synth_analysis(void (*on_op)(void* user, const ns_op_result* op)) {
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.keep_op_verdicts = 1;
  cfg.on_op = on_op;
  cfg.string = synth_string;
  return ns_analysis_create(&cfg);
}

/* Tells the analysis of communicator `comm` (every event type recorded, ABI v6). */
static inline void synth_comm(ns_analysis* a, uint32_t comm, uint64_t comm_id, int32_t rank, uint32_t nranks) {
  ns_comm_info ci = ns_comm_info_make(comm, comm_id, rank, nranks);
  ci.event_mask = 0x7FFF;
  ci.abi_version = 6;
  ns_analysis_comm(a, &ci);
}

static inline void synth_free(synth_stream* s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
#endif
