/* ncclscope util: the protobuf wire format, written into an ns_buf (OTLP
 * metrics in src/sinks; any other protobuf output). Encodes only: fields in
 * the order they are called, nested messages written in place with their
 * length inserted once known (ns_pb_msg_end moves the body by the 1-10 bytes
 * of the length: meant for messages of a few KiB, not for whole files).
 * Single-threaded, like the buffer. */
#ifndef NCCLSCOPE_UTIL_PROTOWIRE_H
#define NCCLSCOPE_UTIL_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytebuf.h"

enum { NS_PB_VARINT = 0, NS_PB_I64 = 1, NS_PB_LEN = 2, NS_PB_I32 = 5 };

static inline void ns_pb_tag(ns_buf* b, unsigned field, unsigned wire_type) {
  ns_buf_put_varint(b, (uint64_t)field << 3 | wire_type);
}
/* A raw little-endian 64-bit value (fixed64, sfixed64, double bits; packed elements). */
void ns_pb_fixed64(ns_buf* b, uint64_t v);
uint64_t ns_pb_double_bits(double d);

void ns_pb_f_varint(ns_buf* b, unsigned field, uint64_t v);
void ns_pb_f_sint(ns_buf* b, unsigned field, int64_t v); /* int64 (two's complement varint) */
void ns_pb_f_fixed64(ns_buf* b, unsigned field, uint64_t v);
void ns_pb_f_double(ns_buf* b, unsigned field, double d);
void ns_pb_f_bytes(ns_buf* b, unsigned field, const void* p, size_t n);
void ns_pb_f_string(ns_buf* b, unsigned field, const char* s); /* NULL: "" */

/* A nested message: ns_pb_msg_begin writes the tag and returns where the body
 * starts; ns_pb_msg_end inserts the body's length there. */
size_t ns_pb_msg_begin(ns_buf* b, unsigned field);
void ns_pb_msg_end(ns_buf* b, size_t at);

#endif
