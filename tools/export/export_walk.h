/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the exporters' walk over one trace file at a time.
 *
 * The walker reads a file (ns_reader) and feeds its records to the event
 * assembler (include/ncclscope/events.h), which decides the hierarchy, when
 * an operation's children are done and which events never stopped, exactly
 * as it does for `ncclscope report` and the plugin's own analysis. The walker
 * adds what only a file knows (process, threads, communicators, the
 * COUNTERS block) and hands every event to the output sink when the
 * assembler releases it; the sink writes it and forgets it. Memory is
 * bounded as the assembler bounds it (running events, held operations),
 * never by the length of the trace.
 *
 * Extensions (the metrics module) observe every reader item and every
 * finished event and may add fields to `details`; see ns_export_ext.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_EXPORT_WALK_H
#define NCCLSCOPE_TOOLS_EXPORT_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "util/json_writer.h"
#include "ncclscope/events.h"
#include "traces/trace_dir.h"
#include "ncclscope/trace_reader.h"

#define NS_XEV_MAX_STATES 8     /* states kept per event for sinks that draw them */
#define NS_OPEN_MAX NS_ASM_OPEN_MAX /* default cap on open events */

typedef struct {
  int present;
  ns_comm_info info;
  int has_clockfit;
  double gpu_offset_ns, gpu_drift_ppm, gpu_error_ns;
  uint64_t gpu_ref_ns; /* the CLOCKFIT's reference point (TS): the offset is gpu - ts there */
  uint64_t gpu_samples;
  uint64_t sink_u[2]; /* private to the output sink */
} ns_wcomm;

typedef struct {
  uint32_t tid;
  char name[64];
} ns_wthread;

/* The file being walked. */
typedef struct {
  int index;        /* ordinal of the file in the export, 0-based (part of every eventAddr) */
  const char* path;
  ns_reader* reader;
  int has_process;
  ns_process_info process;
  ns_wcomm* comms; /* indexed by comm serial */
  size_t ncomms;
  ns_wthread* threads;
  size_t nthreads;
  /* The process counters (the COUNTERS block the plugin writes last), known
   * before the walk from a scan of the block headers (ns_reader_scan), and
   * the COMM_FINI they follow (1-based ordinal; 0: none precedes them). */
  const ns_props_info* counters; /* NULL: the file has none (killed process, older plugin) */
  uint64_t counters_after_fini;
  uint64_t finis_seen;           /* COMM_FINI items so far, the current one included */
  uint64_t max_ts;               /* largest record/lifecycle timestamp so far */
} ns_wfile;

/* Output format: called in trace order for one file at a time. */
typedef struct {
  void* self;
  size_t event_bytes; /* the sink's own area per event (ns_event_user), zeroed at its start */
  void (*file_begin)(void* self, ns_wfile* f);
  void (*thread)(void* self, ns_wfile* f, const ns_thread_info* t);
  void (*comm_init)(void* self, ns_wfile* f, ns_wcomm* c);
  void (*comm_fini)(void* self, ns_wfile* f, ns_wcomm* c, const ns_props_info* fini);
  /* The COUNTERS block when the walk reaches it (see ns_wfile.counters). */
  void (*counters)(void* self, ns_wfile* f, const ns_props_info* counters);
  void (*event_start)(void* self, ns_wfile* f, ns_event* ev);
  /* ev is NULL when the state's event is unknown (its START was lost). */
  void (*state)(void* self, ns_wfile* f, ns_event* ev, const ns_record* st);
  /* At its STOP (before it may be held for its children): ev->stopped is set. */
  void (*event_stop)(void* self, ns_wfile* f, ns_event* ev);
  /* Complete (ev->stopped) or, at the end of the file, incomplete. */
  void (*event_done)(void* self, ns_wfile* f, ns_event* ev);
  void (*file_end)(void* self, ns_wfile* f);
} ns_sink;

/* An observer that may add fields (the metrics module plugs in here).
 * Every callback is optional. `details` callbacks are called inside the
 * `details` object of the JSONL record (and the `args` of the Chrome event)
 * and must write key/value pairs only, with keys the exporter does not use. */
