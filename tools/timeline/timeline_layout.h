/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the timeline layout's state (export_timeline.c) and its
 * tracks (timeline_tracks.c): track names, per-channel lanes, and the
 * placement that keeps every slice of a thread track properly nested.
 * The invariants are described in export_timeline.c. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_TIMELINE_LAYOUT_H
#define NCCLSCOPE_TOOLS_TIMELINE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/export_walk.h"
#include "timeline/timeline_draw.h"
#include "util/idmap.h"

#define RECENT_SLOTS (1u << 16)
#define SYNTH_TID_BASE 1000000000u
#define NEST_KEEP 1024       /* placed slices remembered exactly per track; older ones go into the hull */
#define NEST_OVERFLOW_MAX 32 /* "overlapping #k" tracks per thread; beyond: async slices */

/* Lane kinds: per-channel tracks, and the Coll/P2p/CeColl track of a launching
 * thread (NCCL starts all Coll/P2p of a group, then stops them all: they
 * overlap without nesting, so they cannot share their thread's track). */
enum { LANE_PROXY_OP, LANE_PROXY_STEP, LANE_KERNEL_CH, LANE_NET, LANE_LAUNCH, LANE_KINDS };

typedef struct {
  uint8_t busy;      /* an event holds the lane (taken at START, freed when written) */
  uint8_t used;      /* a slice was drawn on it */
  uint32_t tid;      /* the lane's track */
  uint64_t last_end; /* end of the last slice drawn on it */
} lane_slot;

typedef struct {
  uint64_t key;
  uint32_t pid;
  int kind, channel;
  char label[96];    /* track name of lane 0 */
  int64_t sort_base; /* thread_sort_index of lane 0 */
  lane_slot* lanes;
  uint32_t nlanes, cap;
} lane_group;

/* What the exporter keeps per event (the sink's area of ns_event). */
typedef struct {
  uint64_t pid, tid;     /* where its slice goes (tid: a lane's track or its thread) */
  uint64_t lane_group;   /* lane events: group index + 1, else 0 */
  uint64_t slot;         /* lane events: lane index; thread-track events: track index + 1 */
  ns_event *prev, *next; /* thread-track events not yet written, per track, in START order */
  uint64_t* flows_out;   /* flows_on_slices: flows to children written before this event */
  uint32_t nflows_out, cap_flows;
  uint8_t lane_freed;
} chrome_ev;

static inline chrome_ev* cev(const ns_event* e) { return ns_event_user(e); }

/* ---- proper nesting on thread tracks ---- */

typedef struct {
  uint64_t s, e;
} span;

/* One track's placed slices that a later slice could still overlap. */
typedef struct {
  uint32_t tid;
  span* v;
  uint32_t n, cap;
  int has_hull; /* every slice forgotten lies inside hull */
  span hull;
} nest_track;

/* A thread's track, its "overlapping #k" tracks, and its events not yet
 * written (in START order) that will be placed on them. */
typedef struct {
  uint32_t pid, tid;
  uint64_t last_start;             /* latest START read on this thread */
  ns_event *open_head, *open_tail; /* linked through chrome_ev prev/next */
  nest_track main;
  nest_track* over;
  uint32_t nover;
} thread_track;

/* Recently written events: direct-mapped by (file, id). */
typedef struct {
  uint64_t id;
  int file;
  uint32_t pid, tid;
  int32_t channel;
  uint64_t start_ts;
} recent_slot;

typedef struct {
  ns_walk* walk; /* first member: set by the caller (export.h) */
  ns_drawer d;
  uint32_t next_pid;
  uint32_t next_tid;
  uint64_t next_flow;
  uint32_t nocomm_pid; /* this file's track for events without a communicator */
  uint64_t file_max_ts;
  ns_idmap named_threads; /* pid << 32 | tid */
  ns_idmap group_index;   /* lane key -> index in groups */
  lane_group* groups;
  size_t ngroups;
  ns_idmap tt_index; /* pid << 32 | tid -> index + 1 in tts (this file) */
  thread_track* tts;
  size_t ntts;
  uint64_t next_async;
  uint64_t moved, async; /* events moved off their thread track; written as async slices */
  recent_slot* recent;
} chrome_state;

/* Slot of the recent-events cache for an id. */
static inline size_t recent_index(uint64_t id) {
  id ^= id >> 31;
  id *= 0x9e3779b97f4a7c15ull;
  return (size_t)(id ^ (id >> 29)) & (RECENT_SLOTS - 1);
}

void ns_tl_name_thread(chrome_state* s, uint32_t pid, uint32_t tid, const char* name, int64_t sort);
void ns_tl_name_real_thread(chrome_state* s, const ns_wfile* f, uint32_t pid, uint32_t tid);
const char* ns_tl_host_of(const ns_wfile* f);
uint32_t ns_tl_file_pid(const ns_wfile* f);
uint32_t ns_tl_nocomm_pid(chrome_state* s, const ns_wfile* f);
uint32_t ns_tl_comm_pid(chrome_state* s, const ns_wfile* f, uint32_t comm);
int ns_tl_lane_kind(uint8_t type);
int ns_tl_has_state_slices(uint8_t type);
lane_group* ns_tl_lane_group_of(chrome_state* s, const ns_wfile* f, uint32_t pid, int kind, int channel,
                                uint32_t caller_tid);
uint32_t ns_tl_lane_take(chrome_state* s, lane_group* g, uint64_t start, uint32_t* lane_out);
void ns_tl_lane_release(lane_group* g, uint32_t i, uint64_t end);
thread_track* ns_tl_thread_track_of(chrome_state* s, uint32_t pid, uint32_t tid);
void ns_tl_thread_tracks_free(chrome_state* s);
void ns_tl_open_unlink(thread_track* t, ns_event* e);
uint32_t ns_tl_thread_place(chrome_state* s, const ns_wfile* f, thread_track* t, span x);

/* The layout's sink state drawing through the drawer drawer_new makes (an
 * ns_format's make; the state's first member is the ns_walk*), and its finish. */
void* ns_timeline_make(FILE* out, ns_sink* sink, int (*drawer_new)(FILE* out, ns_drawer* d));
int ns_timeline_finish(void* state);

#endif
