/* ncclscope sinks: a growable byte buffer for payloads and file contents.
 * Single-threaded (whoever owns it). Bounded: growing past `limit` bytes
 * (0: NS_SBUF_LIMIT) or a failed allocation sets `failed`, after which
 * appends are dropped: the caller checks `failed` once at the end. */
#ifndef NCCLSCOPE_SINKS_SBUF_H
#define NCCLSCOPE_SINKS_SBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define NS_SBUF_LIMIT (16u << 20)

typedef struct {
  uint8_t* data;
  size_t len, cap, limit;
  int failed;
} ns_sbuf;

/* Room for n more bytes; 0, or -1 (and failed set). */
int ns_sbuf_reserve(ns_sbuf* b, size_t n);
void ns_sbuf_put(ns_sbuf* b, const void* p, size_t n);
void ns_sbuf_str(ns_sbuf* b, const char* s);
void ns_sbuf_printf(ns_sbuf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal (quotes included): '"', '\\' and control bytes escaped. */
void ns_sbuf_json_str(ns_sbuf* b, const char* s);
/* A double as JSON (finite: shortest %.17g that round-trips; NaN/inf: 0). */
void ns_sbuf_json_double(ns_sbuf* b, double v);
/* The shortest decimal form of a finite double that reads back the same (NaN/inf: "0"). */
void ns_fmt_double(char* out, size_t cap, double v);
void ns_sbuf_reset(ns_sbuf* b); /* len = 0, failed = 0; keeps the memory */
void ns_sbuf_free(ns_sbuf* b);

#endif
