/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the metrics extension of the exporters (ns_export_ext).
 * Adds the derived fields of the JSONL contract that need the analysis:
 * Coll/P2p `bytes`, `gpuStart`, `gpuStop`, `gpuErrorUs`, `algbwGBs`,
 * `busbwGBs`, `bwBasis`; KernelCh `gpuStart`, `gpuStop`, `gpuErrorUs`; and
 * the finalize record's `gpuClock*` fields when the trace has no CLOCKFIT
 * block. Chrome `args` get the same fields. Design and memory bound:
 * export_metrics.c. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_EXPORT_METRICS_H
#define NCCLSCOPE_TOOLS_EXPORT_METRICS_H

#include "export/export_walk.h"

typedef struct ns_export_metrics ns_export_metrics;

/* max_open: the export's cap on running events, which the first pass keeps
 * too. NULL on allocation failure. */
ns_export_metrics* ns_export_metrics_new(size_t max_open);
void ns_export_metrics_free(ns_export_metrics* m);
/* Fills *ext with m's callbacks; register it with ns_walk_add_ext. */
void ns_export_metrics_ext(ns_export_metrics* m, ns_export_ext* ext);

#endif
