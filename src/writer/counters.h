/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: what the writer recorded and lost, from ns_ws, the rings' and
 * the contexts' drop counters and ns_cnt: for the COUNTERS block, the
 * metrics and the summary. Writer thread only. */
#ifndef NCCLSCOPE_WRITER_COUNTERS_H
#define NCCLSCOPE_WRITER_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/codec.h"

/* The COUNTERS block's properties (the caller begins and ends the block). */
void ns_counters_props(ns_buf* out);
/* Events lost so far (full rings and threads without one), and events
 * closed by the plugin by NS_CLOSE_* reason. */
void ns_writer_drops(uint64_t* ring, uint64_t* closed); /* closed: NS_CLOSE_REASONS entries */
/* What was recorded and lost so far, for the summary. */
struct ns_summary_recording;
void ns_writer_recording(struct ns_summary_recording* out);
/* The live communicators: serial[i] and its starts lost to a full ring,
 * dropped[i] (NS_MAX_CONTEXTS entries each). Returns how many. */
size_t ns_writer_comm_drops(uint32_t* serial, uint64_t* dropped);

#endif
