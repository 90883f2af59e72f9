/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: its sections of `ncclscope report`'s text
 * and JSON summaries. */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_OUT_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_OUT_H

#include <stdio.h>

#include "json_writer.h"
#include "report_ranks.h"

/* Text sections (hosts, hangs, lateness, cross-rank arrival). */
void ns_xr_text(const ns_xr* x, FILE* out);
/* JSON members, each preceded by a comma: "hosts", "hangs", "lateness", "crossRank". */
void ns_xr_json(const ns_xr* x, ns_json* j);

#endif
