/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the plugin's summary at the last finalize (writer thread). */
#ifndef NCCLSCOPE_WRITER_SUMMARY_OUT_H
#define NCCLSCOPE_WRITER_SUMMARY_OUT_H

#include <stdint.h>

struct ns_analysis;
/* Logs the text summary line by line (INFO) and writes STEM.txt and
 * STEM.json (summary-<host>-<pid> and the trace's suffix:
 * ns_trace_out_stem) in the dump directory dirfd (named `dir` in messages;
 * none when dirfd < 0). Errors: one warning, never fatal. */
void ns_summary_out(struct ns_analysis* a, int dirfd, const char* dir, const char* stem, unsigned mode);

#endif
