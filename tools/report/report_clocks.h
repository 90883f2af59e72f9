/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: one timeline for the hosts of a dump directory.
 *
 * Each host's traces are in its own CLOCK_MONOTONIC. Every trace records a
 * CLOCK_REALTIME anchor next to it (its PROCESS block, an ANCHOR block at
 * every timed flush and at the end; a flight record has its own), so
 *  1. per host, realtime - monotonic is fitted over the anchors (an offset,
 *     and a drift when they span 1 s and lie on a line): the host's clock on the
 *     Unix-epoch timeline, as good as its NTP;
 *  2. refined from the collectives themselves: the ranks of a collective
 *     finish within microseconds of each other (each waits for the last
 *     one's data), so per collective and host the median end on that host
 *     minus the median end over all hosts is the host's residual offset;
 *     its median over the collectives is taken out, relative to the
 *     reference host (the one with the most files). What is left, per host,
 *     is stated: the median |mismatch| over the collectives (residual skew)
 *     and the uncertainty of the correction.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_CLOCKS_H
#define NCCLSCOPE_TOOLS_REPORT_CLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/json_writer.h"

typedef struct ns_hosts ns_hosts;

ns_hosts* ns_hosts_new(void);
void ns_hosts_free(ns_hosts* h);
/* The index of the host with that name (added when new); -1 when out of memory. */
int ns_hosts_index(ns_hosts* h, const char* name);
/* An anchor of one of its files: monotonic ts was Unix-epoch ns `real`. */
void ns_hosts_anchor(ns_hosts* h, int host, uint64_t ts, int64_t real);
/* Step 1: the fits over the anchors. */
void ns_hosts_fit(ns_hosts* h);

/* Step 2: one member of a collective (a rank that completed it). */
typedef struct {
  int host;
  int64_t arr, end; /* its host's monotonic ns */
} ns_hc_member;
/* Called once per collective with its members; returns 1 if it used them. */
typedef int (*ns_hc_visit)(void* user, const ns_hc_member* m, size_t n);
/* Walks the collectives of `src`, calling fn for each; returns how many fn used. */
typedef size_t (*ns_hc_walk)(void* src, ns_hc_visit fn, void* user);
void ns_hosts_refine(ns_hosts* h, ns_hc_walk walk, void* src);

/* A monotonic ns of that host on the common timeline (Unix-epoch ns). */
int64_t ns_hosts_common(const ns_hosts* h, int host, int64_t ts);

void ns_hosts_text(const ns_hosts* h, int wide, FILE* out); /* wide: the wide columns */
/* "hosts": [...] */
void ns_hosts_json(const ns_hosts* h, ns_json* j);

#endif
