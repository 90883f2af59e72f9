/* ncclscope CLI: protocol buffers wire-format encoder (see protobuf_writer.h). */
#include "protobuf_writer.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2 };

void nspb_init(ns_pb* b) { memset(b, 0, sizeof *b); }

void nspb_free(ns_pb* b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Room for n more bytes; 0 when out of memory (failed is set). */
static int reserve(ns_pb* b, size_t n) {
  if (b->len + n <= b->cap) return 1;
  if (b->failed) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n) cap *= 2;
  uint8_t* p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

size_t nspb_put_varint(uint8_t* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

void nspb_varint(ns_pb* b, uint64_t v) {
  if (reserve(b, 10)) b->len += nspb_put_varint(b->p + b->len, v);
}

static void tag(ns_pb* b, uint32_t field, unsigned wire) { nspb_varint(b, (uint64_t)field << 3 | wire); }

void nspb_uint(ns_pb* b, uint32_t field, uint64_t v) {
  tag(b, field, WIRE_VARINT);
  nspb_varint(b, v);
}

void nspb_fixed64(ns_pb* b, uint32_t field, uint64_t v) {
  tag(b, field, WIRE_FIXED64);
  if (!reserve(b, 8)) return;
  for (int i = 0; i < 8; i++) b->p[b->len++] = (uint8_t)(v >> (8 * i)); /* little-endian */
}

void nspb_double(ns_pb* b, uint32_t field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  nspb_fixed64(b, field, bits);
}

void nspb_bytes(ns_pb* b, uint32_t field, const void* p, size_t n) {
  tag(b, field, WIRE_LEN);
  nspb_varint(b, n);
  if (n && reserve(b, n)) {
    memcpy(b->p + b->len, p, n);
    b->len += n;
  }
}

void nspb_str(ns_pb* b, uint32_t field, const char* s) { nspb_bytes(b, field, s, s ? strlen(s) : 0); }

void nspb_begin(ns_pb* b, uint32_t field) {
  tag(b, field, WIRE_LEN);
  if (b->depth == NSPB_MAX_DEPTH || !reserve(b, 1)) {
    b->failed = 1;
    return;
  }
  b->open[b->depth++] = b->len;
  b->p[b->len++] = 0;
}

void nspb_end(ns_pb* b) {
  if (b->depth == 0 || b->failed) return;
  size_t at = b->open[--b->depth];
  size_t body = b->len - at - 1;
  unsigned extra = nspb_varint_size(body) - 1;
  if (extra) {
    if (!reserve(b, extra)) return;
    memmove(b->p + at + 1 + extra, b->p + at + 1, body);
    b->len += extra;
  }
  nspb_put_varint(b->p + at, body);
}
