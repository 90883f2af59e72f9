/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's metric outputs. Each closed analysis
 * window becomes one set of metrics (src/sinks/metrics.h) that goes, once
 * the drain that closed it is over, to windows-<host>-<pid>.jsonl in the
 * dump directory (one line per window), to NCCLSCOPE_PROM_DIR as
 * ncclscope-<host>-<pid>.prom (replaced atomically) and to the OTLP sender
 * (src/sinks/sender.h), which posts from a thread of its own. Writer thread
 * only; nothing here can fail NCCL: every error is one warning per episode. */
#ifndef NCCLSCOPE_WRITER_METRICS_OUT_H
#define NCCLSCOPE_WRITER_METRICS_OUT_H

#include <stdint.h>

#include "ncclscope/analysis.h"

/* Sets up the outputs (when the analysis runs): the model, the files, the sender. */
void ns_mout_open(void);
/* A communicator rank (COMM_INIT). */
void ns_mout_comm(uint32_t serial, uint64_t comm_id, int32_t rank, uint32_t nranks, const char* uuid);
/* The analysis' on_window callback (a = the analysis, for the clock fits). */
void ns_mout_window(ns_analysis* a, const ns_window* w);
/* After each drain: writes what the windows closed since produced. */
void ns_mout_flush(void);
/* Last finalize, after the analysis' flush: writes the last windows, stops the sender (joined), frees. */
void ns_mout_close(void);

#endif
