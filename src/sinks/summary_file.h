/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the plugin's summary at the last finalize (writer thread). */
#ifndef NCCLSCOPE_SINKS_SUMMARY_FILE_H
#define NCCLSCOPE_SINKS_SUMMARY_FILE_H

#include <stdint.h>

#include "ncclscope/analysis.h"

/* Logs the text summary line by line (INFO) and writes STEM.txt and
 * STEM.json (summary-<host>-<pid> and the trace's suffix) in the dump
 * directory dirfd (named `dir` in messages; none when dirfd < 0), with the
 * recording's own counts (rec: what was recorded, dropped, lost). Errors:
 * one warning, never fatal. */
void ns_summary_file_write(ns_analysis* a, const ns_summary_recording* rec, int dirfd, const char* dir,
                           const char* stem, unsigned mode);

#endif
