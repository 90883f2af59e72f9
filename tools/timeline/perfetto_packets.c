/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the Perfetto drawer's output (perfetto_packets.h): packets
 * to the file (deflated in bundles or as they are), track descriptors,
 * per-sequence interning, and the framing of TrackEvent packets.
 * Single-threaded. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "timeline/perfetto_packets.h"

/* ---- output ---- */

/* Writes a packet (Trace.packet: tag, length, bytes) to the file. */
static void write_packet(pf_drawer* d, const uint8_t* p, size_t len) {
  uint8_t head[12];
  size_t n = ns_pb_put_varint(head, (uint64_t)TRACE_PACKET << 3 | 2);
  n += ns_pb_put_varint(head + n, len);
  if (fwrite(head, 1, n, d->out) != n || fwrite(p, 1, len, d->out) != len) d->failed = 1;
}

/* The bundle so far as one compressed_packets packet. */
void ns_pf_flush_bundle(pf_drawer* d) {
  if (!d->bundle_len) return;
  uLongf zlen = compressBound((uLong)d->bundle_len);
  size_t room = (size_t)zlen + 16;
  if (room > d->zcap) {
    uint8_t* z = realloc(d->zbuf, room);
    if (!z) {
      d->failed = 1;
      d->bundle_len = 0;
      return;
    }
    d->zbuf = z;
    d->zcap = room;
  }
  /* TracePacket { compressed_packets = deflate(packets) }, built in place after its header */
  uint8_t* body = d->zbuf + 16;
  zlen = (uLongf)(d->zcap - 16);
  if (compress2(body, &zlen, d->bundle, (uLong)d->bundle_len, Z_BEST_SPEED) != Z_OK) {
    d->failed = 1;
    d->bundle_len = 0;
    return;
  }
  uint8_t head[16];
  size_t n = ns_pb_put_varint(head, (uint64_t)PKT_COMPRESSED_PACKETS << 3 | 2);
  n += ns_pb_put_varint(head + n, zlen);
  memcpy(body - n, head, n);
  write_packet(d, body - n, n + zlen);
  d->bundle_len = 0;
}

void ns_pf_emit(pf_drawer* d, const ns_pb* pkt) {
  if (pkt->buf.failed) {
    d->failed = 1;
    return;
  }
  if (!d->compress) {
    write_packet(d, pkt->buf.data, pkt->buf.len);
    return;
  }
  if (d->bundle_len + pkt->buf.len + 12 > BUNDLE_BYTES) ns_pf_flush_bundle(d);
  if (pkt->buf.len + 12 > BUNDLE_BYTES) { /* never made: packets are a few hundred bytes */
    write_packet(d, pkt->buf.data, pkt->buf.len);
    return;
  }
  size_t n = ns_pb_put_varint(d->bundle + d->bundle_len, (uint64_t)TRACE_PACKET << 3 | 2);
  n += ns_pb_put_varint(d->bundle + d->bundle_len + n, pkt->buf.len);
  memcpy(d->bundle + d->bundle_len + n, pkt->buf.data, pkt->buf.len);
  d->bundle_len += n + pkt->buf.len;
}

/* ---- tracks ---- */

static uint64_t process_key(uint32_t pid) { return 1ull << 63 | (uint64_t)pid << 32 | 0xFFFFFFFFu; }
static uint64_t thread_key(uint32_t pid, uint32_t tid) { return 1ull << 63 | (uint64_t)pid << 32 | tid; }

track* ns_pf_new_track(pf_drawer* d) {
  if (d->ntracks == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 64;
    track* t = realloc(d->tracks, cap * sizeof *t);
    if (!t) return NULL;
    d->tracks = t;
    d->cap = cap;
  }
  track* t = &d->tracks[d->ntracks++];
  memset(t, 0, sizeof *t);
  t->uuid = d->ntracks;
  t->seq = (uint32_t)d->ntracks + DESCRIPTOR_SEQ;
  return t;
}

static void descriptor_begin(pf_drawer* d, const track* t) {
  ns_pb* p = &d->pkt;
  ns_pb_reset(p);
  ns_pb_uint(p, PKT_SEQUENCE_ID, DESCRIPTOR_SEQ);
  ns_pb_begin(p, PKT_TRACK_DESCRIPTOR);
  ns_pb_uint(p, TD_UUID, t->uuid);
  if (t->parent_uuid) ns_pb_uint(p, TD_PARENT_UUID, t->parent_uuid);
}

void ns_pf_write_process(pf_drawer* d, const track* t, const char* label) {
  descriptor_begin(d, t);
  ns_pb* p = &d->pkt;
  ns_pb_uint(p, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
  ns_pb_begin(p, TD_PROCESS);
  ns_pb_uint(p, PD_PID, t->pid);
  ns_pb_str(p, PD_PROCESS_NAME, t->name ? t->name : "");
  if (label) ns_pb_str(p, PD_PROCESS_LABELS, label);
  ns_pb_end(p);
  ns_pb_end(p);
  ns_pf_emit(d, p);
}

track* ns_pf_process_track(pf_drawer* d, uint32_t pid, const char* name) {
  int ins;
  uint64_t* v = ns_idmap_put(&d->by_key, process_key(pid), &ins);
  if (!v) return NULL;
  if (!ins && !name) return &d->tracks[*v - 1];
  track* t;
  if (ins) {
    t = ns_pf_new_track(d);
    if (!t) {
      ns_idmap_del(&d->by_key, process_key(pid));
      return NULL;
    }
    t->is_process = 1;
    t->pid = pid;
    *v = d->ntracks;
  } else {
    t = &d->tracks[*v - 1];
  }
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "process %u", pid);
    name = fallback;
  }
  free(t->name);
  t->name = strdup(name);
  ns_pf_write_process(d, t, NULL);
  return t;
}

