/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary's accumulator (summary.c), shared with
 * its text (summary_text.c) and JSON (summary_json.c) writers. Runs on the
 * thread that owns the analyses (the plugin's last finalize on the writer
 * thread, or the CLI). */
#ifndef NCCLSCOPE_ANALYSIS_SUMMARY_H
#define NCCLSCOPE_ANALYSIS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/internal.h"

typedef struct {
  ns_row_acc row; /* merged; pct owned */
} sum_row;

typedef struct {
  ns_link_stats s;
  uint64_t comm_id;
} sum_link;

typedef struct {
  uint64_t comm_id;
  int32_t rank;
  char gpu[48];
  ns_clock_fit fit;
  uint64_t verdicts[NS_PT_REASONS];
} sum_clock;

typedef struct {
  uint64_t comm_id;
  char name[64];
} sum_name;

/* The summary accumulated one analysis at a time (ns_summary_add): the
 * merged rows, the link rows that can be listed (the first max_links of
 * each kind in listing order, and how many there are), the clock fits.
 * Nothing in it refers to an analysis, so each can be destroyed once added. */
struct ns_summary {
  size_t max_links;
  sum_row* rows;
  size_t nrows, caprows;
  sum_link* ranked; /* the slowest max_links ranked links, in listing order */
  sum_link* other;  /* the first max_links other rows, in listing order */
  size_t nranked_kept, nother_kept, capranked, capother;
  size_t nranked, nlinks; /* every link row added, and those ranked */
  sum_clock* clocks;
  size_t nclocks, capclocks;
  sum_name* names; /* each named communicator once, its first name */
  size_t nnames, capnames;
  ns_tag_table tags; /* by (comm_id, userTag), every rank's rows summed (by_id) */
  uint64_t steps_unanalysed;
};

/* Figures of a merged row: timed calls exclude warm-up; bandwidth as nccl-tests computes it. */
typedef struct {
  double mean_ns, p50_ns, p99_ns, algbw, busbw, busbw_p50, busbw_p99;
} row_figures;

/* The merged rows in listing order (sorted in place: the keys are distinct, so the order is total). */
sum_row* ns_sum_sorted_rows(ns_summary* sm, size_t* n);
row_figures ns_sum_figures(ns_row_acc* r);
/* Ranked as a link: one channel's send connection with a fit (summary.c says why). */
int ns_sum_ranked(const ns_link_stats* s);
/* What an unranked link row is. */
const char* ns_sum_link_kind(const ns_link_stats* s);
const char* ns_sum_basis_name(int b); /* NS_BASIS_* */
/* Whether the samples pin the drift down (else it is published as unknown). */
int ns_sum_drift_known(const ns_clock_fit* f);
size_t ns_sum_max_links(const ns_summary_options* opt); /* 10 by default */
/* The userTag rows in listing order: by communicator, the most time first, the other row last (sorted in place). */
ns_tag_stats* ns_sum_sorted_tags(ns_summary* sm, size_t* n);
/* The summary of a list of analyses, by the accumulator; NULL when out of memory. */
ns_summary* ns_sum_of(ns_analysis* const* list, size_t n, const ns_summary_options* opt);

#endif
