/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the cross-rank view's data (report_ranks.h): files, and per
 * communicator and rank the collectives it posted, as report_ranks.c
 * collects them and the later stages (report_ranks_walk.c, _gpu.c,
 * _judge.c, _out.c) sort, place, judge and print them. Internal to those files. */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_MODEL_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report_clocks.h"
#include "report/report_ranks.h"
#include "util/idmap.h"

/* ns_xrank_op.flags */
#define NS_XRANK_DONE 0x1u    /* it completed */
#define NS_XRANK_STUCK 0x2u   /* never finished: incomplete at the end of its trace, or in flight in a flight record */
#define NS_XRANK_FR 0x4u      /* from a flight record */
#define NS_XRANK_EPISODE 0x8u /* a flight record's episode: in flight longer than the hang timeout */

/* One collective of one rank (its communicator and rank: the list it is in). 48 bytes. */
typedef struct {
  uint64_t seq;
  int64_t arr, end; /* trace ns of its host; 0: none */
  int64_t posted;   /* its Coll's start (trace ns of its host): the order the rank posted its collectives in */
  int32_t file;     /* index in files (trace or flight record) */
  float gpu_err_ns; /* arr/end are its GPU's times converted, within this bound (INFINITY: unbounded); 0: host times */
  int16_t func;
  uint16_t flags;
  uint32_t call; /* its arguments: index + 1 in ns_xr.calls; 0: not known (a flight record's op) */
} ns_xrank_op;

/* The arguments of a call besides its function, one entry per distinct set
 * in the whole report (ops refer to them by index: a run posts few). */
typedef struct {
  uint64_t count;
  int64_t root;
  char dtype[24]; /* as recorded ("ncclFloat32"); "" unknown */
} ns_xrank_call;

/* What one rank posted at one place of its communicator's order of
 * collectives that the other ranks did not (report_ranks_match.c). */
enum { NS_XRANK_MM_CALL = 0, NS_XRANK_MM_SKIPPED = 1, NS_XRANK_MM_EXTRA = 2 };
typedef struct {
  int32_t rank;
  int kind;         /* NS_XRANK_MM_* */
  uint64_t pos;     /* its place in the communicator's order of collectives (from 0) */
  int16_t got_func; /* what the rank posted there (NS_XRANK_MM_SKIPPED: what it posted instead, next) */
  uint64_t got_seq;
  uint32_t got_call;
  int16_t want_func; /* what the others posted there */
  uint64_t want_seq; /* the seq most of them gave it */
  uint32_t want_call;
  uint32_t agree; /* how many ranks posted want */
  uint32_t ranks; /* of how many that posted something there */
} ns_xrank_mismatch;

/* An op of the file being read whose pTimers the final fit converts again (ns_xr_file_clock). */
typedef struct {
  uint32_t comm;       /* index in comms */
  int32_t rank;
  size_t op;           /* index in that rank's ops */
  uint32_t comm_serial; /* the file's communicator serial */
  uint64_t ptimer_start, ptimer_stop;
  uint64_t host_start, host_last, host_end; /* place() */
} ns_xrank_reconvert;

/* A rank whose ops the file being read added to (its list is trimmed to size at the file's end). */
typedef struct {
  uint32_t comm;
  int32_t rank;
} ns_xrank_touched;

typedef struct {
  char host[256];
  uint32_t pid;
  int host_idx;
  int clean_end;  /* its record is complete (ns_xr_file_end) */
  int is_fr;      /* a flight record, not a trace */
} ns_xrank_file;

typedef struct {
  ns_xrank_op* ops; /* its collectives from every file, sorted by (func, seq, trace before flight record) by finish */
  size_t nops, capops;
  int32_t touched_by; /* the last file that added to ops (ns_xrank_touched), -1 none */
  uint64_t n, last_count, gap_sum_ns;
  double* late;      /* each collective's lateness, ns (n of them once finished; room for nops) */
  float* late_bound; /* how far its arrival may be off: its GPU clock bound; 0 host time; INFINITY unbounded */
  double median_ns, p99_ns;
  int outlier;
  int32_t file;       /* a file of this rank (trace preferred), -1 none */
  int has_trace;      /* a trace with its COMM_INIT */
  int clean;          /* its record is complete: a trace with an END, or a flight record listing the comm */
  int16_t last_func;  /* the last collective it completed */
  uint64_t last_seq;
  int64_t last_end;
  int has_last;
  char waits_for[640]; /* its flight record's episode on the hang, if any */
  double bound_median_ns; /* the median of its arrivals' bounds (INFINITY: unbounded) */
  /* its GPU clock placed by the collectives' ends (refine_gpu_clocks) */
  double gpu_found_ns;  /* the correction the ends gave */
  double gpu_uncert_ns; /* its uncertainty */
  uint64_t gpu_samples; /* collectives it came from */
  uint64_t gpu_moved;   /* ops moved by it (those whose published bound allows it) */
} ns_xrank_rank;

