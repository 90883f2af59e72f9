/* ncclscope CLI: a small protocol buffers encoder (wire format only, no
 * schema), for the Perfetto exporter.
 *
 * A message is built in a growable byte buffer. Nested messages are opened
 * with nspb_begin and closed with nspb_end: one byte is reserved for the
 * length and the body is moved forward in the rare case it needs more (a
 * body over 127 bytes), so lengths are always minimal varints. Out of
 * memory, the buffer stops growing and `failed` is set; the caller checks
 * it once per message. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_PROTOBUF_WRITER_H
#define NCCLSCOPE_TOOLS_PROTOBUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#define NSPB_MAX_DEPTH 16

typedef struct {
  uint8_t* p;
  size_t len, cap;
  int failed;
  int depth;
  size_t open[NSPB_MAX_DEPTH]; /* offset of each open message's length byte */
} ns_pb;

void nspb_init(ns_pb* b);
void nspb_free(ns_pb* b);
static inline void nspb_reset(ns_pb* b) {
  b->len = 0;
  b->depth = 0;
}

/* Bytes of v as a varint (1..10). */
static inline unsigned nspb_varint_size(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
/* Writes v as a varint at out (room for 10 bytes); returns its length. */
size_t nspb_put_varint(uint8_t* out, uint64_t v);

void nspb_varint(ns_pb* b, uint64_t v);                       /* a bare varint */
void nspb_uint(ns_pb* b, uint32_t field, uint64_t v);         /* uint32/uint64/bool/enum */
static inline void nspb_int(ns_pb* b, uint32_t field, int64_t v) { nspb_uint(b, field, (uint64_t)v); } /* int32/int64 */
void nspb_fixed64(ns_pb* b, uint32_t field, uint64_t v);
void nspb_double(ns_pb* b, uint32_t field, double v);
void nspb_bytes(ns_pb* b, uint32_t field, const void* p, size_t n); /* bytes, string, or an encoded message */
void nspb_str(ns_pb* b, uint32_t field, const char* s);
void nspb_begin(ns_pb* b, uint32_t field); /* a nested message */
void nspb_end(ns_pb* b);

#endif
