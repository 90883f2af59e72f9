/* ncclscope util: the protobuf wire format (protowire.h). */
#include "util/protowire.h"

#include <string.h>

void ns_pb_fixed64(ns_buf* b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  ns_buf_put(b, le, 8);
}

uint64_t ns_pb_double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

void ns_pb_f_varint(ns_buf* b, unsigned field, uint64_t v) {
  ns_pb_tag(b, field, NS_PB_VARINT);
  ns_buf_put_varint(b, v);
}

void ns_pb_f_sint(ns_buf* b, unsigned field, int64_t v) { ns_pb_f_varint(b, field, (uint64_t)v); }

void ns_pb_f_fixed64(ns_buf* b, unsigned field, uint64_t v) {
  ns_pb_tag(b, field, NS_PB_I64);
  ns_pb_fixed64(b, v);
}

void ns_pb_f_double(ns_buf* b, unsigned field, double d) { ns_pb_f_fixed64(b, field, ns_pb_double_bits(d)); }

void ns_pb_f_bytes(ns_buf* b, unsigned field, const void* p, size_t n) {
  ns_pb_tag(b, field, NS_PB_LEN);
  ns_buf_put_varint(b, n);
  ns_buf_put(b, p, n);
}

void ns_pb_f_string(ns_buf* b, unsigned field, const char* s) {
  if (!s) s = "";
  ns_pb_f_bytes(b, field, s, strlen(s));
}

size_t ns_pb_msg_begin(ns_buf* b, unsigned field) {
  ns_pb_tag(b, field, NS_PB_LEN);
  return b->len;
}

void ns_pb_msg_end(ns_buf* b, size_t at) {
  if (b->failed || at > b->len) return;
  size_t body = b->len - at;
  uint8_t len[10];
  size_t n = 0;
  for (uint64_t v = body; n == 0 || v; v >>= 7) len[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
  if (ns_buf_reserve(b, n) != 0) return;
  memmove(b->data + at + n, b->data + at, body);
  memcpy(b->data + at, len, n);
  b->len += n;
}
