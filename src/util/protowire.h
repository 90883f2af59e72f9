/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the protobuf wire format, encode only, no schema: OTLP
 * metrics (src/sinks) and the Perfetto trace (tools). Single-threaded.
 *
 * A message is built in an ns_buf (bytebuf.h: its failure is sticky, so the
 * caller checks buf.failed once per message). Nested messages are opened
 * with ns_pb_begin and closed with ns_pb_end: one byte is reserved for the
 * length, and the body moves forward in the rarer case that it needs more
 * (a body over 127 bytes), so lengths are always minimal varints. */
#ifndef NCCLSCOPE_UTIL_PROTOWIRE_H
#define NCCLSCOPE_UTIL_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytebuf.h"

#define NS_PB_MAX_DEPTH 16

typedef struct {
  ns_buf buf;                    /* the encoded bytes (buf.limit bounds it) */
  int depth;                     /* open nested messages */
  size_t open[NS_PB_MAX_DEPTH];  /* offset of each open message's length byte */
} ns_pb;

static inline void ns_pb_reset(ns_pb* b) {
  ns_buf_reset(&b->buf);
  b->depth = 0;
}
static inline void ns_pb_free(ns_pb* b) {
  ns_buf_free(&b->buf);
  b->depth = 0;
}

/* Bytes of v as a varint (1..10). */
static inline unsigned ns_pb_varint_size(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
/* Writes v as a varint at out (room for 10 bytes); returns its length. */
size_t ns_pb_put_varint(uint8_t* out, uint64_t v);

void ns_pb_varint(ns_pb* b, uint64_t v);                        /* a bare varint (packed elements, lengths) */
void ns_pb_raw_fixed64(ns_pb* b, uint64_t v);                   /* a bare little-endian 64-bit value */
void ns_pb_tag(ns_pb* b, uint32_t field, unsigned wire_type);   /* 0 varint, 1 fixed64, 2 length-delimited */
void ns_pb_uint(ns_pb* b, uint32_t field, uint64_t v);          /* uint32/uint64/bool/enum */
static inline void ns_pb_int(ns_pb* b, uint32_t field, int64_t v) { ns_pb_uint(b, field, (uint64_t)v); } /* int32/64 */
void ns_pb_fixed64(ns_pb* b, uint32_t field, uint64_t v);       /* fixed64/sfixed64 */
void ns_pb_double(ns_pb* b, uint32_t field, double v);
void ns_pb_bytes(ns_pb* b, uint32_t field, const void* p, size_t n); /* bytes, string, an encoded message */
void ns_pb_str(ns_pb* b, uint32_t field, const char* s);        /* NULL: "" */
void ns_pb_begin(ns_pb* b, uint32_t field);                     /* a nested message... */
void ns_pb_end(ns_pb* b);                                       /* ...and its end */

#endif
