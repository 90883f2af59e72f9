/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: JSON text into a byte buffer (windows.jsonl, OTLP
 * http/json). Single-threaded (whoever owns the buffer).
 *
 * Every buffer of the sinks is bounded: NS_SINK_BUF_LIMIT, set with
 * ns_sink_buf_bound before first use; past it the buffer fails (bytebuf.h)
 * and the payload or file is dropped and counted by its writer. */
#ifndef NCCLSCOPE_SINKS_JSON_TEXT_H
#define NCCLSCOPE_SINKS_JSON_TEXT_H

#include <stddef.h>

#include "util/bytebuf.h"

#define NS_SINK_BUF_LIMIT (16u << 20)

static inline void ns_sink_buf_bound(ns_buf* b) { b->limit = NS_SINK_BUF_LIMIT; }

/* A JSON string literal (quotes included), escaped by util/json_escape.h. */
void ns_buf_json_str(ns_buf* b, const char* s);
/* A double as JSON (finite: shortest %.17g that round-trips; NaN/inf: 0). */
void ns_buf_json_double(ns_buf* b, double v);
/* The shortest decimal form of a finite double that reads back the same (NaN/inf: "0"). */
void ns_fmt_double(char* out, size_t cap, double v);

#endif
