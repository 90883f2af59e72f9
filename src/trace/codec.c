/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: trace block encoder/decoder (format: docs/trace-format.md).
 * Runs on the plugin's writer thread and in the CLI; never on NCCL's threads. */
#include "trace/codec.h"

#include <stdlib.h>
#include <string.h>

/* ---- varints (written by ns_buf_put_varint, util/bytebuf.h) ---- */

int ns_get_varint(const uint8_t** pp, const uint8_t* end, uint64_t* out) {
  const uint8_t* p = *pp;
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p >= end) return -1;
    uint8_t byte = *p++;
    v |= (uint64_t)(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      *pp = p;
      *out = v;
      return 0;
    }
  }
  return -1;
}

/* A varint padded to exactly 5 bytes, so a count can be patched in place. */
static void put_fixed5(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) {
    p[i] = (uint8_t)((v & 0x7F) | 0x80);
    v >>= 7;
  }
  p[4] = (uint8_t)(v & 0x7F);
}

static size_t reserve_fixed5(ns_buf* b) {
  size_t at = b->len;
  static const uint8_t zero5[5] = {0x80, 0x80, 0x80, 0x80, 0};
  ns_buf_put(b, zero5, 5);
  return at;
}

/* Ends a block whose record count was reserved at count_at (EVENTS,
 * STRINGS): the count patched in, then the framing. Nothing when the
 * buffer failed. */
static void end_counted_block(ns_buf* b, size_t block_at, size_t count_at, uint32_t count, uint16_t kind,
                              uint64_t seq) {
  if (b->failed) return;
  put_fixed5(b->data + count_at, count);
  ns_block_end(b, block_at, kind, seq);
}

/* ---- file header and block framing ---- */

void ns_file_header_init(ns_file_header* h) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, NS_TRACE_MAGIC, sizeof NS_TRACE_MAGIC);
  h->version_major = NS_TRACE_VERSION_MAJOR;
  h->version_minor = NS_TRACE_VERSION_MINOR;
  h->header_size = sizeof *h;
}

int ns_file_header_check(const ns_file_header* h) {
  if (memcmp(h->magic, NS_TRACE_MAGIC, sizeof NS_TRACE_MAGIC) != 0) return -1;
  if (h->version_major != NS_TRACE_VERSION_MAJOR) return -1;
  if (h->header_size < sizeof *h) return -1;
  return 0;
}

size_t ns_block_begin(ns_buf* b) {
  size_t at = b->len;
  ns_block_header h;
  memset(&h, 0, sizeof h);
  ns_buf_put(b, &h, sizeof h);
  return at;
}

void ns_block_end(ns_buf* b, size_t at, uint16_t kind, uint64_t seq) {
  if (b->failed) return;
  ns_block_header h;
  memset(&h, 0, sizeof h);
  h.magic = NS_BLOCK_MAGIC;
  h.kind = kind;
  h.payload_size = (uint32_t)(b->len - at - sizeof h);
  h.payload_crc32 = ns_crc32(b->data + at + sizeof h, h.payload_size);
  h.seq = seq;
  memcpy(b->data + at, &h, sizeof h);
}

/* ---- props ---- */

static void props_key(ns_buf* b, uint32_t key, uint32_t ptype) {
  ns_buf_put_varint(b, key);
  ns_buf_put_varint(b, ptype);
}

void ns_props_u64(ns_buf* b, uint32_t key, uint64_t v) {
  props_key(b, key, NS_PT_U64);
  ns_buf_put_varint(b, v);
}

void ns_props_i64(ns_buf* b, uint32_t key, int64_t v) {
  props_key(b, key, NS_PT_I64);
  ns_buf_put_varint(b, ns_zigzag(v));
}

void ns_props_f64(ns_buf* b, uint32_t key, double v) {
  props_key(b, key, NS_PT_F64);
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(bits >> (8 * i));
  ns_buf_put(b, le, 8);
}

void ns_props_str(ns_buf* b, uint32_t key, const char* s, size_t n) {
  props_key(b, key, NS_PT_STR);
  ns_buf_put_varint(b, n);
  ns_buf_put(b, s, n);
}

