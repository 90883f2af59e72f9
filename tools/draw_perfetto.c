/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the Perfetto drawer for the timeline layout
 * (timeline_draw.h): Perfetto's native protobuf trace (a Trace message:
 * TracePackets holding TrackDescriptors and TrackEvents), for
 * ui.perfetto.dev and trace_processor. Field numbers: the public Perfetto
 * trace schema (a subset is in tests/tools/perfetto_subset.proto).
 *
 * Encoding, chosen for size (about a tenth of the Trace Event JSON):
 *  - Tracks. A process track per layout pid (ProcessDescriptor: synthetic
 *    pid, the rank's name, labels), and under it one named track per layout
 *    tid (threads, per-channel lanes, overlap tracks), ordered by the
 *    layout's sort index (sibling_order_rank). Tracks are plain named child
 *    tracks, not ThreadDescriptors: a real thread serves several ranks of
 *    its process, and a tid may belong to one process only in Perfetto.
 *    Counters get counter tracks; an async slice a track of its own.
 *  - Sequences. Every track writes its events on a packet sequence of its
 *    own, whose first packet clears the incremental state and sets the
 *    defaults: the track (so events carry no track_uuid) and a
 *    sequence-scoped incremental clock (so timestamps are deltas from the
 *    previous packet of the sequence, in ns; the clock snapshot maps it 1:1
 *    onto the trace clock). Events of one track are written mostly in time
 *    order, so most deltas take one to three bytes.
 *  - Interning. Event names, categories, annotation names and short string
 *    values are interned per sequence (InternedData in the packet that
 *    first uses them). The tables are bounded: past INTERN_MAX entries in
 *    all, every sequence starts over (SEQ_INCREMENTAL_STATE_CLEARED) at its
 *    next packet.
 *  - Slices are SLICE_BEGIN / SLICE_END pairs; sub-slices (states) between
 *    them, so that equal timestamps keep the nesting (trace_processor sorts
 *    packets by time, then by file order). Arguments become debug
 *    annotations: numbers stay numbers, "0x..." strings become pointer
 *    values (an eventAddr keeps its 64-bit per-file id; the file is the
 *    process track), nested objects become dictionaries.
 *  - Flows. A parent link is a flow id on both slices (the earlier begins
 *    it). When the parent was written before its child, an instant
 *    "parent" at the parent's start on its track carries the id.
 *
 * Memory: the track table, the interning map (bounded) and one packet
 * buffer; each packet goes to the FILE when complete. Single-threaded. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "json_reader.h"
#include "util/protowire.h"
#include "timeline_draw.h"
#include "util/idmap.h"

/* Field numbers (public Perfetto trace schema). */
enum {
  TRACE_PACKET = 1,
  /* TracePacket */
  PKT_TIMESTAMP = 8,
  PKT_TRACK_EVENT = 11,
  PKT_SEQUENCE_ID = 10,
  PKT_INTERNED_DATA = 12,
  PKT_SEQUENCE_FLAGS = 13,
  PKT_CLOCK_SNAPSHOT = 6,
  PKT_COMPRESSED_PACKETS = 50,
  PKT_DEFAULTS = 59,
  PKT_TRACK_DESCRIPTOR = 60,
  SEQ_INCREMENTAL_STATE_CLEARED = 1,
  SEQ_NEEDS_INCREMENTAL_STATE = 2,
  /* TracePacketDefaults / TrackEventDefaults */
  DEF_TIMESTAMP_CLOCK_ID = 58,
  DEF_TRACK_EVENT_DEFAULTS = 11,
  TED_TRACK_UUID = 11,
  /* ClockSnapshot / Clock */
  CS_CLOCKS = 1,
  CLOCK_ID = 1,
  CLOCK_TIMESTAMP = 2,
  CLOCK_IS_INCREMENTAL = 3,
  CLOCK_BOOTTIME = 6,
  SEQUENCE_CLOCK = 64, /* the first sequence-scoped clock id */
  /* TrackDescriptor, ProcessDescriptor, CounterDescriptor */
  TD_UUID = 1,
  TD_NAME = 2,
  TD_PROCESS = 3,
  TD_PARENT_UUID = 5,
  TD_COUNTER = 8,
  TD_CHILD_ORDERING = 11,
  TD_SIBLING_ORDER_RANK = 12,
  CHILD_ORDERING_EXPLICIT = 3,
  PD_PID = 1,
  PD_PROCESS_NAME = 6,
  PD_PROCESS_LABELS = 8,
  /* TrackEvent */
  TE_CATEGORY_IIDS = 3,
  TE_DEBUG_ANNOTATIONS = 4,
  TE_TYPE = 9,
  TE_NAME_IID = 10,
  TE_TRACK_UUID = 11,
  TE_COUNTER_VALUE = 30,
  TE_FLOW_IDS = 47,
  TYPE_SLICE_BEGIN = 1,
  TYPE_SLICE_END = 2,
  TYPE_INSTANT = 3,
  TYPE_COUNTER = 4,
  /* DebugAnnotation */
  DA_NAME_IID = 1,
  DA_BOOL = 2,
  DA_UINT = 3,
  DA_INT = 4,
  DA_DOUBLE = 5,
  DA_STRING = 6,
  DA_POINTER = 7,
  DA_DICT_ENTRIES = 11,
  DA_ARRAY_VALUES = 12,
  DA_STRING_IID = 17,
  /* InternedData and its entries (iid = 1, name/str = 2) */
  ID_EVENT_CATEGORIES = 1,
  ID_EVENT_NAMES = 2,
  ID_ANNOTATION_NAMES = 3,
  ID_ANNOTATION_STRINGS = 29,
  INTERNED_IID = 1,
  INTERNED_NAME = 2,
};

#define DESCRIPTOR_SEQ 1u         /* track descriptors: no clock, no interning */
#define INTERN_MAX (1u << 20)     /* interned strings in all sequences before they all start over */
#define INTERN_STRING_MAX 64      /* longer string values are written inline */
#define COUNTER_UUID_BASE (1ull << 62)
#define BUNDLE_BYTES (256u << 10)  /* packets deflated together (Perfetto wants bundles under 512 KiB) */

typedef struct {
  uint64_t uuid, parent_uuid;
  uint32_t seq;
  uint32_t gen;        /* the interning generation this sequence's state belongs to (0: none yet) */
  uint64_t last_ts;    /* the sequence clock's value after its last packet */
  uint64_t next_iid;
  int is_process;
  uint32_t pid;
  char* name;          /* process tracks: for the descriptor written again with labels */
} track;

typedef struct {
  FILE* out;
  track* tracks;
  size_t ntracks, cap;
  ns_idmap by_key;  /* (pid, tid) or process key -> track index + 1 */
  ns_idmap interned; /* hash of (sequence, table, string) -> iid */
  uint32_t gen;      /* current interning generation (starts at 1) */
  uint64_t next_counter_uuid;
  ns_pb pkt, te, in; /* the packet, its TrackEvent and its InternedData being built */
  int compress;      /* packets go out deflated, in bundles */
  uint8_t* bundle;   /* packets waiting to be deflated (BUNDLE_BYTES) */
  size_t bundle_len;
  uint8_t* zbuf;     /* the compressed bundle, after room for its headers */
  size_t zcap;
  ns_json scratch;   /* arguments, as JSON, before they become annotations */
  char text[NSJ_BUF]; /* a key or string of it, unescaped */
  int failed;
} pf_drawer;

/* ---- output ---- */

/* Writes a packet (Trace.packet: tag, length, bytes) to the file. */
static void write_packet(pf_drawer* d, const uint8_t* p, size_t len) {
  uint8_t head[12];
  size_t n = ns_pb_put_varint(head, (uint64_t)TRACE_PACKET << 3 | 2);
  n += ns_pb_put_varint(head + n, len);
  if (fwrite(head, 1, n, d->out) != n || fwrite(p, 1, len, d->out) != len) d->failed = 1;
}

/* The bundle so far as one compressed_packets packet. */
static void flush_bundle(pf_drawer* d) {
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

static void emit(pf_drawer* d, const ns_pb* pkt) {
  if (pkt->buf.failed) {
    d->failed = 1;
    return;
  }
  if (!d->compress) {
    write_packet(d, pkt->buf.data, pkt->buf.len);
    return;
  }
  if (d->bundle_len + pkt->buf.len + 12 > BUNDLE_BYTES) flush_bundle(d);
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

static track* new_track(pf_drawer* d) {
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

static void write_process(pf_drawer* d, const track* t, const char* label) {
  descriptor_begin(d, t);
  ns_pb* p = &d->pkt;
  ns_pb_uint(p, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
  ns_pb_begin(p, TD_PROCESS);
  ns_pb_uint(p, PD_PID, t->pid);
  ns_pb_str(p, PD_PROCESS_NAME, t->name ? t->name : "");
  if (label) ns_pb_str(p, PD_PROCESS_LABELS, label);
  ns_pb_end(p);
  ns_pb_end(p);
  emit(d, p);
}

static track* process_track(pf_drawer* d, uint32_t pid, const char* name) {
  int ins;
  uint64_t* v = ns_idmap_put(&d->by_key, process_key(pid), &ins);
  if (!v) return NULL;
  if (!ins && !name) return &d->tracks[*v - 1];
  track* t;
  if (ins) {
    t = new_track(d);
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
  write_process(d, t, NULL);
  return t;
}

static void write_named_track(pf_drawer* d, const track* t, const char* name, int has_sort, int64_t sort) {
  descriptor_begin(d, t);
  ns_pb* p = &d->pkt;
  ns_pb_str(p, TD_NAME, name);
  if (has_sort) ns_pb_int(p, TD_SIBLING_ORDER_RANK, (int32_t)sort);
  ns_pb_end(p);
  emit(d, p);
}

/* The track of (pid, tid); a new one is declared with `name` (NULL: a
 * default name) and, when has_sort, its place among its siblings. */
static track* thread_track(pf_drawer* d, uint32_t pid, uint32_t tid, const char* name, int has_sort, int64_t sort) {
  uint64_t* v = ns_idmap_get(&d->by_key, thread_key(pid, tid));
  if (v) {
    track* t = &d->tracks[*v - 1];
    if (name) write_named_track(d, t, name, has_sort, sort); /* named after its first use */
    return t;
  }
  track* pt = process_track(d, pid, NULL);
  if (!pt) return NULL;
  uint64_t parent = pt->uuid;
  int ins;
  v = ns_idmap_put(&d->by_key, thread_key(pid, tid), &ins);
  track* t = v ? new_track(d) : NULL;
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
  write_named_track(d, t, name, has_sort, sort);
  return t;
}

/* ---- interning ---- */

static uint64_t intern_key(uint32_t seq, unsigned table, const char* s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)seq << 8 | table);
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ull;
  }
  h ^= n;
  h *= 0x9e3779b97f4a7c15ull;
  return h | 1ull << 63;
}

/* The iid of s in the table of t's sequence; a new entry goes into the
 * packet's InternedData. 0 when out of memory (the caller writes s inline). */
static uint64_t intern(pf_drawer* d, track* t, unsigned table, const char* s, size_t n) {
  int ins;
  uint64_t* v = ns_idmap_put(&d->interned, intern_key(t->seq, table, s, n), &ins);
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
static void event_begin(pf_drawer* d, track* t, uint64_t ts) {
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
    emit(d, p);
    t->gen = d->gen;
    t->last_ts = ts;
    t->next_iid = 0;
  }
  ns_pb_reset(&d->te);
  ns_pb_reset(&d->in);
}

/* Ends the event packet started by event_begin: timestamp, sequence, the
 * new interned entries, the TrackEvent. */
static void event_end(pf_drawer* d, track* t, uint64_t ts) {
  ns_pb* p = &d->pkt;
  ns_pb_reset(p);
  ns_pb_uint(p, PKT_TIMESTAMP, ts - t->last_ts); /* a delta on the sequence clock (wraps when negative) */
  t->last_ts = ts;
  ns_pb_uint(p, PKT_SEQUENCE_ID, t->seq);
  if (d->in.buf.len) ns_pb_bytes(p, PKT_INTERNED_DATA, d->in.buf.data, d->in.buf.len);
  ns_pb_bytes(p, PKT_TRACK_EVENT, d->te.buf.data, d->te.buf.len);
  if (d->in.buf.failed || d->te.buf.failed) d->failed = 1;
  emit(d, p);
  if (d->interned.len > INTERN_MAX) { /* every sequence starts over at its next packet */
    ns_idmap_free(&d->interned);
    ns_idmap_init(&d->interned);
    d->gen++;
  }
}

/* ---- arguments: the JSON object the layout writes, as debug annotations ---- */

typedef struct {
  const char* p;
  const char* end;
} cursor;

static void skip_ws(cursor* c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* A JSON string at c (after its opening quote), unescaped into out (at
 * least as long as the input) by the JSON reader's nsjr_unescape; returns
 * its length. The writer's strings are valid JSON; anything else (never
 * from ncclscope) is taken as it stands, without unescaping. */
static size_t read_string(cursor* c, char* out) {
  const char* s = c->p;
  const char* q = s;
  while (q < c->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q > c->end) q = c->end;
  size_t len = (size_t)(q - s);
  const char *bad, *why;
  ptrdiff_t n = nsjr_unescape(s, len, out, &bad, &why);
  if (n < 0) {
    memcpy(out, s, len);
    n = (ptrdiff_t)len;
  }
  c->p = q < c->end ? q + 1 : q; /* past the closing quote */
  return (size_t)n;
}

/* "0x" and 1..20 hex digits: the low 64 bits (an eventAddr keeps its id). */
static int hex_value(const char* s, size_t n, uint64_t* v) {
  if (n < 3 || n > 22 || s[0] != '0' || s[1] != 'x') return 0;
  uint64_t x = 0;
  for (size_t i = 2; i < n; i++) {
    int h = hexval(s[i]);
    if (h < 0) return 0;
    x = x << 4 | (uint64_t)h;
  }
  *v = x;
  return 1;
}

static void read_value(pf_drawer* d, track* t, cursor* c, ns_pb* b, char* tmp);

/* Inside an object or an array whose closing character is `close`: skips
 * white space and commas. 1 at the next member or element, 0 at the close
 * (not consumed) or the end of the text. */
static int next_item(cursor* c, char close) {
  for (;;) {
    skip_ws(c);
    if (c->p >= c->end || *c->p == close) return 0;
    if (*c->p != ',') return 1;
    c->p++;
  }
}

/* The members of an object at c (after '{') as annotations in field `field` of b. */
static void read_members(pf_drawer* d, track* t, cursor* c, ns_pb* b, uint32_t field, char* tmp,
                         const char* skip) {
  while (next_item(c, '}')) {
    if (*c->p != '"') { /* not what the writer makes: stop */
      c->p = c->end;
      return;
    }
    c->p++;
    size_t kn = read_string(c, tmp);
    skip_ws(c);
    if (c->p < c->end && *c->p == ':') c->p++;
    skip_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) { /* nothing to show */
      c->p += 4;
      continue;
    }
    if (skip && strlen(skip) == kn && memcmp(skip, tmp, kn) == 0) { /* the drawing shows it */
      size_t keep = b->buf.len;
      read_value(d, t, c, b, tmp);
      b->buf.len = keep;
      continue;
    }
    ns_pb_begin(b, field);
    uint64_t iid = intern(d, t, ID_ANNOTATION_NAMES, tmp, kn);
    if (iid) ns_pb_uint(b, DA_NAME_IID, iid);
    else ns_pb_bytes(b, 10 /* name */, tmp, kn);
    read_value(d, t, c, b, tmp);
    ns_pb_end(b);
  }
  if (c->p < c->end) c->p++; /* '}' */
}

static void read_value(pf_drawer* d, track* t, cursor* c, ns_pb* b, char* tmp) {
  if (c->p >= c->end) return;
  char ch = *c->p;
  if (ch == '"') {
    c->p++;
    size_t n = read_string(c, tmp);
    uint64_t v;
    uint64_t iid = 0;
    if (hex_value(tmp, n, &v)) ns_pb_uint(b, DA_POINTER, v);
    else if (n <= INTERN_STRING_MAX && (iid = intern(d, t, ID_ANNOTATION_STRINGS, tmp, n)) != 0)
      ns_pb_uint(b, DA_STRING_IID, iid);
    else ns_pb_bytes(b, DA_STRING, tmp, n);
  } else if (ch == '{') {
    c->p++;
    read_members(d, t, c, b, DA_DICT_ENTRIES, tmp, NULL);
  } else if (ch == '[') {
    c->p++;
    while (next_item(c, ']')) {
      ns_pb_begin(b, DA_ARRAY_VALUES);
      read_value(d, t, c, b, tmp);
      ns_pb_end(b);
    }
    if (c->p < c->end) c->p++;
  } else if (ch == 't' || ch == 'f') {
    ns_pb_uint(b, DA_BOOL, ch == 't');
    c->p += ch == 't' ? 4 : 5;
  } else {
    const char* s = c->p;
    int real = 0;
    while (c->p < c->end && strchr("+-0123456789.eE", *c->p)) {
      if (*c->p == '.' || *c->p == 'e' || *c->p == 'E') real = 1;
      c->p++;
    }
    size_t n = (size_t)(c->p - s);
    char num[64];
    if (n == 0 || n >= sizeof num) { /* not a number the writer makes */
      c->p = c->end;
      return;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    if (real) ns_pb_double(b, DA_DOUBLE, strtod(num, NULL));
    else if (num[0] == '-') ns_pb_int(b, DA_INT, strtoll(num, NULL, 10));
    else ns_pb_uint(b, DA_UINT, strtoull(num, NULL, 10));
  }
}

/* The arguments as debug annotations of the TrackEvent being built. */
static void annotations(pf_drawer* d, track* t, const ns_draw_args* a) {
  if (!a->fn) return;
  ns_json* j = &d->scratch;
  nsj_init(j, NULL);
  nsj_obj_begin(j);
  a->fn(a->ctx, j);
  nsj_obj_end(j);
  if (j->failed) return; /* larger than the scratch buffer: left out */
  cursor c = {j->buf + 1, j->buf + j->len};
  read_members(d, t, &c, &d->te, TE_DEBUG_ANNOTATIONS, d->text, a->implied);
}

/* ---- drawing ---- */

static void te_head(pf_drawer* d, track* t, unsigned type, const char* name, const char* cat) {
  ns_pb_uint(&d->te, TE_TYPE, type);
  if (cat) {
    uint64_t iid = intern(d, t, ID_EVENT_CATEGORIES, cat, strlen(cat));
    if (iid) ns_pb_uint(&d->te, TE_CATEGORY_IIDS, iid);
    else ns_pb_str(&d->te, 22 /* categories */, cat);
  }
  if (name) {
    uint64_t iid = intern(d, t, ID_EVENT_NAMES, name, strlen(name));
    if (iid) ns_pb_uint(&d->te, TE_NAME_IID, iid);
    else ns_pb_str(&d->te, 23 /* name */, name);
  }
}

static void slice_end(pf_drawer* d, track* t, uint64_t ts) {
  event_begin(d, t, ts);
  ns_pb_uint(&d->te, TE_TYPE, TYPE_SLICE_END);
  event_end(d, t, ts);
}

static void pf_process(void* self, uint32_t pid, const char* name, int64_t sort) {
  (void)sort; /* processes keep their pid order */
  process_track(self, pid, name);
}

static void pf_process_label(void* self, uint32_t pid, const char* label) {
  pf_drawer* d = self;
  track* t = process_track(d, pid, NULL);
  if (t) write_process(d, t, label);
}

static void pf_thread(void* self, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  thread_track(self, pid, tid, name, 1, sort);
}

static void pf_slice(void* self, const ns_draw_slice* s) {
  pf_drawer* d = self;
  track* t;
  if (s->async_id) { /* a track of its own, under the process */
    track* pt = process_track(d, s->pid, NULL);
    t = pt ? new_track(d) : NULL;
    if (!t) return;
    t->parent_uuid = pt->uuid;
    t->pid = s->pid;
    write_named_track(d, t, s->name, 0, 0);
  } else {
    t = thread_track(d, s->pid, s->tid, NULL, 0, 0);
    if (!t) return;
  }
  event_begin(d, t, s->ts);
  te_head(d, t, TYPE_SLICE_BEGIN, s->name, s->cat);
  annotations(d, t, &s->args);
  if (s->flow_in) ns_pb_fixed64(&d->te, TE_FLOW_IDS, s->flow_in);
  for (uint32_t i = 0; i < s->nflows_out; i++) ns_pb_fixed64(&d->te, TE_FLOW_IDS, s->flows_out[i]);
  event_end(d, t, s->ts);
  for (uint32_t i = 0; i < s->nsubs; i++) {
    const ns_draw_sub* sub = &s->subs[i];
    event_begin(d, t, sub->ts);
    te_head(d, t, TYPE_SLICE_BEGIN, sub->name, NULL);
    annotations(d, t, &sub->args);
    event_end(d, t, sub->ts);
    slice_end(d, t, sub->ts + sub->dur);
  }
  slice_end(d, t, s->ts + s->dur);
}

static void pf_instant(void* self, const ns_draw_instant* in) {
  pf_drawer* d = self;
  track* t = in->process_scope ? process_track(d, in->pid, NULL) : thread_track(d, in->pid, in->tid, NULL, 0, 0);
  if (!t) return;
  event_begin(d, t, in->ts);
  te_head(d, t, TYPE_INSTANT, in->name, in->cat);
  annotations(d, t, &in->args);
  event_end(d, t, in->ts);
}

static void pf_counters(void* self, uint32_t pid, const char* name, uint64_t ts, const char* const* keys,
                        const uint64_t* values, unsigned n) {
  pf_drawer* d = self;
  track* pt = process_track(d, pid, NULL);
  if (!pt) return;
  for (unsigned i = 0; i < n; i++) {
    uint64_t uuid = COUNTER_UUID_BASE + ++d->next_counter_uuid;
    ns_pb* p = &d->pkt;
    ns_pb_reset(p);
    ns_pb_uint(p, PKT_SEQUENCE_ID, DESCRIPTOR_SEQ);
    ns_pb_begin(p, PKT_TRACK_DESCRIPTOR);
    ns_pb_uint(p, TD_UUID, uuid);
    ns_pb_uint(p, TD_PARENT_UUID, pt->uuid);
    char full[256];
    snprintf(full, sizeof full, "%s %s", name, keys[i]);
    ns_pb_str(p, TD_NAME, full);
    ns_pb_begin(p, TD_COUNTER);
    ns_pb_end(p);
    ns_pb_end(p);
    emit(d, p);
    event_begin(d, pt, ts);
    ns_pb_uint(&d->te, TE_TRACK_UUID, uuid);
    ns_pb_uint(&d->te, TE_TYPE, TYPE_COUNTER);
    ns_pb_int(&d->te, TE_COUNTER_VALUE, (int64_t)values[i]);
    event_end(d, pt, ts);
  }
}

/* A flow from a parent already written: an instant at its start carries the id. */
static void pf_flow(void* self, const ns_draw_flow* f) {
  pf_drawer* d = self;
  track* t = thread_track(d, f->from_pid, f->from_tid, NULL, 0, 0);
  if (!t) return;
  event_begin(d, t, f->from_ts);
  te_head(d, t, TYPE_INSTANT, "parent", "hierarchy");
  ns_pb_fixed64(&d->te, TE_FLOW_IDS, f->id);
  event_end(d, t, f->from_ts);
}

static int pf_finish(void* self) {
  pf_drawer* d = self;
  flush_bundle(d);
  int rc = d->failed ? -1 : 0;
  free(d->bundle);
  free(d->zbuf);
  for (size_t i = 0; i < d->ntracks; i++) free(d->tracks[i].name);
  free(d->tracks);
  ns_idmap_free(&d->by_key);
  ns_idmap_free(&d->interned);
  ns_pb_free(&d->pkt);
  ns_pb_free(&d->te);
  ns_pb_free(&d->in);
  free(d);
  return rc;
}

int ns_draw_perfetto_new(FILE* out, int compress, ns_drawer* dr) {
  pf_drawer* d = calloc(1, sizeof *d);
  if (!d) return -1;
  d->compress = compress;
  if (compress && !(d->bundle = malloc(BUNDLE_BYTES))) {
    free(d);
    return -1;
  }
  d->out = out;
  d->gen = 1;
  ns_idmap_init(&d->by_key);
  ns_idmap_init(&d->interned);
  /* d->pkt, te, in: zeroed by calloc, an empty ns_pb */
  *dr = (ns_drawer){.self = d,
                    .flows_on_slices = 1,
                    .strict_lanes = 1,
                    .process = pf_process,
                    .process_label = pf_process_label,
                    .thread = pf_thread,
                    .slice = pf_slice,
                    .instant = pf_instant,
                    .counters = pf_counters,
                    .flow = pf_flow,
                    .finish = pf_finish};
  return 0;
}
