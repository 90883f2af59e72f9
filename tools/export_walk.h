/* ncclscope CLI: the event model every exporter is built on.
 *
 * The walker reads one trace file at a time (ns_reader) and turns records
 * into events: a START opens an ns_xevent, STATEs attach to it, the STOP
 * completes it and hands it to the output sink, which writes it and forgets
 * it. Memory is bounded by the events that are open (started, not stopped)
 * plus the Coll/P2p events held for their children (see "holding" below),
 * never by the length of the trace.
 *
 * Holding. A Coll/P2p stops when NCCL enqueues it; its ProxyOp and KernelCh
 * children run later. To report `execStop` (the last child's stop) the
 * walker keeps a stopped Coll/P2p until all children it knows of have
 * stopped and, when KernelCh events are recorded, until nChannels KernelCh
 * children have been seen; otherwise until one child has been seen. A held
 * event is released anyway once the trace has moved NS_HOLD_NS past its
 * stop, when more than NS_HOLD_MAX events are held (oldest first), or at the
 * end of the file. A child that starts after its parent was released still
 * names the parent's eventAddr; it just no longer extends execStop.
 *
 * Children read before their parent. Blocks are per thread, so a proxy
 * thread's block may precede the application thread's block that starts the
 * Coll. The walker then creates a placeholder for the parent that collects
 * the child counts until the parent's START arrives (placeholders age out
 * like held events).
 *
 * Extensions (the analysis module, issue 4) observe every reader item and
 * every finished event and may add fields to `details`; see ns_export_ext.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_EXPORT_WALK_H
#define NCCLSCOPE_TOOLS_EXPORT_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"
#include "ncclscope/trace_reader.h"

#define NS_XEV_MAX_STATES 8              /* states kept per event for sinks that draw them */
#define NS_HOLD_NS (10ull * 1000000000ull) /* trace time a stopped Coll/P2p waits for children */
#define NS_HOLD_MAX 100000u              /* most Coll/P2p (and placeholders) held at once */
#define NS_OPEN_MAX 2000000u             /* default cap on open events (about 1.2 GB) */

typedef struct {
  uint64_t ts;
  uint64_t arg;
  int32_t state;
  uint16_t flags;
  uint32_t tid;
} ns_xstate;

typedef struct ns_xevent {
  struct ns_xevent* hnext;                   /* event table chain */
  struct ns_xevent *hold_prev, *hold_next;   /* hold list (stop order) */
  struct ns_xevent *open_prev, *open_next;   /* open list (start order): started, not stopped */
  uint64_t id;
  ns_record start; /* valid once `started` */
  uint8_t started, stopped, held, open;
  uint64_t stop_ts;
  uint32_t stop_tid;
  uint64_t hold_since; /* trace ts when it went on the hold list */

  /* Bookkeeping derived by the walker. */
  uint32_t live_children; /* ProxyOp/KernelCh children started, not stopped */
  uint32_t children_seen; /* ProxyOp/KernelCh children started */
  uint32_t kch_seen;      /* KernelCh children started */
  uint8_t has_exec_stop, has_trans_size, has_ptimer_stop;
  uint64_t exec_stop;   /* max stop ts of ProxyOp/KernelCh children */
  uint64_t trans_size;  /* ProxyStep: last transSize of its states */
  uint64_t ptimer_stop; /* KernelCh: pTimer of the KernelChStop state */
  /* Coll/P2p: raw GPU interval of its KernelCh children (smallest start
   * pTimer, largest KernelChStop pTimer), for the metrics extension. */
  uint8_t has_kch_ptimer_min, has_kch_ptimer_max;
  uint64_t kch_ptimer_min, kch_ptimer_max;
  int32_t channel;      /* ProxyOp/KernelCh: own; ProxyStep/NetPlugin: from the parent; -1 unknown */

  uint32_t nstates; /* states seen; the first NS_XEV_MAX_STATES are kept */
  ns_xstate states[NS_XEV_MAX_STATES];

  uint64_t sink_u[4];                      /* private to the output sink */
  struct ns_xevent *sink_prev, *sink_next; /* private to the output sink (a list of its own) */
  uint8_t sink_lane_freed;                 /* private to the output sink */
} ns_xevent;