int ns_props_next(const uint8_t** pp, const uint8_t* end, ns_prop* out) {
  if (*pp >= end) return 0;
  uint64_t key, ptype, v;
  if (ns_get_varint(pp, end, &key) || ns_get_varint(pp, end, &ptype)) return -1;
  memset(out, 0, sizeof *out);
  out->key = (uint32_t)key;
  out->ptype = (uint32_t)ptype;
  switch (ptype) {
    case NS_PT_U64:
      if (ns_get_varint(pp, end, &v)) return -1;
      out->u = v;
      return 1;
    case NS_PT_I64:
      if (ns_get_varint(pp, end, &v)) return -1;
      out->u = (uint64_t)ns_unzigzag(v);
      return 1;
    case NS_PT_STR:
      if (ns_get_varint(pp, end, &v) || v > (uint64_t)(end - *pp)) return -1;
      out->s = (const char*)*pp;
      out->slen = (size_t)v;
      *pp += v;
      return 1;
    case NS_PT_F64: {
      if (end - *pp < 8) return -1;
      uint64_t bits = 0;
      for (int i = 0; i < 8; i++) bits |= (uint64_t)(*pp)[i] << (8 * i);
      memcpy(&out->f, &bits, sizeof bits);
      *pp += 8;
      return 1;
    }
    default:
      return -1; /* an unknown ptype cannot be skipped */
  }
}

/* ---- EVENTS ---- */

void ns_events_begin(ns_event_encoder* e, ns_buf* b, uint32_t tid, uint32_t ring, uint64_t base_ts,
                     uint64_t base_id) {
  memset(e, 0, sizeof *e);
  e->buf = b;
  e->block_at = ns_block_begin(b);
  ns_buf_put_varint(b, tid);
  ns_buf_put_varint(b, ring);
  ns_buf_put_varint(b, base_ts);
  ns_buf_put_varint(b, base_id);
  e->count_at = reserve_fixed5(b);
  e->prev_ts = base_ts;
  e->prev_id = base_id;
}

void ns_events13_begin(ns_event_encoder* e, ns_buf* b, uint32_t tid, uint32_t ring, uint64_t base_ts,
                       uint64_t base_id) {
  ns_events_begin(e, b, tid, ring, base_ts, base_id);
  e->v13 = 1;
}

/* The most bytes one record takes: its tag and at most 6 + NS_REC_NUMS +
 * NS_REC_STRS varints. The writer encodes millions of records a second, so
 * the room is reserved once per record, not once per field. */
#define NS_RECORD_MAX_BYTES (1 + 10 * (6 + NS_REC_NUMS + NS_REC_STRS))

void ns_events_put(ns_event_encoder* e, const ns_record* r) {
  ns_buf* b = e->buf;
  unsigned kind = r->kind & 3;
  unsigned has_flags = r->flags != 0;
  unsigned comm_changed = r->comm != e->prev_comm;
  uint64_t d_ts = ns_zigzag((int64_t)(r->ts - e->prev_ts)), d_id = ns_zigzag((int64_t)(r->id - e->prev_id));
  e->prev_ts = r->ts;
  e->prev_id = r->id;
  e->prev_comm = r->comm;
  e->count++;
  if (ns_buf_reserve(b, NS_RECORD_MAX_BYTES) != 0) return; /* the block is failed: nothing of it is written */
  uint8_t* p = b->data + b->len;
  *p++ = (uint8_t)(kind << 6 | has_flags << 5 | comm_changed << 4 | (r->type & 0xF));
  p = ns_varint_at(p, d_ts);
  p = ns_varint_at(p, d_id);
  if (has_flags) p = ns_varint_at(p, r->flags);
  if (comm_changed) p = ns_varint_at(p, r->comm);
  if (kind == NS_REC_START) {
    uint64_t code;
    if (r->flags & NS_RF_PARENT_RAW)
      code = r->parent + 1;
    else
      code = r->parent ? ns_zigzag((int64_t)(r->id - r->parent)) + 1 : 0;
    p = ns_varint_at(p, code);
    if (r->flags & NS_RF_PXN) p = ns_varint_at(p, r->origin_pid);
    const ns_type_layout* l = &(e->v13 ? ns_type_layouts : ns_type_layouts12)[r->type < NS_EV_COUNT ? r->type : 0];
    for (unsigned i = 0; i < l->nums; i++) p = ns_varint_at(p, ns_zigzag((int64_t)r->num[i]));
    for (unsigned i = 0; i < l->strs; i++) p = ns_varint_at(p, r->str[i]);
  } else if (kind == NS_REC_STATE) {
    p = ns_varint_at(p, ns_zigzag(r->state));
    p = ns_varint_at(p, r->arg);
  }
  b->len = (size_t)(p - b->data);
}

void ns_events_end(ns_event_encoder* e, uint64_t seq) {
  end_counted_block(e->buf, e->block_at, e->count_at, e->count, e->v13 ? NS_BLOCK_EVENTS13 : NS_BLOCK_EVENTS, seq);
}

int ns_events_open(ns_event_decoder* d, const uint8_t* payload, size_t n) {
  memset(d, 0, sizeof *d);
  d->p = payload;
  d->end = payload + n;
  uint64_t tid, ring, base_ts, base_id, count;
  if (ns_get_varint(&d->p, d->end, &tid) || ns_get_varint(&d->p, d->end, &ring) ||
      ns_get_varint(&d->p, d->end, &base_ts) || ns_get_varint(&d->p, d->end, &base_id) ||
      ns_get_varint(&d->p, d->end, &count))
    return -1;
  d->tid = (uint32_t)tid;
  d->ring = (uint32_t)ring;
  d->prev_ts = base_ts;
  d->prev_id = base_id;
  d->count = count;
  d->layouts = ns_type_layouts12;
  return 0;
}