void ns_pf_write_named_track(pf_drawer* d, const track* t, const char* name, int has_sort, int64_t sort) {
  descriptor_begin(d, t);
  ns_pb* p = &d->pkt;
  ns_pb_str(p, TD_NAME, name);
  if (has_sort) ns_pb_int(p, TD_SIBLING_ORDER_RANK, (int32_t)sort);
  ns_pb_end(p);
  ns_pf_emit(d, p);
}

/* The track of (pid, tid); a new one is declared with `name` (NULL: a
 * default name) and, when has_sort, its place among its siblings. */
track* ns_pf_thread_track(pf_drawer* d, uint32_t pid, uint32_t tid, const char* name, int has_sort, int64_t sort) {
  uint64_t* v = ns_idmap_get(&d->by_key, thread_key(pid, tid));
  if (v) {
    track* t = &d->tracks[*v - 1];
    if (name) ns_pf_write_named_track(d, t, name, has_sort, sort); /* named after its first use */
    return t;
  }
  track* pt = ns_pf_process_track(d, pid, NULL);
  if (!pt) return NULL;
  uint64_t parent = pt->uuid;
  int ins;
  v = ns_idmap_put(&d->by_key, thread_key(pid, tid), &ins);
  track* t = v ? ns_pf_new_track(d) : NULL;
  if (!t) {
    if (v) ns_idmap_del(&d->by_key, thread_key(pid, tid));
    return NULL;
  }
  *v = d->ntracks;
  t->parent_uuid = parent;
  t->pid = pid;
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "thread %u", tid);
    name = fallback;
  }
  ns_pf_write_named_track(d, t, name, has_sort, sort);
  return t;
}

/* ---- interning ---- */

/* The iid of s in the table of t's sequence; a new entry goes into the
 * packet's InternedData. 0 when out of memory (the caller writes s inline). */
uint64_t ns_pf_intern(pf_drawer* d, track* t, unsigned table, const char* s, size_t n) {
  int ins;
  uint64_t* v = ns_idmap_put(&d->interned, ns_idmap_text_key((uint64_t)t->seq << 8 | table, s, n), &ins);
  if (!v) return 0;
  if (!ins) return *v;
  *v = ++t->next_iid;
  ns_pb_begin(&d->in, table);
  ns_pb_uint(&d->in, INTERNED_IID, *v);
  ns_pb_bytes(&d->in, INTERNED_NAME, s, n);
  ns_pb_end(&d->in);
  return *v;
}

/* ---- packets ---- */

/* Starts an event packet on t's sequence: the sequence's first packet (or
 * its first since the interning tables started over) is written first. */
void ns_pf_event_begin(pf_drawer* d, track* t, uint64_t ts) {
  if (t->gen != d->gen) {
    ns_pb* p = &d->pkt;
    ns_pb_reset(p);
    ns_pb_uint(p, PKT_SEQUENCE_ID, t->seq);
    ns_pb_uint(p, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    ns_pb_begin(p, PKT_DEFAULTS);
    ns_pb_uint(p, DEF_TIMESTAMP_CLOCK_ID, SEQUENCE_CLOCK);
    ns_pb_begin(p, DEF_TRACK_EVENT_DEFAULTS);
    ns_pb_uint(p, TED_TRACK_UUID, t->uuid);
    ns_pb_end(p);
    ns_pb_end(p);
    ns_pb_begin(p, PKT_CLOCK_SNAPSHOT);
    ns_pb_begin(p, CS_CLOCKS);
    ns_pb_uint(p, CLOCK_ID, CLOCK_BOOTTIME);
    ns_pb_uint(p, CLOCK_TIMESTAMP, ts);
    ns_pb_end(p);
    ns_pb_begin(p, CS_CLOCKS);
    ns_pb_uint(p, CLOCK_ID, SEQUENCE_CLOCK);
    ns_pb_uint(p, CLOCK_TIMESTAMP, ts);
    ns_pb_uint(p, CLOCK_IS_INCREMENTAL, 1);
    ns_pb_end(p);
    ns_pb_end(p);
    ns_pf_emit(d, p);
    t->gen = d->gen;
    t->last_ts = ts;
    t->next_iid = 0;
  }
  ns_pb_reset(&d->te);
  ns_pb_reset(&d->in);
}

/* Ends the event packet started by event_begin: timestamp, sequence, the
 * new interned entries, the TrackEvent. */
void ns_pf_event_end(pf_drawer* d, track* t, uint64_t ts) {
  ns_pb* p = &d->pkt;
  ns_pb_reset(p);
  ns_pb_uint(p, PKT_TIMESTAMP, ts - t->last_ts); /* a delta on the sequence clock (wraps when negative) */
  t->last_ts = ts;
  ns_pb_uint(p, PKT_SEQUENCE_ID, t->seq);
  if (d->in.buf.len) ns_pb_bytes(p, PKT_INTERNED_DATA, d->in.buf.data, d->in.buf.len);
  ns_pb_bytes(p, PKT_TRACK_EVENT, d->te.buf.data, d->te.buf.len);
  if (d->in.buf.failed || d->te.buf.failed) d->failed = 1;
  ns_pf_emit(d, p);
  if (d->interned.len > INTERN_MAX) { /* every sequence starts over at its next packet */
    ns_idmap_free(&d->interned);
    ns_idmap_init(&d->interned);
    d->gen++;
  }
}
