/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the protobuf wire format (protowire.h). */
#include "util/protowire.h"

#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2 };

size_t ns_pb_put_varint(uint8_t* out, uint64_t v) { return (size_t)(ns_varint_at(out, v) - out); }

void ns_pb_varint(ns_pb* b, uint64_t v) {
  if (ns_buf_reserve(&b->buf, 10) == 0) b->buf.len += ns_pb_put_varint(b->buf.data + b->buf.len, v);
}

void ns_pb_raw_fixed64(ns_pb* b, uint64_t v) {
  if (ns_buf_reserve(&b->buf, 8) != 0) return;
  for (int i = 0; i < 8; i++) b->buf.data[b->buf.len++] = (uint8_t)(v >> (8 * i));
}

void ns_pb_tag(ns_pb* b, uint32_t field, unsigned wire_type) { ns_pb_varint(b, (uint64_t)field << 3 | wire_type); }

void ns_pb_uint(ns_pb* b, uint32_t field, uint64_t v) {
  ns_pb_tag(b, field, WIRE_VARINT);
  ns_pb_varint(b, v);
}

void ns_pb_fixed64(ns_pb* b, uint32_t field, uint64_t v) {
  ns_pb_tag(b, field, WIRE_FIXED64);
  ns_pb_raw_fixed64(b, v);
}

void ns_pb_double(ns_pb* b, uint32_t field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  ns_pb_fixed64(b, field, bits);
}

void ns_pb_bytes(ns_pb* b, uint32_t field, const void* p, size_t n) {
  ns_pb_tag(b, field, WIRE_LEN);
  ns_pb_varint(b, n);
  ns_buf_put(&b->buf, p, n);
}

void ns_pb_str(ns_pb* b, uint32_t field, const char* s) { ns_pb_bytes(b, field, s, s ? strlen(s) : 0); }

void ns_pb_begin(ns_pb* b, uint32_t field) {
  ns_pb_tag(b, field, WIRE_LEN);
  if (b->depth == NS_PB_MAX_DEPTH || ns_buf_reserve(&b->buf, 1) != 0) {
    b->buf.failed = 1;
    return;
  }
  b->open[b->depth++] = b->buf.len;
  b->buf.data[b->buf.len++] = 0;
}

void ns_pb_end(ns_pb* b) {
  if (b->depth == 0 || b->buf.failed) return;
  size_t at = b->open[--b->depth];
  size_t body = b->buf.len - at - 1;
  unsigned extra = ns_pb_varint_size(body) - 1;
  if (extra) {
    if (ns_buf_reserve(&b->buf, extra) != 0) return;
    memmove(b->buf.data + at + 1 + extra, b->buf.data + at + 1, body);
    b->buf.len += extra;
  }
  ns_pb_put_varint(b->buf.data + at, body);
}
