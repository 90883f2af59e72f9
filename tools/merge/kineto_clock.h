/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a recording's clock against a Kineto trace's
 * (kineto_merge.h describes the mapping, its error and the checks): the
 * realtime - monotonic pairs of every trace file, and which file is the
 * trace's process. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_KINETO_CLOCK_H
#define NCCLSCOPE_TOOLS_KINETO_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "merge/kineto_trace.h"

#define NS_KCLOCK_READ_NS 1000 /* allowance for one realtime/monotonic pair read (see kineto_merge.h) */

/* One trace file of the recording. */
typedef struct {
  char path[1024];
  int readable, has_process;
  uint32_t pid;
  char host[256];
  int64_t offset_ns, spread_ns; /* median realtime - monotonic; largest distance of a pair from it */
  unsigned anchors;
  uint64_t first_ts, last_ts; /* monotonic, every record and lifecycle item */
  int32_t ranks[16];
  unsigned nranks;
  int included;
  int64_t delta_ns; /* output ts = monotonic + delta_ns */
  int64_t error_ns;
} ns_kfile;

typedef struct {
  ns_kfile* files;
  size_t nfiles;
  int64_t base_ns;  /* the trace's base (0: absolute epoch "ts") */
  int match;        /* the file of the trace's process, -1: none */
  char reason[512]; /* why the trace cannot be aligned */
} ns_kclock;

/* qsort's order of int64_t values (offsets, residuals). */
int ns_kclock_cmp_i64(const void* a, const void* b);

/* Reads a trace file's pairs, pid, host, ranks and time span into *k (zeroed by the caller). */
void ns_kclock_scan_file(const char* path, ns_kfile* k);
/* Decides the mapping (every file's included and delta_ns, match, base_ns):
 * 0, or -1 with the reason in c->reason (to be refused). */
int ns_kclock_align(ns_kclock* c, const ns_kineto_trace* t);
/* Unaligned: every file included, the recording (its realtime order kept)
 * shifted to start where the trace starts. */
void ns_kclock_unaligned(ns_kclock* c, const ns_kineto_trace* t);

#endif
