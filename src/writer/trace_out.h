/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the trace file (writer thread, but open, discard and close,
 * which run on init/finalize's thread while no writer thread runs).
 * Created in the dump directory, never over an existing file; the blocks
 * each pass puts in ns_ws.out go to it with one write per flush; bytes the
 * file does not take (a full disk) are held and written first at the next
 * flush, up to a bound; what is lost is counted (sinks/trace_file.h). */
#ifndef NCCLSCOPE_WRITER_TRACE_OUT_H
#define NCCLSCOPE_WRITER_TRACE_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "sinks/trace_file.h"

/* Opens (creating) the dump dir and creates the trace file in it, writes
 * nothing yet. 0, or -1 with the cause in why. */
int ns_trace_out_open(char* why, size_t whylen);
/* The dump directory opened by ns_trace_out_open, -1 when none. */
int ns_trace_out_dirfd(void);
/* The stem of a file this process writes: KIND-<host>-<pid>, then the
 * suffix its trace's name took ("-<n>" when the plain name was taken: a
 * process with the same pid in another PID namespace, or an earlier session
 * of this one), so the trace, windows, summary, flight record and
 * Prometheus files of one process share one name (no suffix when no trace
 * was created). 0, or -1 when it does not fit in outlen. */
int ns_trace_out_stem(const char* kind, char* out, size_t outlen);
/* Removes the trace file (tracing could not start). */
void ns_trace_out_unlink(void);
/* The file header and the PROCESS block, into ns_ws.out. */
void ns_trace_out_begin(void);
/* An ANCHOR block (a CLOCK_MONOTONIC, CLOCK_REALTIME pair), into ns_ws.out. */
void ns_trace_out_anchor(void);
/* The END block (how: NS_END_*; sig: NS_END_SIGNAL's signal), into ns_ws.out. */
void ns_trace_out_end(unsigned how, int sig);
/* Whether ns_ws.out should go to the file at the end of this pass: it holds
 * lifecycle blocks, or it is large. */
int ns_trace_out_due(void);
/* The nanoseconds since the last flush (or the file's creation). */
uint64_t ns_trace_out_since_flush(uint64_t now_ns);
/* Writes ns_ws.out (after the bytes held before it) and empties it. */
void ns_trace_out_flush(void);
/* Bytes the file has not taken yet (held for the next flush). */
size_t ns_trace_out_held(void);
/* What became of the trace's bytes so far (the COUNTERS block's). */
const ns_trace_file_counts* ns_trace_out_counts(void);
/* At the end: a warning when the trace lost bytes. */
void ns_trace_out_warn_incomplete(void);
/* Closes the file and the directory, frees what is held. */
void ns_trace_out_close(void);

#endif
