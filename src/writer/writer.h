/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the background writer thread (one per process and session).
 * Started by the first init, stopped (final drain, flush, join) by the last
 * finalize. init/finalize hand it COMM_INIT/COMM_FINI work through a small
 * mutex-protected queue; everything else it finds by polling the rings. */
#ifndef NCCLSCOPE_WRITER_H
#define NCCLSCOPE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/codec.h"

/* Opens (creating) the dump dir and creates the trace file in it, writes
 * nothing yet. 0, or -1 with the cause in why. */
int ns_writer_open(char* why, size_t whylen);
/* The dump directory opened by ns_writer_open, -1 when none. */
int ns_writer_dump_dirfd(void);
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
/* Async-signal-safe: asks the writer for a flight-record dump at its next
 * pass (the dump signal's handler; flightrec_out.c). */
void ns_writer_request_dump(void);
void ns_writer_post_init(uint32_t ctx_index);
void ns_writer_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid);

/* Writer thread: events lost so far (full rings and threads without one),
 * and events closed by the plugin by NS_CLOSE_* reason. */
void ns_writer_drops(uint64_t* ring, uint64_t* closed); /* closed: NS_CLOSE_REASONS entries */
/* What was recorded and lost so far, for the summary (writer thread). */
struct ns_summary_recording;
void ns_writer_recording(struct ns_summary_recording* out);
/* Writer thread: starts of the live communicator with that serial lost to a full ring (0 once finalized). */
uint64_t ns_writer_comm_dropped(uint32_t serial);

/* ---- records.c: ring entries -> ns_record, string interning ---- */
typedef struct ns_strtab ns_strtab;
ns_strtab* ns_strtab_new(void);
void ns_strtab_free(ns_strtab* t);
/* The id of string `s` (n bytes); new strings are appended to `enc`
 * (begun lazily: *enc_open tells whether it was). */
uint32_t ns_strtab_intern(ns_strtab* t, const char* s, size_t n, ns_strings_encoder* enc, ns_buf* encbuf,
                          int* enc_open);
/* The string with that id (NUL-terminated, owned by t), NULL if unknown. */
const char* ns_strtab_str(const ns_strtab* t, uint32_t id);

#endif
