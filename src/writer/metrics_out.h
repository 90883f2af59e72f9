/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's metric outputs. Each closed analysis
 * window becomes one set of metrics (src/sinks/metrics.h) that goes, once
 * the drain that closed it is over, to windows-<host>-<pid>.jsonl in the
 * dump directory (one line per window), to NCCLSCOPE_PROM_DIR as
 * ncclscope-<host>-<pid>.prom (replaced atomically) and to the OTLP sender
 * (src/sinks/sender.h), which posts from a thread of its own. The .prom
 * file and OTLP are also written between windows, for the live series (the
 * oldest operation in flight, hang episodes, the stuck operation, the
 * update time): at least every NCCLSCOPE_WINDOW_SEC and at once on a
 * watchdog's verdict, from this thread, so while the application makes no
 * progress at all. A clean end removes the .prom file. Writer thread only;
 * nothing here can fail NCCL: every error is one warning per episode. */
#ifndef NCCLSCOPE_WRITER_METRICS_OUT_H
#define NCCLSCOPE_WRITER_METRICS_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/analysis.h"

/* Sets up the outputs (when the analysis runs): the model, the files, the sender. */
void ns_mout_open(void);
/* A communicator rank (COMM_INIT); name: NCCL's commName, NULL none. */
void ns_mout_comm(uint32_t serial, uint64_t comm_id, int32_t rank, uint32_t nranks, const char* uuid,
                  const char* name);
/* What the writer lost so far, passed in with each window: the metric
 * outputs never ask the writer. closed: NS_CLOSE_REASONS entries; the live
 * communicators (serial comm[i]) lost comm_dropped[i] starts to a full ring. */
typedef struct {
  uint64_t ring;
  const uint64_t* closed;
  const uint32_t* comm;
  const uint64_t* comm_dropped;
  size_t ncomms;
} ns_mout_losses;
/* A window the analysis closed, with its statistics and the writer's losses. */
void ns_mout_window(const ns_window* w, const ns_mout_losses* lost);
/* After each drain (now_ns: trace clock), verdicts: the watchdog's since the
 * last call. Takes the flight recorder's operations in flight into the live
 * series when a window closed, when a verdict came, or when a window's
 * length passed since the last time, and then has ns_mout_flush write. */
void ns_mout_live(uint64_t now_ns, int verdicts);
/* After each drain: writes what the windows closed (and ns_mout_live) produced. */
void ns_mout_flush(void);
/* Last finalize, exit or a deadly signal, after the analysis' flush: writes
 * the last windows, removes the .prom file (unless NCCLSCOPE_PROM_KEEP),
 * stops the sender (joined), frees. */
void ns_mout_close(void);

#endif
