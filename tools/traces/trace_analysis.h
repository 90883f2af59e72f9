/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: runs the analysis library (src/analysis) over one recorded
 * trace file. Used by `ncclscope report` (the whole job) and by the export's
 * metrics extension (a first pass that fits the GPU clocks before any line is
 * written). Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_TRACE_ANALYSIS_H
#define NCCLSCOPE_TOOLS_TRACE_ANALYSIS_H

#include <stddef.h>

#include "ncclscope/analysis.h"
#include "traces/trace_dir.h"
#include "ncclscope/trace_reader.h"

/* Feeds every COMM_INIT and RECORD of the file at path into a new analysis
 * made from cfg (NULL: defaults), then flushes it. Returns the analysis (the
 * caller destroys it), or NULL with a message in err when the file cannot be
 * read at all or memory runs out. Reader statistics go to *stats if not NULL
 * (a damaged tail is not an error: what precedes it is analysed). */
ns_analysis* ns_analyze_file(const char* path, const ns_analysis_config* cfg, ns_file_health* health, char* err,
                             size_t errlen);
/* The same, and every item of the file (PROCESS, COMM_INIT, CLOCKREF, ...)
 * goes to on_item first, in file order (NULL: none). */
typedef void (*ns_item_hook)(void* user, const ns_item* it);
ns_analysis* ns_analyze_file_items(const char* path, const ns_analysis_config* cfg, ns_item_hook on_item, void* user,
                                   ns_file_health* health, char* err, size_t errlen);

#endif