typedef struct {
  uint64_t comm_id;
  uint32_t nranks;
  char name[64];
  ns_xrank_rank* ranks; /* nranks */
  uint64_t nops;  /* ops of all its ranks */
  /* crossRank */
  uint64_t compared, partial, spread_sum_ns, spread_max_ns;
  uint64_t ops_late; /* collectives with lateness (2+ arrivals) */
  /* the hang, if any */
  int hang;
  int16_t hang_func;
  uint64_t hang_seq;
  int64_t hang_arr;
  int hang_by_fr;
  double hang_waited;
  uint64_t hang_candidates;
  uint8_t* state;  /* per rank: NS_XRANK_S_* for the hang's collective */
  int64_t* posted; /* per rank: its arrival at the hang's collective (common ns), INT64_MIN none */
  /* mismatches: the first place each odd rank differs (report_ranks_match.c) */
  ns_xrank_mismatch* mm;
  size_t nmm;
  uint64_t mm_places; /* places where some rank differs, the later ones included */
  int mm_tie;         /* ranks differ and no value has a majority: no rank can be named */
} ns_xrank_comm;

enum { NS_XRANK_S_UNKNOWN = 0, NS_XRANK_S_NEVER = 1, NS_XRANK_S_STUCK = 2, NS_XRANK_S_DONE = 3 };

/* "0-6,9": the ranks of c in state st (NS_XRANK_S_*), "none" when none (report_ranks_out.c). */
void ns_xrank_rank_list(const ns_xrank_comm* c, int st, char* buf, size_t len);

typedef struct {
  uint32_t comm;
  int32_t rank;
  int16_t func;
  uint64_t seq;
  double waited;
  int cleared;
  uint32_t order; /* read before the episodes of a higher order */
  char waits_for[640];
} ns_xrank_episode;

struct ns_xr {
  ns_xrank_file* files;
  size_t nfiles, capfiles;
  ns_hosts* hosts;
  ns_xrank_comm* comms;
  size_t ncomms, capcomms;
  ns_idmap comm_index; /* comm_id -> index + 1 */
  ns_xrank_reconvert* reconv; /* of the file being read */
  size_t nreconv, capreconv;
  ns_xrank_touched* touched; /* of the file being read */
  size_t ntouched, captouched;
  ns_xrank_episode* eps; /* sorted by (comm, func, seq, rank) by finish */
  size_t neps, capeps;
  uint64_t fr_files, fr_bad, ops_no_comm;
  size_t nhangs;
  ns_xrank_call* calls; /* distinct call arguments (ns_xrank_op.call) */
  size_t ncalls, capcalls;
  ns_idmap call_index; /* their hash -> index + 1 */
  size_t nmismatches;  /* communicators with a mismatch */
};

/* Room for element n of *p (*cap elements of `size` bytes), doubling it when full; 0, or -1 when out of memory. */
static inline int ns_xrank_grow(void** p, size_t* cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  void* np = realloc(*p, nc * size);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

static inline int ns_xrank_by_double(const void* a, const void* b) {
  double p = *(const double*)a, q = *(const double*)b;
  return p < q ? -1 : p > q;
}

/* ts (trace ns of the op's host) on the common timeline of all hosts; 0 stays 0. */
static inline int64_t ns_xrank_common(const ns_xr* x, const ns_xrank_op* o, int64_t ts) {
  return ts ? ns_hosts_common(x->hosts, x->files[o->file].host_idx, ts) : 0;
}

/* The median of v[0, n), sorted. */
static inline double ns_xrank_sorted_median(const double* v, size_t n) {
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
