/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the metrics model, what every window exports.
 *
 * One ns_metrics per process, owned by the writer thread. Each closed
 * analysis window (include/ncclscope/analysis.h, ns_window) is folded in
 * with the process counters the writer keeps; the result is a list of
 * metric families, each with points, that every output reads the same way:
 * Prometheus text (prom.c), OTLP JSON (otlp_json.c), OTLP protobuf
 * (otlp_proto.c) and the windows.jsonl line (jsonl.c). So a collector, a
 * textfile and the dump directory all say the same thing.
 *
 * Temporality is cumulative: counters and histograms add every window to
 * what came before and stay exported once they exist; gauges (bandwidth,
 * link fits, clock error, the largest lateness) are the last window's and
 * exported only when that window measured them.
 *
 * The live families (ncclscope_oldest_inflight_seconds, ncclscope_hang_
 * episodes_total, ncclscope_stuck_op_info, ncclscope_last_posted_seq,
 * ncclscope_last_completed_seq, ncclscope_last_update_timestamp_seconds) are
 * not the window's: ns_metrics_live and ns_metrics_stamp set them from the
 * flight recorder whenever the writer exports, window or not, so they move
 * while the application makes no progress at all.
 *
 * Resources: the process, and one per communicator rank (comm hash, rank,
 * nranks, GPU UUID, the communicator's name). OTLP sends them as resources;
 * Prometheus as the labels comm and rank (the process: pid). Every output
 * adds the identity labels of ns_mident (job_id, host, comm_name).
 *
 * Cardinality is a budget (docs/metrics.md, "Series budget"): a series is
 * one Prometheus sample line (a histogram is NS_HIST_BOUNDS + 3 of them).
 * No label holds an address, and a sequence number only on the one
 * stuck-operation series of a communicator rank (the posted and completed
 * sequence numbers are values, one series each per communicator rank).
 * What the dashboard's variables and its hang panels and the alerts need is
 * never refused: the budget gauges, the update time, the live series (each
 * communicator rank holds a place for its stuck-operation series from the
 * start), process counters, drops, ncclscope_ops_total. The rest is admitted
 * while the total stays within max_series, and given up in a fixed order,
 * detail first (metrics.c, g_refuse_order): the userTag series, algorithm bandwidth, per-link
 * series, bus bandwidth by size, GPU-timed counts, bytes, incomplete
 * operations, the count of fitted links, time histograms, the link
 * aggregates, lateness, clock error. A point that needs room takes it from
 * points of families that go before its own (the newest first): so a window
 * admits families in the reverse order, and a counter or histogram admitted
 * while there was room gives way to a later communicator's more important
 * series (it starts again from 0 if it comes back: a counter reset).
 * What does not fit is counted in ncclscope_series_refused, never exported.
 * Per-link series exist only for the top_links slowest send links with a
 * valid fit. The userTag series (ncclscope_tag_ops_total,
 * ncclscope_tag_seconds_total) are bounded the same way: a communicator
 * rank's first top_tags tags keep series of their own for the process's
 * life, the busiest first within the window that brought them (a counter's
 * labels must not move); every later tag counts in tag="other".
 */
#ifndef NCCLSCOPE_SINKS_METRICS_H
#define NCCLSCOPE_SINKS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/analysis.h"

enum { NS_MK_COUNTER = 0, NS_MK_GAUGE = 1, NS_MK_HISTOGRAM = 2 };

/* A family: its names in both conventions, unit, kind, help. */
typedef struct {
  const char* otel;  /* "ncclscope.op.duration" */
  const char* prom;  /* "ncclscope_op_duration_seconds" (counters end in _total) */
  const char* unit;  /* UCUM, as OTLP wants it: "s", "By", "By/s", "{op}" */
  int kind;          /* NS_MK_* */
  int is_int;        /* counter and gauge values are integers (OTLP asInt) */
  const char* help;
} ns_mdesc;

#define NS_M_LABELS 3
typedef struct {
  const char* key; /* a literal */
  char val[24];
} ns_mlabel;

typedef struct {
  uint32_t res; /* resource index (0: the process) */
  uint8_t nlabels;
  ns_mlabel labels[NS_M_LABELS];
  double value; /* counter (cumulative) or gauge */
  uint64_t count, buckets[NS_HIST_BOUNDS + 1]; /* histogram: per bucket, cumulative over windows */
  double sum;
} ns_mpoint;

typedef struct {
  const ns_mdesc* d;
  ns_mpoint* p;
  size_t n, cap;
} ns_mfamily;

/* A communicator rank's live state (ns_metrics_live). */
typedef struct {
  int known; /* the flight recorder reported it */
  double oldest_s;
  uint64_t episodes;
  int stuck;
  char func[24], seq[24];
  uint64_t posted, completed; /* communicator-wide sequence numbers (ns_mlive) */
} ns_mres_live;

/* userTags with series of their own, a communicator rank at most (NCCLSCOPE_TOP_TAGS). */
#define NS_M_TAGS 64

/* A resource: the process (index 0) or one communicator rank. */
typedef struct {
  uint32_t comm;    /* comm serial, 0 for the process */
  uint64_t comm_id; /* the communicator hash */
  int32_t rank;
  uint32_t nranks;
  char uuid[48];    /* the GPU UUID, "" unknown */
  char name[64];    /* the communicator's name (NCCL's commName), "" none */
  char comm_hex[24], rank_str[16];
  ns_mres_live live;
  uint64_t tags[NS_M_TAGS]; /* its userTags with series of their own, in the order they were given one */
  uint32_t ntags;
} ns_mres;

typedef struct {
  uint32_t max_series; /* NCCLSCOPE_MAX_SERIES */
  uint32_t top_links;  /* NCCLSCOPE_TOP_LINKS */
  uint32_t top_tags;   /* NCCLSCOPE_TOP_TAGS: at most NS_M_TAGS */
  uint32_t pid;
  uint64_t start_unix_ns; /* the start of every cumulative sum (the session's start) */
  int live;               /* the flight recorder runs: the live series exist */
} ns_metrics_config;

/* What one window adds, besides the analysis' ns_window (which carries the
 * clock fits). Counters are the process's totals so far (cumulative, as
 * exported). */
typedef struct {
  const ns_window* w;
  uint64_t start_unix_ns, end_unix_ns; /* the window, wall clock */
  uint64_t dropped_ring; /* events lost: full rings (and threads without one) */
  const uint64_t* closed;              /* events closed by the plugin, by NS_CLOSE_* reason (NS_CLOSE_REASONS) */
  uint64_t steps_unanalysed;           /* ProxySteps the analysis left out (the writer shed them) */
  uint64_t otlp_ok, otlp_failed, otlp_dropped; /* the OTLP sender's requests and payloads it gave up */
  const char* detail_level;            /* NCCLSCOPE_DETAIL ("ops", "sampled", "full"); NULL: not reported */
  double detail_full_ratio;            /* share of the window's time with full detail */
  uint64_t detail_escalations;         /* escalations so far */
  /* The live communicators (serial dropped_comm[i]): their starts lost to a
   * full ring, comm_dropped[i]; one not among them lost none. NULL: not reported. */
  const uint32_t* dropped_comm;
  const uint64_t* comm_dropped;
  size_t ncomm_dropped;
} ns_mwindow;

typedef struct ns_metrics ns_metrics;

ns_metrics* ns_metrics_new(const ns_metrics_config* cfg); /* NULL when out of memory */
void ns_metrics_free(ns_metrics* m);
/* A communicator rank (COMM_INIT), before its windows; name: NCCL's commName or NULL. */
void ns_metrics_comm(ns_metrics* m, uint32_t comm, uint64_t comm_id, int32_t rank, uint32_t nranks, const char* uuid,
                     const char* name);
/* Folds one closed window in. */
void ns_metrics_window(ns_metrics* m, const ns_mwindow* in);

/* What the flight recorder says of one communicator rank now. */
typedef struct {
  uint32_t comm;     /* serial */
  double oldest_s;   /* age of its oldest Coll/P2p in flight, 0 none */
  uint64_t episodes; /* hang episodes so far */
  int stuck;         /* an operation older than the hang timeout has not completed */
  const char* func;  /* with stuck: its function */
  uint64_t seq;      /* and its seqNumber */
  /* Its collectives posted and completed so far, counted across functions
   * (flightrec.h, ns_fr_inflight): the communicator-wide sequence number of
   * the last one; a rank behind its communicator's others never posted the next. */
  uint64_t posted, completed;
} ns_mlive;
/* The live series, from n entries (communicator ranks not among them have
 * nothing in flight: their communicator ended). */
void ns_metrics_live(ns_metrics* m, const ns_mlive* v, size_t n);
/* The wall-clock time the outputs are written at: the last-update gauge and the OTLP points' time. */
void ns_metrics_stamp(ns_metrics* m, uint64_t unix_ns);

/* ---- for the outputs ---- */
size_t ns_metrics_nfamilies(const ns_metrics* m);
const ns_mfamily* ns_metrics_family(const ns_metrics* m, size_t i);
size_t ns_metrics_nres(const ns_metrics* m);
const ns_mres* ns_metrics_res(const ns_metrics* m, size_t i);
/* The window last folded in: index, wall-clock times, the process start (start of cumulative sums). */
uint64_t ns_metrics_windows(const ns_metrics* m);
uint64_t ns_metrics_window_index(const ns_metrics* m);
uint64_t ns_metrics_start_unix_ns(const ns_metrics* m);
uint64_t ns_metrics_end_unix_ns(const ns_metrics* m);
uint64_t ns_metrics_win_start_unix_ns(const ns_metrics* m);
/* The time of the values as exported (ns_metrics_stamp, else the last window's end). */
uint64_t ns_metrics_time_unix_ns(const ns_metrics* m);
/* Series exported after the last window (Prometheus sample lines), and refused for the budget. */
uint32_t ns_metrics_series(const ns_metrics* m);
uint32_t ns_metrics_refused(const ns_metrics* m);
/* Sample lines a point stands for: 1, or NS_HIST_BOUNDS + 3 for a histogram. */
unsigned ns_mpoint_series(const ns_mdesc* d);
/* The upper bound of histogram bucket i in seconds (i < NS_HIST_BOUNDS). */
double ns_metrics_bound_s(unsigned i);

#endif
