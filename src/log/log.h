/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: logging. Cold paths only (init, finalize, the writer thread):
 * never on the hot path. Lines go to the sink the ABI layer installs when
 * NCCL hands init a logger (v4+: NCCL_DEBUG=INFO shows them; that sink also
 * prints warnings to stderr when NCCL_DEBUG hides NCCL's WARN); without one
 * (v1..v3) only warnings are printed, to stderr. Knows nothing of NCCL. */
#ifndef NCCLSCOPE_LOG_H
#define NCCLSCOPE_LOG_H

/* Writes one formatted line (without the "NCCLSCOPE " prefix); warn: 1 for a warning. */
typedef void (*ns_log_sink_fn)(int warn, const char* line);

/* Sets the sink (NULL: keep the current one). */
void ns_log_set_sink(ns_log_sink_fn fn);
/* Forgets the sink (last finalize: NCCL's logger may go away with NCCL). */
void ns_log_reset(void);

void ns_log_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void ns_log_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
