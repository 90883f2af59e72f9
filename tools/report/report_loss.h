/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, `report`: how much of what the plugin saw the traces hold,
 * per process and over the run (summary.txt's first lines, its losses
 * table, summary.json's "loss"). */
#ifndef NCCLSCOPE_TOOLS_REPORT_LOSS_H
#define NCCLSCOPE_TOOLS_REPORT_LOSS_H

#include <stdint.h>
#include <stdio.h>

#include "util/json_writer.h"
#include "ncclscope/trace_reader.h"

/* One trace file's losses: its process counters (its COUNTERS block) and
 * what the reader found of it. */
typedef struct {
  char host[256];
  uint32_t pid;
  int has; /* 0: no COUNTERS block (the process did not finish cleanly) */
  ns_props_info counters;
  uint64_t events_in_trace; /* START records read */
  uint64_t starts_dropped;  /* events whose START a full ring dropped (its COMM_FINI blocks) */
  uint64_t blocks_damaged;  /* damaged ranges that cost data (each one block or more) */
  uint64_t blocks_missing;  /* block sequence numbers absent between valid blocks */
  uint64_t bytes_cut;       /* a torn tail */
  int clean_end;
} ns_file_losses;

/* How much of the recording the traces hold (summary.json "loss", summary.txt's first lines). Events:
 * seen = in the trace + dropped (a full ring) + lost to write errors + lost in damaged blocks. The
 * events recorded by the plugin and absent from its file (the COUNTERS block's events minus the START
 * records read) are lost to write errors when its writer counted any (a write that failed may also
 * leave a torn block behind), else lost in damaged blocks when the reader found damage that cost
 * data (damaged ranges, missing blocks, a cut tail), else lost to write errors as the only cause the
 * plugin knows. A process without a COUNTERS block adds what its trace holds: its seen is a lower
 * bound, and the run is not complete. */
typedef struct {
  uint64_t seen, in_trace, dropped, lost_write, lost_damaged;
  uint64_t steps_unanalysed, bytes_lost, write_errors, blocks_damaged, blocks_missing, bytes_cut;
  uint64_t processes, without_end, without_counters;
  int complete;
} ns_report_loss;

/* Over the run's files. */
ns_report_loss ns_report_loss_of(const ns_file_losses* fl, size_t n);
/* summary.txt's first lines. */
void ns_report_loss_text(const ns_report_loss* l, FILE* out);
/* summary.json's "loss" object. */
void ns_report_loss_json(const ns_report_loss* l, ns_json* j);
/* The recording losses table, per process. */
void ns_report_losses_text(const ns_file_losses* fl, size_t n, FILE* out);

#endif
