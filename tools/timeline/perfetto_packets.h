/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the Perfetto drawer's packets (perfetto_packets.c): field
 * numbers of the public Perfetto trace schema, the drawer's state, tracks,
 * interning, and TrackEvent packets on per-track sequences; and the
 * arguments written as debug annotations (perfetto_args.c). The encoding is
 * described in draw_perfetto.c. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_PERFETTO_PACKETS_H
#define NCCLSCOPE_TOOLS_PERFETTO_PACKETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/json_writer.h"
#include "timeline/timeline_draw.h"
#include "util/idmap.h"
#include "util/protowire.h"

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

#define DESCRIPTOR_SEQ 1u     /* track descriptors: no clock, no interning */
#define INTERN_MAX (1u << 20) /* interned strings in all sequences before they all start over */
#define INTERN_STRING_MAX 64  /* longer string values are written inline */
#define COUNTER_UUID_BASE (1ull << 62)
#define BUNDLE_BYTES (256u << 10) /* packets deflated together (Perfetto wants bundles under 512 KiB) */

typedef struct {
  uint64_t uuid, parent_uuid;
  uint32_t seq;
  uint32_t gen;     /* the interning generation this sequence's state belongs to (0: none yet) */
  uint64_t last_ts; /* the sequence clock's value after its last packet */
  uint64_t next_iid;
  int is_process;
  uint32_t pid;
  char* name; /* process tracks: for the descriptor written again with labels */
} track;

typedef struct {
  FILE* out;
  track* tracks;
  size_t ntracks, cap;
  ns_idmap by_key;   /* (pid, tid) or process key -> track index + 1 */
  ns_idmap interned; /* hash of (sequence, table, string) -> iid */
  uint32_t gen;      /* current interning generation (starts at 1) */
  uint64_t next_counter_uuid;
  ns_pb pkt, te, in; /* the packet, its TrackEvent and its InternedData being built */
  int compress;      /* packets go out deflated, in bundles */
  uint8_t* bundle;   /* packets waiting to be deflated (BUNDLE_BYTES) */
  size_t bundle_len;
  uint8_t* zbuf; /* the compressed bundle, after room for its headers */
  size_t zcap;
  ns_json scratch;    /* arguments, as JSON, before they become annotations */
  char text[NSJ_BUF]; /* a key or string of it, unescaped */
  uint64_t args_left_out; /* events whose arguments did not fit the scratch buffer */
  int failed;
} pf_drawer;

void ns_pf_flush_bundle(pf_drawer* d);
void ns_pf_emit(pf_drawer* d, const ns_pb* pkt);
track* ns_pf_new_track(pf_drawer* d);
void ns_pf_write_process(pf_drawer* d, const track* t, const char* label);
track* ns_pf_process_track(pf_drawer* d, uint32_t pid, const char* name);
void ns_pf_write_named_track(pf_drawer* d, const track* t, const char* name, int has_sort, int64_t sort);
track* ns_pf_thread_track(pf_drawer* d, uint32_t pid, uint32_t tid, const char* name, int has_sort, int64_t sort);
uint64_t ns_pf_intern(pf_drawer* d, track* t, unsigned table, const char* s, size_t n);
void ns_pf_event_begin(pf_drawer* d, track* t, uint64_t ts);
void ns_pf_event_end(pf_drawer* d, track* t, uint64_t ts);
void ns_pf_annotations(pf_drawer* d, track* t, const ns_draw_args* a);

#endif
