/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: its sections of `ncclscope report`'s text
 * and JSON summaries. */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_OUT_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_OUT_H

#include <stdio.h>

#include "util/json_writer.h"
#include "report/report_ranks.h"

/* What leads summary.txt (report_ranks_verdict.c): a verdict per hang,
 * mismatch and straggler found (returns how many), then the hangs' and
 * mismatches' sections when there are any. */
size_t ns_xr_verdict_lines(const ns_xr* x, FILE* out);
void ns_xr_verdict_sections(const ns_xr* x, FILE* out);
/* Text sections below the tables: hosts, hangs and mismatches when there
 * were none (the verdict shows them otherwise), lateness, cross-rank arrival. */
void ns_xr_text(const ns_xr* x, int wide, FILE* out);
/* JSON members, each preceded by a comma: "hosts", "hangs", "mismatches", "communicatorsIncomplete",
 * "lateness", "crossRank". */
void ns_xr_json(const ns_xr* x, ns_json* j);

/* Parts, between report_ranks_out.c and report_ranks_verdict.c. */
void ns_xrank_hangs_text(const ns_xr* x, FILE* out);
void ns_xrank_mismatches_tail_text(const ns_xr* x, FILE* out);
void ns_xrank_mismatches_json(const ns_xr* x, ns_json* j);
void ns_xrank_incomplete_json(const ns_xr* x, ns_json* j);

#endif
