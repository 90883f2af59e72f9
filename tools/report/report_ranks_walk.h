/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: the collectives in order. Each rank's ops
 * are sorted by (func, seq), a trace's record before a flight record's; a
 * collective is then the ranks' ops of one (func, seq), taken in rank order
 * by a cursor that walks every rank's list at once (a merge). */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_WALK_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_WALK_H

#include "report/report_ranks_model.h"

/* One op of a collective. */
typedef struct {
  int32_t rank;
  ns_xrank_op* op;
} ns_xrank_member;

/* The collectives of one communicator in (func, seq) order, each as its ops in rank order. */
typedef struct {
  ns_xrank_comm* c;
  ns_xrank_op** ops; /* per rank: its ops (the ranks' own records are large: kept out of the walk) */
  size_t* nops;   /* per rank: how many */
  size_t* at;     /* per rank: its next op */
  uint32_t* live; /* the ranks with ops left, in rank order */
  size_t nlive;
  int16_t func;   /* the next collective's key */
  uint64_t seq;
  ns_xrank_member* m; /* the collective: nm ops */
  size_t nm, capm;
} ns_xrank_cursor;

/* Whether key (f, s) comes before (g, t). */
static inline int ns_xrank_key_less(int16_t f, uint64_t s, int16_t g, uint64_t t) { return f != g ? f < g : s < t; }

/* Every rank's ops and the episodes in order; 0, or -1 when out of memory. */
int ns_xrank_sort_all(ns_xr* x);
/* The episodes of collective (func, seq) of communicator comm: [*lo, *hi) of eps. */
void ns_xrank_episodes_of(const ns_xr* x, uint32_t comm, int16_t func, uint64_t seq, size_t* lo, size_t* hi);
/* The first of eps[lo, hi) (one collective's, by rank) of rank r or a higher one. */
size_t ns_xrank_episode_of_rank(const ns_xr* x, size_t lo, size_t hi, int32_t r);

/* 0, or -1 when out of memory. */
int ns_xrank_cursor_init(ns_xrank_cursor* k, ns_xrank_comm* c);
/* The next collective into k->m; 0 when there is none (or out of memory). */
int ns_xrank_cursor_next(ns_xrank_cursor* k);
void ns_xrank_cursor_free(ns_xrank_cursor* k);

/* ns_hosts_refine's walk (report_clocks.h): each collective's ranks that completed it. */
size_t ns_xrank_walk_collectives(void* src, ns_hc_visit fn, void* user);

#endif
