/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: a growable byte buffer (trace blocks, metric payloads, file
 * contents). Single-threaded: whoever owns it. Never on NCCL's threads: it
 * grows with realloc.
 *
 * Failure is sticky: a failed allocation, or growing past `limit` bytes
 * (0: no limit), sets `failed`, and every later append is dropped, so the
 * caller checks `failed` once at the end. ns_buf_reset clears it. */
#ifndef NCCLSCOPE_UTIL_BYTEBUF_H
#define NCCLSCOPE_UTIL_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint8_t* data;
  size_t len;
  size_t cap;
  size_t limit; /* 0: none */
  int failed;
} ns_buf;

/* Room for n more bytes: 0, or -1 (and failed set). Inline when there is
 * room already (the writer reserves once per record, millions a second). */
int ns_buf_grow(ns_buf* b, size_t n);
static inline int ns_buf_reserve(ns_buf* b, size_t n) {
  if (__builtin_expect(!b->failed && n <= b->cap - b->len, 1)) return 0;
  return ns_buf_grow(b, n);
}
void ns_buf_put(ns_buf* b, const void* bytes, size_t n);
void ns_buf_str(ns_buf* b, const char* s);
void ns_buf_printf(ns_buf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* An unsigned LEB128 varint (1 to 10 bytes): the trace codec's and protobuf's. */
void ns_buf_put_varint(ns_buf* b, uint64_t v);
/* The one varint writer (ns_buf_put_varint, the trace's event encoder and
 * protobuf's ns_pb_put_varint use it): v at p, room for 10 bytes being the
 * caller's; returns the byte after it. */
static inline uint8_t* ns_varint_at(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}
void ns_buf_reset(ns_buf* b); /* len = 0, failed = 0; keeps the memory and the limit */
void ns_buf_free(ns_buf* b);  /* back to empty; keeps the limit */

#endif
