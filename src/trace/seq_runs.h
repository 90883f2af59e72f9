/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope reader: the block sequence numbers a file's blocks were
 * accounted under, as runs of consecutive numbers, and how many numbers are
 * missing between the lowest and the highest, whatever order the blocks
 * came in (a block copied before its original fills no gap and opens none).
 * 16 bytes for every break in the sequence, nothing a block.
 * Single-threaded.
 */
#ifndef NCCLSCOPE_TRACE_SEQ_RUNS_H
#define NCCLSCOPE_TRACE_SEQ_RUNS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t lo, n; /* seqs lo .. lo + n - 1 */
} ns_seq_run;

typedef struct {
  ns_seq_run* runs; /* sorted by lo, disjoint and not adjacent */
  size_t n, cap;
  size_t last;      /* the run the last add went to: the next seq usually extends it */
  uint64_t missing; /* seqs absent between runs[0].lo and the end of the last run */
} ns_seq_runs;

/* 1 when seq was added. */
int ns_seq_runs_has(const ns_seq_runs* s, uint64_t seq);
/* Adds seq (nothing when it is there). 0, or -1 when out of memory (the set
 * is unchanged). */
int ns_seq_runs_add(ns_seq_runs* s, uint64_t seq);
void ns_seq_runs_free(ns_seq_runs* s);

#endif