int ns_events13_open(ns_event_decoder* d, const uint8_t* payload, size_t n) {
  if (ns_events_open(d, payload, n) < 0) return -1;
  d->layouts = ns_type_layouts;
  return 0;
}

int ns_events_next(ns_event_decoder* d, ns_record* r) {
  if (d->p >= d->end) return 0;
  memset(r, 0, sizeof *r);
  uint8_t tag = *d->p++;
  uint64_t v;
  r->kind = tag >> 6;
  r->type = tag & 0xF;
  r->tid = d->tid;
  if (r->kind < NS_REC_START || r->type >= NS_EV_COUNT) return -1;
  if (ns_get_varint(&d->p, d->end, &v)) return -1;
  r->ts = d->prev_ts + (uint64_t)ns_unzigzag(v);
  if (ns_get_varint(&d->p, d->end, &v)) return -1;
  r->id = d->prev_id + (uint64_t)ns_unzigzag(v);
  if (tag & 0x20) {
    if (ns_get_varint(&d->p, d->end, &v)) return -1;
    r->flags = (uint16_t)v;
  }
  r->comm = d->prev_comm;
  if (tag & 0x10) {
    if (ns_get_varint(&d->p, d->end, &v)) return -1;
    r->comm = (uint32_t)v;
  }
  d->prev_ts = r->ts;
  d->prev_id = r->id;
  d->prev_comm = r->comm;
  if (r->kind == NS_REC_START) {
    if (ns_get_varint(&d->p, d->end, &v)) return -1;
    if (r->flags & NS_RF_PARENT_RAW)
      r->parent = v ? v - 1 : 0;
    else
      r->parent = v ? r->id - (uint64_t)ns_unzigzag(v - 1) : 0;
    if (r->flags & NS_RF_PXN) {
      if (ns_get_varint(&d->p, d->end, &v)) return -1;
      r->origin_pid = (uint32_t)v;
    }
    const ns_type_layout* l = &d->layouts[r->type];
    for (unsigned i = 0; i < l->nums; i++) {
      if (ns_get_varint(&d->p, d->end, &v)) return -1;
      r->num[i] = (uint64_t)ns_unzigzag(v);
    }
    for (unsigned i = 0; i < l->strs; i++) {
      if (ns_get_varint(&d->p, d->end, &v)) return -1;
      r->str[i] = (uint32_t)v;
    }
  } else if (r->kind == NS_REC_STATE) {
    if (ns_get_varint(&d->p, d->end, &v)) return -1;
    r->state = (int32_t)ns_unzigzag(v);
    if (ns_get_varint(&d->p, d->end, &v)) return -1;
    r->arg = v;
  }
  d->decoded++;
  return 1;
}

int ns_events_miscounted(const ns_event_decoder* d) { return d->decoded != d->count; }

/* ---- STRINGS ---- */

void ns_strings_begin(ns_strings_encoder* e, ns_buf* b) {
  memset(e, 0, sizeof *e);
  e->buf = b;
  e->block_at = ns_block_begin(b);
  e->count_at = reserve_fixed5(b);
}

void ns_strings_put(ns_strings_encoder* e, uint32_t id, const char* s, size_t n) {
  ns_buf_put_varint(e->buf, id);
  ns_buf_put_varint(e->buf, n);
  ns_buf_put(e->buf, s, n);
  e->count++;
}

void ns_strings_end(ns_strings_encoder* e, uint64_t seq) {
  end_counted_block(e->buf, e->block_at, e->count_at, e->count, NS_BLOCK_STRINGS, seq);
}

int ns_strings_open(ns_strings_decoder* d, const uint8_t* payload, size_t n) {
  uint64_t count;
  d->p = payload;
  d->end = payload + n;
  if (ns_get_varint(&d->p, d->end, &count)) return -1;
  d->remaining = (uint32_t)count;
  return 0;
}

int ns_strings_next(ns_strings_decoder* d, uint32_t* id, const char** s, size_t* n) {
  if (d->remaining == 0) return 0;
  uint64_t vid, len;
  if (ns_get_varint(&d->p, d->end, &vid) || ns_get_varint(&d->p, d->end, &len)) return -1;
  if (len > (uint64_t)(d->end - d->p)) return -1;
  *id = (uint32_t)vid;
  *s = (const char*)d->p;
  *n = (size_t)len;
  d->p += len;
  d->remaining--;
  return 1;
}
