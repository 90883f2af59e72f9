/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the background writer thread (one per process and session).
 * Started by the first init, stopped (final drain, flush, join) by the last
 * finalize. init/finalize hand it COMM_INIT/COMM_FINI work through a small
 * mutex-protected queue; everything else it finds by polling the rings. */
#ifndef NCCLSCOPE_WRITER_H
#define NCCLSCOPE_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* Opens (creating) the dump dir and creates the trace file in it, writes
 * nothing yet (trace_out.h). 0, or -1 with the cause in why. */
int ns_writer_open(char* why, size_t whylen);
/* A session that could not start: removes the trace file, then as ns_writer_stop. */
void ns_writer_discard(void);
/* Starts the thread. 0 or -1. */
int ns_writer_start(void);
/* Final drain and flush, END block (how: NS_END_FINALIZE or NS_END_EXIT),
 * join, close. */
void ns_writer_stop(unsigned how);
/* Async-signal-safe: asks the writer thread to write everything recorded so
 * far and waits for it, at most timeout_ns. final: the process dies of
 * signal sig next, so the writer ends the trace (END, counters, summary)
 * and stops; else a checkpoint, and tracing goes on. 1 if done in time. */
int ns_writer_signal_flush(int sig, int final, uint64_t timeout_ns);
/* init and finalize: a communicator's COMM_INIT and COMM_FINI blocks
 * (lifecycle_queue.h); nothing when no writer thread runs. */
void ns_writer_post_init(uint32_t ctx_index);
void ns_writer_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid);

#endif