typedef struct {
  int present;
  ns_comm_info info;
  int has_clockfit;
  double gpu_offset_ns, gpu_drift_ppm, gpu_error_ns;
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
  void (*file_begin)(void* self, ns_wfile* f);
  void (*thread)(void* self, ns_wfile* f, const ns_thread_info* t);
  void (*comm_init)(void* self, ns_wfile* f, ns_wcomm* c);
  void (*comm_fini)(void* self, ns_wfile* f, ns_wcomm* c, const ns_props_info* fini);
  /* The COUNTERS block when the walk reaches it (see ns_wfile.counters). */
  void (*counters)(void* self, ns_wfile* f, const ns_props_info* counters);
  void (*event_start)(void* self, ns_wfile* f, ns_xevent* ev);
  /* ev is NULL when the state's event is unknown (its START was lost). */
  void (*state)(void* self, ns_wfile* f, ns_xevent* ev, const ns_record* st);
  /* At its STOP (before it may be held for its children): ev->stopped is set. */
  void (*event_stop)(void* self, ns_wfile* f, ns_xevent* ev);
  /* Complete (ev->stopped) or, at the end of the file, incomplete. */
  void (*event_done)(void* self, ns_wfile* f, ns_xevent* ev);
  void (*file_end)(void* self, ns_wfile* f);
} ns_sink;

/* An observer that may add fields (the metrics module plugs in here).
 * Every callback is optional. `details` callbacks are called inside the
 * `details` object of the JSONL record (and the `args` of the Chrome event)
 * and must write key/value pairs only, with keys the exporter does not use. */
typedef struct {
  void* self;
  void (*item)(void* self, ns_wfile* f, const ns_item* it); /* every reader item, before the walker */
  void (*event)(void* self, ns_wfile* f, const ns_xevent* ev); /* every finished event, before the sink */
  void (*event_details)(void* self, ns_wfile* f, const ns_xevent* ev, ns_json* j);
  void (*init_details)(void* self, ns_wfile* f, const ns_wcomm* c, ns_json* j);
  void (*fini_details)(void* self, ns_wfile* f, const ns_wcomm* c, ns_json* j);
} ns_export_ext;

#define NS_WALK_MAX_EXT 8

/* Per-file results, for messages and summaries. */
typedef struct {
  ns_reader_stats reader;
  uint64_t events_done;       /* complete events handed to the sink */
  uint64_t events_incomplete; /* started, never stopped */
  uint64_t events_by_type[NS_EV_COUNT];
  uint64_t states;
  uint64_t orphan_stops;      /* STOP of an unknown event */
  uint64_t orphan_states;     /* STATE of an unknown event */
  uint64_t duplicate_starts;  /* START of an id already started (ignored) */
  uint64_t forced_releases;   /* held events released by age/count before their children were done */
  uint64_t lost_parents;      /* placeholders whose START never came */
  uint64_t peak_live;         /* most events in memory at once */
  uint64_t evicted_open;      /* open events written unfinished because more than max_open were open */
} ns_walk_result;

typedef struct ns_walk ns_walk;

ns_walk* ns_walk_new(const ns_sink* sink);
void ns_walk_free(ns_walk* w);
int ns_walk_add_ext(ns_walk* w, const ns_export_ext* ext);
/* Most events open (started, not stopped) at once; 0 restores NS_OPEN_MAX. */
void ns_walk_set_max_open(ns_walk* w, size_t max_open);
size_t ns_walk_max_open(const ns_walk* w);
/* Walks one file. 0: read (possibly damaged, see res->reader); -1: not
 * readable at all (message in err). */
int ns_walk_file(ns_walk* w, int index, const char* path, ns_walk_result* res, char* err, size_t errlen);

/* Lookups for sinks and extensions, valid during a callback. */
ns_xevent* ns_walk_find(ns_walk* w, uint64_t id);
const ns_wcomm* ns_wfile_comm(const ns_wfile* f, uint32_t serial); /* NULL if unknown */
const char* ns_wfile_thread_name(const ns_wfile* f, uint32_t tid);  /* NULL if unknown */
const char* ns_wfile_string(const ns_wfile* f, uint32_t id);        /* NULL for id 0 */
/* In comm_fini: the process counters if this COMM_FINI is the last one
 * before the COUNTERS block (they go with that finalize record), else NULL. */
const ns_props_info* ns_wfile_counters_here(const ns_wfile* f);

/* Calls every extension's details callback. */
void ns_walk_event_details(ns_walk* w, ns_wfile* f, const ns_xevent* ev, ns_json* j);
void ns_walk_comm_details(ns_walk* w, ns_wfile* f, const ns_wcomm* c, int finalize, ns_json* j);

/* The export-unique event address: "0x" + 4+ hex digits of (file index + 1)
 * + 16 hex digits of the per-file id, NUL-terminated; returns its length.
 * n must be at least NS_EVENT_ADDR_MAX. */
#define NS_EVENT_ADDR_MAX 40
size_t ns_event_addr(char* out, size_t n, int file_index, uint64_t id);

#endif
