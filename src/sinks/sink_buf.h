/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: every buffer of the sinks is bounded: NS_SINK_BUF_LIMIT,
 * set with ns_sink_buf_bound before first use; past it the buffer fails
 * (util/bytebuf.h) and the payload or file is dropped and counted by its
 * writer. */
#ifndef NCCLSCOPE_SINKS_SINK_BUF_H
#define NCCLSCOPE_SINKS_SINK_BUF_H

#include "util/bytebuf.h"

#define NS_SINK_BUF_LIMIT (16u << 20)

static inline void ns_sink_buf_bound(ns_buf* b) { b->limit = NS_SINK_BUF_LIMIT; }

#endif
