/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP sender, a thread of the plugin's own that POSTs
 * the payloads the writer thread encodes, so that no endpoint (down, slow,
 * hanging, answering 4xx/5xx, resetting connections) can stall the writer's
 * draining.
 *
 * Threads: ns_sender_start, _submit, _stats and _stop run on the writer
 * thread; the sender thread does the HTTP (and gzip). They share one mutex,
 * held only to swap a pointer, never during a request.
 *
 * Bounded: one payload waits (temporality is cumulative, so a newer window
 * replaces an older one that was not sent yet: counted as dropped) and one is
 * in flight. A failed request is retried NS_OTLP_RETRIES times with backoff
 * (0.5, 1, 2 s) when the failure may pass (connection errors, timeouts, 408,
 * 429, 502, 503, 504), abandoned when a newer payload is waiting, and
 * counted; one warning per episode of failures, one line when it recovers.
 * ns_sender_stop gives the last payload NS_OTLP_FINAL_MS, aborts what is
 * still in flight, and joins the thread: it returns within about
 * NS_OTLP_FINAL_MS + 1 s whatever the endpoint does. */
#ifndef NCCLSCOPE_SINKS_SENDER_H
#define NCCLSCOPE_SINKS_SENDER_H

#include <stdint.h>

#include "sinks/sink_buf.h"

#define NS_OTLP_RETRIES 3
#define NS_OTLP_FINAL_MS 1000

typedef struct {
  const char* url;
  const char* const* headers; /* "Key: value" (OTEL_EXPORTER_OTLP_HEADERS), copied */
  unsigned nheaders;
  int json;                   /* http/json, else http/protobuf */
  int gzip;                   /* Content-Encoding: gzip (when zlib loads) */
  uint32_t timeout_ms;        /* per request */
} ns_sender_config;

typedef struct ns_sender ns_sender;

/* Loads libcurl (and zlib for gzip) and starts the thread; NULL (one
 * warning) when libcurl is missing or the thread cannot start. */
ns_sender* ns_sender_start(const ns_sender_config* cfg);
/* Hands the payload over (swapped with an empty buffer: *payload comes back
 * empty, its memory reused). Never blocks on the network. */
void ns_sender_submit(ns_sender* s, ns_buf* payload);
/* Requests that got a 2xx, failed attempts, payloads given up. */
void ns_sender_stats(ns_sender* s, uint64_t* ok, uint64_t* failed, uint64_t* dropped);
/* Sends what is waiting (bounded, see above), joins, frees. */
void ns_sender_stop(ns_sender* s);

#endif
