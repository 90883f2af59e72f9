/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the detail section of `ncclscope report`: which detail
 * levels the traces were recorded at (NCCLSCOPE_DETAIL, their DETAIL
 * blocks), how much of the run had full detail, the escalations and their
 * reasons, and how many operations have GPU times. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_DETAIL_H
#define NCCLSCOPE_TOOLS_REPORT_DETAIL_H

#include <stdint.h>
#include <stdio.h>

#include "util/json_writer.h"
#include "ncclscope/analysis.h"
#include "ncclscope/trace_format.h"
#include "ncclscope/trace_reader.h"

typedef struct {
  unsigned levels;        /* bit l: a trace was recorded at level l (0 ops, 1 sampled, 2 full) */
  uint64_t traces, traces_with_detail; /* traces; those with DETAIL blocks (format 1.2) */
  uint64_t changes[NS_DETAIL_WHY_COUNT]; /* DETAIL blocks by reason */
  uint64_t switches, escalations, full_ns, counted; /* COUNTERS of the processes that wrote them */
  uint64_t ops, ops_gpu;  /* operations; those timed by the GPU (basis gpu or batch) */
} ns_report_detail;

/* A trace begins (its PROCESS block). */
void ns_detail_trace(ns_report_detail* d);
/* A DETAIL or COUNTERS item of the current trace. */
void ns_detail_item(ns_report_detail* d, const ns_item* it);
void ns_detail_op(ns_report_detail* d, const ns_op_result* op);
void ns_detail_text(const ns_report_detail* d, FILE* out);
/* A JSON object value. */
void ns_detail_json(const ns_report_detail* d, ns_json* j);

#endif
