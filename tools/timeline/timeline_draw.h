/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: what the timeline layout (export_timeline.c) draws, and the
 * drawers that write it in one file format each: Trace Event JSON
 * (draw_chrome.c) and Perfetto's protobuf trace (draw_perfetto.c).
 *
 * The layout decides every track and every slice (processes per rank,
 * threads, per-channel lanes, overlap tracks, flows); a drawer only encodes
 * them. Tracks are named by (pid, tid) as in the Trace Event Format: pid a
 * process track (one per rank and communicator), tid a thread or a
 * synthetic lane of it. Arguments are written by a callback into an ns_json
 * object (key/value pairs, no braces), so every exporter shares one source
 * of field names. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_TIMELINE_DRAW_H
#define NCCLSCOPE_TOOLS_TIMELINE_DRAW_H

#include <stdint.h>
#include <stdio.h>

#include "util/json_writer.h"

typedef struct {
  void (*fn)(void* ctx, ns_json* j); /* NULL: no arguments */
  void* ctx;
  /* A key whose value the drawing already shows (a state's "id" given by
   * its name, a "parentObj" drawn as a flow): compact drawers leave it out. */
  const char* implied;
} ns_draw_args;

/* A state of a lane event, drawn as a sub-slice of it. */
typedef struct {
  const char* name;
  uint64_t ts, dur;
  ns_draw_args args;
} ns_draw_sub;

typedef struct {
  const char* name;
  const char* cat;
  uint64_t ts, dur;
  uint32_t pid, tid;
  ns_draw_args args;
  uint64_t async_id;    /* non-zero: an async slice of its own (it nests nowhere) */
  const ns_draw_sub* subs; /* sub-slices, in time order, inside [ts, ts + dur] */
  uint32_t nsubs;
  /* Drawers with flows_on_slices: the flow that ends here (0: none) and the
   * flows that start here (to children written before this slice). */
  uint64_t flow_in;
  const uint64_t* flows_out;
  uint32_t nflows_out;
} ns_draw_slice;

typedef struct {
  const char* name;
  const char* cat;
  uint64_t ts;
  uint32_t pid, tid;
  int process_scope; /* on the process track, else on the thread's */
  ns_draw_args args;
} ns_draw_instant;

/* A parent link: from the parent's start on its track to the child's start. */
typedef struct {
  uint64_t id;
  uint32_t from_pid, from_tid, to_pid, to_tid;
  uint64_t from_ts, to_ts;
} ns_draw_flow;

typedef struct {
  void* self;
  /* 1: a flow is carried by the slices it joins (ns_draw_slice flow fields);
   * `flow` is then called only for parents already written, to anchor the
   * start of the flow on the parent's track. 0: `flow` draws every flow. */
  int flows_on_slices;
  /* 1: a lane slice never starts where the previous one on that lane ends
   * (formats whose slices are begin/end pairs ordered by time only). */
  int strict_lanes;
  void (*process)(void* self, uint32_t pid, const char* name, int64_t sort);
  void (*process_label)(void* self, uint32_t pid, const char* label);
  void (*thread)(void* self, uint32_t pid, uint32_t tid, const char* name, int64_t sort);
  void (*slice)(void* self, const ns_draw_slice* s);
  void (*instant)(void* self, const ns_draw_instant* i);
  /* Counter tracks "NAME KEY" of a process, one sample each at ts. */
  void (*counters)(void* self, uint32_t pid, const char* name, uint64_t ts, const char* const* keys,
                   const uint64_t* values, unsigned n);
  void (*flow)(void* self, const ns_draw_flow* f);
  /* Optional (NULL: none): the layout starts drawing the file of that
   * index in the export (every later call is about that file until the next). */
  void (*file_begin)(void* self, int file_index);
  /* Writes the trailer and frees the drawer; 0 on success. */
  int (*finish)(void* self);
} ns_drawer;

/* Drawers writing to out; 0, or -1 when out of memory. Perfetto: compress
 * deflates the packets in bundles (TracePacket.compressed_packets), as
 * Perfetto's own tracing service does; 0 writes them as they are. */
int ns_draw_chrome_new(FILE* out, ns_drawer* d);
int ns_draw_perfetto_new(FILE* out, int compress, ns_drawer* d);

/* A Trace Event JSON drawer inside someone else's top level (a merge):
 * `members` writes the top-level members before "traceEvents" (in place of
 * the drawer's own), `events` the first elements of "traceEvents", and
 * `trailer` members after it; any may be NULL. */
typedef struct {
  void* ctx;
  void (*members)(void* ctx, ns_json* j);
  void (*events)(void* ctx, ns_json* j);
  void (*trailer)(void* ctx, ns_json* j);
} ns_chrome_frame;
int ns_draw_chrome_framed(FILE* out, const ns_chrome_frame* frame, ns_drawer* d);

#endif