typedef struct {
  void* self;
  void (*item)(void* self, ns_wfile* f, const ns_item* it); /* every reader item, before the walker */
  void (*event)(void* self, ns_wfile* f, const ns_event* ev); /* every finished event, before the sink */
  void (*event_details)(void* self, ns_wfile* f, const ns_event* ev, ns_json* j);
  void (*init_details)(void* self, ns_wfile* f, const ns_wcomm* c, ns_json* j);
  void (*fini_details)(void* self, ns_wfile* f, const ns_wcomm* c, ns_json* j);
} ns_export_ext;

#define NS_WALK_MAX_EXT 8

/* Per-file results, for messages and summaries. */
typedef struct {
  ns_reader_stats reader;
  uint64_t events_done;       /* complete events handed to the sink */
  uint64_t events_incomplete; /* started, never stopped (at the end of the file) */
  uint64_t events_by_type[NS_EV_COUNT]; /* complete ones */
  ns_asm_stats assembled;     /* everything the assembler counted (evicted_open: written unfinished) */
  ns_file_health health;      /* the reader's stats (= reader) and damaged ranges */
} ns_walk_result;

typedef struct ns_walk ns_walk;

ns_walk* ns_walk_new(const ns_sink* sink);
void ns_walk_free(ns_walk* w);
int ns_walk_add_ext(ns_walk* w, const ns_export_ext* ext);
/* Most events open (started, not stopped) at once; 0 restores NS_OPEN_MAX. */
void ns_walk_set_max_open(ns_walk* w, size_t max_open);
size_t ns_walk_max_open(const ns_walk* w);
/* What the sink is given (every export format; extensions still see
 * everything, so derived fields and clock fits use the whole file). Zero
 * fields select everything. */
#define NS_FILTER_MAX 64
typedef struct {
  uint32_t types;                 /* event type bits (1 << ns_event_type); 0: all */
  size_t nranks, ncomms;
  int32_t ranks[NS_FILTER_MAX];   /* events and lifecycle records of these ranks (-1: PXN work for others) */
  uint64_t comms[NS_FILTER_MAX];  /* ... of these communicator ids (0: PXN work for others) */
  int has_from, has_to;
  uint64_t from_ns, to_ns;        /* events that start in [from, to] (the file's clock) */
} ns_export_filter;
void ns_walk_set_filter(ns_walk* w, const ns_export_filter* filter);
/* Events written so far (those the filter let through), over every file walked. */
uint64_t ns_walk_selected(const ns_walk* w);
/* Called about every 64 Ki reader items with the file index and the file
 * offset reached (progress lines). */
void ns_walk_set_progress(ns_walk* w, void (*fn)(void* user, int index, uint64_t offset), void* user);

/* Walks one file. 0: read (possibly damaged, see res->reader); -1: not
 * readable at all (message in err). */
int ns_walk_file(ns_walk* w, int index, const char* path, ns_walk_result* res, char* err, size_t errlen);

/* Lookups for sinks and extensions, valid during a callback. */
ns_event* ns_walk_find(ns_walk* w, uint64_t id); /* a started event still in memory, else NULL */
const ns_wcomm* ns_wfile_comm(const ns_wfile* f, uint32_t serial); /* NULL if unknown */
const char* ns_wfile_thread_name(const ns_wfile* f, uint32_t tid);  /* NULL if unknown */
const char* ns_wfile_string(const ns_wfile* f, uint32_t id);        /* NULL for id 0 */
/* In comm_fini: the process counters if this COMM_FINI is the last one
 * before the COUNTERS block (they go with that finalize record), else NULL. */
const ns_props_info* ns_wfile_counters_here(const ns_wfile* f);

/* Calls every extension's details callback. */
void ns_walk_event_details(ns_walk* w, ns_wfile* f, const ns_event* ev, ns_json* j);
void ns_walk_comm_details(ns_walk* w, ns_wfile* f, const ns_wcomm* c, int finalize, ns_json* j);

/* The export-unique event address: "0x" + 4+ hex digits of (file index + 1)
 * + 16 hex digits of the per-file id, NUL-terminated; returns its length.
 * n must be at least NS_EVENT_ADDR_MAX. */
#define NS_EVENT_ADDR_MAX 40
size_t ns_event_addr(char* out, size_t n, int file_index, uint64_t id);

#endif
