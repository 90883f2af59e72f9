/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the communicators' lifecycle in the trace. init and finalize
 * (NCCL's threads) post COMM_INIT and COMM_FINI work to a small
 * mutex-protected queue; the writer thread takes it and writes the blocks:
 * COMM_INIT (the context entry announced: ns_ws.ctx_serial), and COMM_FINI
 * after the communicator's events are drained and its open events closed,
 * preceded by its last CLOCKFIT; then the context entry is free again. */
#ifndef NCCLSCOPE_WRITER_LIFECYCLE_QUEUE_H
#define NCCLSCOPE_WRITER_LIFECYCLE_QUEUE_H

#include <stdint.h>

/* The posted work, oldest first. */
typedef struct ns_lq_item ns_lq_item;

/* When tracing starts (0 or -1) and ends; no writer thread runs then. */
int ns_lq_open(void);
/* Frees what was posted and not taken. */
void ns_lq_close(void);
/* Any thread (init, finalize). A failed allocation loses the block; the
 * trace stays readable. */
void ns_lq_post_init(uint32_t ctx_index);
void ns_lq_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid);
/* Writer thread: takes both lists at once. */
void ns_lq_take(ns_lq_item** inits, ns_lq_item** finis);
/* Writer thread: the COMM_INIT blocks of inits (freed). */
void ns_lq_write_inits(ns_lq_item* inits);
/* Writer thread: takes the posted inits and writes them now (a record names
 * a communicator not announced yet: init posted it before NCCL used it). */
void ns_lq_write_inits_now(void);
/* Writer thread: the COMM_FINI blocks of finis (freed), each after the
 * records of its communicator's events still open, which end here
 * (closed_events.h, NS_CLOSE_COMM_END). */
void ns_lq_write_finis(ns_lq_item* finis);
/* Writer thread, timed flush: a CLOCKFIT block for each live communicator
 * whose fit moved since its last one. */
void ns_lq_write_clockfits(void);

#endif
