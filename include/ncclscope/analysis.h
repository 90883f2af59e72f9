/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: collective completion, GPU clock mapping, bandwidth,
 * per-link transfer regression, aggregation windows and the summary.
 *
 * One implementation for two callers: the plugin's background writer thread
 * (incremental, bounded memory, never on NCCL's threads) and the CLI on
 * recorded traces. An ns_analysis is single-threaded: one thread feeds it,
 * queries it and destroys it. Several instances are independent (the CLI
 * makes one per trace file, since comm serials and event ids are per file)
 * and the summary functions merge any number of them.
 *
 * Input: ns_comm_info for each communicator, then every ns_record of the
 * trace in arrival order (per thread in order; threads interleaved
 * arbitrarily), which go through the event assembler (events.h). Output: ns_op_result per collective / p2p (callback), a
 * ns_window per closed window (callback), clock fits and the summary.
 * Definitions of every number: docs/metrics.md.
 */
#ifndef NCCLSCOPE_ANALYSIS_H
#define NCCLSCOPE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ncclscope/events.h"
#include "ncclscope/nccl_names.h"
#include "ncclscope/record.h"

/* ---- bandwidth.c: nccl-tests conventions (pure functions) ---- */
double ns_busbw_factor(int func, uint32_t nranks);
double ns_algbw_gbs(uint64_t bytes, uint64_t dur_ns); /* GB/s = 1e9 bytes/s; 0 if dur 0 */

/* ---- configuration ---- */
typedef struct ns_op_result ns_op_result;
typedef struct ns_window ns_window;

typedef struct {
  double window_sec;        /* NCCLSCOPE_WINDOW_SEC, default 10; <= 0: no time limit */
  uint64_t window_ops;      /* close after this many operations started; 0 = no limit */
  uint64_t grace_ns;        /* an op is final this long after its last child stopped (20 ms) */
  uint64_t max_age_ns;      /* in-flight state older than this is finalized / evicted (10 s) */
  uint32_t timer_quantum_ns; /* pTimer granularity assumed by the clock bound (2048) */
  double max_drift_ppm;     /* prior on |GPU clock drift| (500 ppm) */
  double clock_slack_ns;    /* added to every published clock bound (0) */
  double clock_max_age_sec; /* clock samples older than this are forgotten (120 s) */
  /* The event assembler's bounds (include/ncclscope/events.h). Online: running
   * events are given up running_max_age_ns after their start (10 s); the
   * plugin's writer, whose tracker the analysis follows, closes them itself
   * after NCCLSCOPE_MAX_AGE_MS instead. Offline (report, ns_analysis_config_offline): kept until the end
   * of the trace or max_open, as `ncclscope export` keeps them, so both count
   * the same events as never stopped. */
  uint64_t running_max_age_ns;
  /* How long a stopped op waits for the KernelCh its communicator should
   * send before it is released without them (NS_EVF_FORCED). NCCL's proxy
   * reports them from its own progress, which a busy host delays (a CI run
   * saw a batch's KernelCh 100 ms late, which a wait of 5 grace periods,
   * 100 ms, misses: the batch's ops come out alone). Online 1 s; offline the
   * exporter's NS_ASM_WAIT_NS, so that report and export release ops alike. */
  uint64_t kernel_wait_ns;
  size_t max_open; /* most running events; 0: no limit */
  size_t max_held; /* most held ops and unstarted entries; 0: no limit */
  /* Keep what is known of every op for questions asked after the whole trace
   * was seen: its batch (ns_analysis_batch_of: up to 2^21 ops, about 48 MB)
   * and whether its pTimers were its own (ns_analysis_ptimers_own: id
   * ranges, up to 1 MiB per communicator). The offline config (export) turns
   * it on; the plugin never asks, and a long run would fill both for nothing
   * (its RSS grew by tens of MB over minutes). Off: both answer "unknown". */
  int keep_op_verdicts;
  /* Resolves the string ids of START records (func, dtype, algo, proto):
   * the writer's intern table, the reader's string table. NULL: none known.
   * The string must stay valid while the analysis exists. */
  const char* (*string)(void* user, uint32_t id);
  void* string_user;
  /* Callbacks, run on the thread calling ns_analysis_record/flush. */
  void (*on_op)(void* user, const ns_op_result* op);
  void (*on_window)(void* user, const ns_window* w);
  void* user;
} ns_analysis_config;

void ns_analysis_config_default(ns_analysis_config* cfg);
/* The bounds `ncclscope export` uses: no age limit on running events, its caps;
 * batches kept for ns_analysis_batch_of. */
void ns_analysis_config_offline(ns_analysis_config* cfg);

typedef struct ns_analysis ns_analysis;

ns_analysis* ns_analysis_create(const ns_analysis_config* cfg); /* NULL on allocation failure */
void ns_analysis_destroy(ns_analysis* a);

/* The analysis as one consumer of an event assembler the caller owns (the
 * plugin's writer, whose one assembler also feeds the flight recorder).
 * The caller creates `as` with the bounds ns_analysis_assembler_config
 * gives, at least ns_analysis_event_bytes of consumer area at offset 0 of
 * every event (ns_event_user), and a sink that passes the assembler's
 * callbacks on to *sink, which this fills. It feeds `as` each record, then
 * calls ns_analysis_fed with it, and tells `as` itself of communicators
 * (ns_asm_comm) and of time (ns_asm_advance); ns_analysis_flush flushes `as`;
 * ns_analysis_destroy leaves it. NULL on allocation failure. */
ns_analysis* ns_analysis_create_on(const ns_analysis_config* cfg, ns_asm* as, ns_asm_sink* sink);
void ns_analysis_assembler_config(const ns_analysis_config* cfg, ns_asm_config* ac);
size_t ns_analysis_event_bytes(void);

/* Communicator metadata (COMM_INIT); call before that comm's records. */
void ns_analysis_comm(ns_analysis* a, const ns_comm_info* comm);
/* One record (its strings through cfg.string). */
void ns_analysis_record(ns_analysis* a, const ns_record* r);
/* The same, for an analysis on the caller's assembler (ns_analysis_create_on)
 * that was just fed r. */
void ns_analysis_fed(ns_analysis* a, const ns_record* r);
/* A record the feeder recorded but does not analyse (the plugin's writer
 * sheds ProxySteps when it falls behind): counted, so the summary says how
 * many ProxySteps its link figures leave out. */
void ns_analysis_unanalysed(ns_analysis* a, const ns_record* r);
/* Finalizes what is due at time now_ns (the trace clock): ops past their
 * grace time, stale state, windows whose time has passed. Call periodically
 * (the writer thread: after each drain); ns_analysis_record does the same.
 * A scan waits for enough records to pay for it or for 5 grace periods of
 * trace time (analysis.c), so an op may be finalized up to that late. */
void ns_analysis_tick(ns_analysis* a, uint64_t now_ns);
/* End of data: finalizes every op (incomplete ones flagged) and closes the
 * open windows. */
void ns_analysis_flush(ns_analysis* a);

/* ---- completion ---- */
/* BATCH: the op ran in a kernel batch with others (NS_OPF_BATCHED): its GPU
 * interval is the batch's, so dur_ns is the batch's and the op has no
 * bandwidth of its own; see the batch_* fields. */
enum { NS_BASIS_NONE = 0, NS_BASIS_ENQUEUE = 1, NS_BASIS_EXEC = 2, NS_BASIS_GPU = 3, NS_BASIS_BATCH = 4 };
#define NS_OPF_INCOMPLETE 0x1u   /* never stopped, or a child never stopped */
#define NS_OPF_NO_START 0x2u     /* children seen but the Coll/P2p start never came */
#define NS_OPF_GPU_UNBOUNDED 0x4u /* gpuStart/gpuStop converted without a two-sided clock bound */
#define NS_OPF_PTIMER_FOREIGN 0x8u /* its KernelCh pTimers may be another work's: no GPU interval (ptimers.c) */
#define NS_OPF_BATCHED 0x10u /* it shared a kernel batch with other ops (batches.c): batch_* fields */

struct ns_op_result {
  uint64_t id;    /* event id of the Coll / P2p */
  uint32_t comm;  /* comm serial */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  uint8_t type;   /* NS_EV_COLL or NS_EV_P2P */
  int func;       /* NS_FUNC_* */
  const char* func_name; /* as recorded; valid during the callback */
  const char* dtype;
  const char* algo;
  const char* proto;
  uint64_t seq;
  uint64_t count;
  int64_t root_or_peer;
  uint32_t nchannels;
  uint64_t bytes;      /* nccl-tests size; 0 if the datatype is unknown */
  uint64_t start_ns, stop_ns; /* enqueue interval (Coll/P2p start/stop) */
  uint64_t exec_stop_ns;      /* last ProxyOp/KernelCh stop; 0 if no child */
  uint64_t gpu_start_ns, gpu_stop_ns; /* kernel interval in the trace clock; 0 if no pTimer */
  double gpu_err_ns;          /* bound on |gpu_*_ns - truth| (includes the timer quantum) */
  /* The op's own raw pTimers (0 when there are none, or they may be another
   * work's): its GPU duration. gpu_start_ns and gpu_stop_ns are them converted
   * with the fit as it stood when the op became final (0 when it could not
   * convert them yet). A tool that has seen the whole trace converts them
   * again with the final fit (ns_analysis_gpu_to_cpu), as `ncclscope export` does. */
  uint64_t ptimer_start, ptimer_stop;
  int basis;                  /* NS_BASIS_*: what dur_ns measures */
  uint64_t dur_ns;            /* GPU: gpu_stop-gpu_start; EXEC: exec_stop-start; ENQUEUE: stop-start */
  double algbw_gbs, busbw_gbs; /* from dur_ns; 0 if no duration or bytes */
  uint32_t n_proxy_ops, n_kernel_ch, n_steps;
  /* NS_OPF_BATCHED: the kernel batch it ran in. NCCL (2.27+) gives every work
   * of a batch the batch's start and end, so only the batch has a duration:
   * bytes = the sum over its ops, dur_ns = its GPU interval, bandwidth from
   * those (the op's own algbw/busbw stay 0). */
  uint32_t batch_ops;
  int batch_func;               /* the ops' function, NS_FUNC_SENDRECV for sends and receives */
  uint64_t batch_bytes, batch_dur_ns;
  double batch_algbw_gbs, batch_busbw_gbs;
  uint64_t batch_id;            /* the smallest op id of the batch */
  uint64_t window; /* index of the window the op started in */
  uint64_t user_tag; /* the application's tag of the call (NCCL 2.31+, profiler v7); 0: untagged */
  unsigned flags;  /* NS_OPF_* */
};

/* The duration an op's bandwidth is computed from: the first basis that
 * exists of GPU (pTimer stop - pTimer start: one clock, so the offset does not
 * matter), EXEC (exec_stop - start) and ENQUEUE (stop - start). The analysis
 * and the exporter both call this, so their numbers agree. */
typedef struct {
  int started, stopped;
  uint64_t start_ns, stop_ns, exec_stop_ns; /* exec_stop_ns 0: no child stopped */
  int has_gpu;                              /* both pTimers known and convertible */
  uint64_t ptimer_start, ptimer_stop;       /* raw GPU timer values */
} ns_op_times;
/* Returns NS_BASIS_*; *dur_ns is 0 with NS_BASIS_NONE. */
static inline int ns_basis_is_gpu(int basis) { return basis == NS_BASIS_GPU || basis == NS_BASIS_BATCH; }
int ns_op_duration(const ns_op_times* t, uint64_t* dur_ns);

/* ---- clock fit (per communicator = per GPU context) ---- */
typedef struct {
  int valid;            /* at least one sample */
  int bounded;          /* samples on both sides: error_ns is finite */
  uint64_t ref_cpu_ns;  /* reference point of the line (trace clock) */
  int64_t offset_ns;    /* gpu - cpu at ref_cpu_ns */
  double drift_ppm;     /* gpu(t) = t + offset_ns + drift_ppm*1e-6*(t - ref_cpu_ns) */
  double drift_err_ppm; /* half the range of drifts the samples allow; INFINITY if unbounded */
  double error_ns;      /* bound on the line's error over [first_ns, last_ns]; INFINITY if unbounded */
  uint64_t first_ns, last_ns; /* CPU time span of the samples in use */
  uint64_t samples;     /* samples seen */
  uint64_t resets;      /* times contradictory samples forced a restart */
  uint64_t rejected;    /* "before" samples dropped for contradicting the callbacks */
  uint64_t ops_foreign; /* this comm's ops whose pTimers may be another work's (NS_OPF_PTIMER_FOREIGN) */
} ns_clock_fit;

/* 0 if the comm is unknown or has no sample. */
int ns_analysis_clock_fit(ns_analysis* a, uint32_t comm, ns_clock_fit* out);
/* Converts a raw pTimer of comm into the trace clock with the tightest bound
 * at that point. 0 if no fit yet. err_ns is INFINITY when one-sided. */
int ns_analysis_gpu_to_cpu(ns_analysis* a, uint32_t comm, uint64_t ptimer, uint64_t* cpu_ns, double* err_ns);

/* Whether the KernelCh pTimers of op op_id (a Coll/P2p of comm) were judged
 * its own: 0 when they may be another work's (counter drift, ring overrun,
 * a time before its launch; docs/metrics.md) or when the op was never
 * judged, or cfg.keep_op_verdicts is off. For tools that convert pTimers
 * after the analysis saw the whole trace (`ncclscope export`): a pTimer of
 * an op that does not own it converts into another work's time, and has no
 * bound. */
int ns_analysis_ptimers_own(ns_analysis* a, uint32_t comm, uint64_t op_id);

/* The kernel batch op_id ran in, for tools that compute bandwidth after the
 * analysis saw the whole trace (`ncclscope export`): 1 and *out filled when
 * it shared one with other ops, 0 when not, -1 when unknown (more batched
 * ops than the analysis keeps: then do not divide its bytes by its GPU
 * interval either). */
typedef struct {
  uint32_t ops;
  int func;
  uint64_t bytes, dur_ns, first_op;
  double algbw_gbs, busbw_gbs;
} ns_batch_info;
int ns_analysis_batch_of(ns_analysis* a, uint64_t op_id, ns_batch_info* out);

/* ---- links (regression of ProxyStep transfer time over size) ---- */
typedef struct {
  uint64_t n;             /* points */
  double latency_us;      /* intercept */
  double bandwidth_gbs;   /* 1/slope; 0 if the slope is not positive */
  double r2;
  int ok;                 /* a fit: see ns_link_stats.nofit */
} ns_regression;

/* Why a link has no fit (ns_link_stats.nofit). A fit needs NS_LINK_FIT_SIZES
 * transfer sizes, each seen NS_LINK_MIN_SEEN times (the minimum of fewer is
 * just a noisy sample), spanning NS_LINK_FIT_SPAN times; and it must give a
 * positive latency and bandwidth. Fixed training bucket sizes give none. */
enum {
  NS_LINK_FIT = 0,
  NS_LINK_FEW_SIZES = 1,  /* fewer than NS_LINK_FIT_SIZES sizes seen NS_LINK_MIN_SEEN times */
  NS_LINK_NARROW = 2,     /* those sizes span less than NS_LINK_FIT_SPAN times */
  NS_LINK_NOT_LINEAR = 3  /* the line through their fastest times has no positive slope or latency */
};
#define NS_LINK_FIT_SIZES 3
#define NS_LINK_FIT_SPAN 4.0
#define NS_LINK_MIN_SEEN 4
#define NS_LINK_SIZES_SHOWN 8
const char* ns_link_nofit_reason(int nofit); /* "" for NS_LINK_FIT */

typedef struct {
  uint64_t bytes; /* a transfer size (or the fastest point's size in a size class) */
  double min_us;  /* its fastest transfer */
  uint64_t n;     /* transfers of that size */
} ns_link_size;

typedef struct {
  uint32_t comm;
  int32_t rank, peer;
  int is_send;            /* send: SendWait -> stop, the link's transfer; receive: RecvWait -> stop, a wait */
  int channel;            /* -1: all channels of the peer (an aggregate of several connections) */
  uint64_t bytes, steps;
  double time_us_sum;
  ns_regression avg, min; /* AVG: all points; MIN: fastest point per size; ok only without nofit */
  int nofit;              /* NS_LINK_FIT, or why there is no fit */
  uint32_t nsizes;        /* distinct sizes (size classes beyond 256) seen */
  ns_link_size sizes[NS_LINK_SIZES_SHOWN]; /* the most frequent of them, by size: the minimum time per size */
} ns_link_stats;

/* ---- windows ---- */
/* Size buckets are powers of 4 (1, 4, 16, ... bytes): ns_size_bucket(1000) = 256. */
uint64_t ns_size_bucket(uint64_t bytes); /* 0 for 0 */

/* The op time histogram of a window: NS_HIST_BOUNDS upper bounds, 8 us * 4^i
 * (8 us .. 2.1 s), and one bucket above the last. Powers of 4 keep the
 * series count low (docs/metrics.md, "Series budget"); p50/p99 are
 * interpolated within a bucket by whoever reads the histogram. */
#define NS_HIST_BOUNDS 10
uint64_t ns_hist_bound_ns(unsigned i); /* i < NS_HIST_BOUNDS */
unsigned ns_hist_index(uint64_t dur_ns); /* 0 .. NS_HIST_BOUNDS: the first bound >= dur_ns */

/* Every op of one (communicator, function) that started in a window. */
typedef struct {
  uint32_t comm;
  int func;             /* NS_FUNC_*: Send/Recv ops are P2P (type), the rest collectives */
  uint8_t type;         /* NS_EV_COLL or NS_EV_P2P */
  uint64_t ops, bytes;  /* every op, batched or not, with or without a duration */
  uint64_t incomplete;  /* ops flagged NS_OPF_INCOMPLETE (never stopped, or a child never stopped) */
  uint64_t timed;       /* ops with a duration (basis != NONE): the histogram's count */
  uint64_t gpu_timed;   /* ... of which the GPU's timers gave it (basis GPU or BATCH): the detail's coverage */
  uint64_t hist[NS_HIST_BOUNDS + 1]; /* per bucket (not cumulative) */
  uint64_t dur_ns_sum;  /* of the timed ops */
} ns_func_stats;

/* The operations of one userTag (the application's tag of a call, NCCL 2.31+,
 * profiler v7) on one communicator rank; untagged operations (tag 0) are in
 * no row. A table keeps NS_TAGS_MAX tags a communicator (a window's and the
 * summary's alike): the operations of any further tag count in its row with
 * other = 1 (tag 0). A batched operation (NS_OPF_BATCHED) counts in ops and
 * bytes, not in timed: its time is its batch's. */
#define NS_TAGS_MAX 256
typedef struct {
  uint32_t comm; /* comm serial (the summary's merged rows: 0) */
  uint64_t comm_id;
  uint64_t tag;   /* 0 with other */
  int other;      /* the tags past NS_TAGS_MAX, folded */
  uint32_t ranks; /* communicator ranks counted (1 in an analysis; summed in the summary) */
  uint64_t ops, bytes;
  uint64_t timed, dur_ns_sum; /* the ops with a duration of their own, and its sum */
} ns_tag_stats;

/* Cross-rank arrival among the ranks of one communicator that live in this
 * process (lateness.c): for every collective (func, seq) that all of them
 * reached, each rank's lateness = its arrival - the earliest arrival. A
 * process with one rank of a communicator has nothing to compare. */
typedef struct {
  uint32_t comm;         /* the rank's comm serial */
  uint64_t comm_id;      /* ... its communicator's id */
  int32_t rank;          /* ... and its rank there */
  uint64_t compared;     /* collectives of this window compared across the local ranks */
  uint64_t last;         /* ... in which this rank arrived last (ties: none) */
  uint64_t lateness_ns_sum, lateness_ns_max; /* this rank's lateness over them */
  /* Of them, those where every rank's arrival is its GPU kernel start: a
   * rank whose kernels start late but whose calls come on time is late only
   * in these, and under sampled detail they are a few among many. */
  uint64_t gpu_compared, gpu_last, gpu_lateness_ns_sum;
} ns_lateness_stats;

typedef struct {
  uint32_t comm;
  int func;
  char func_name[24], algo[24], proto[24], dtype[24];
  uint64_t size_bucket;   /* ns_size_bucket(bytes): a power of 4 (0 for 0) */
  uint32_t batch_ops;     /* ops per kernel batch: a batch counts once, with its bytes and time; 0: not batched */
  int gpu;                /* 1: durations from the GPU's timers (basis GPU, BATCH); 0: from the CPU (EXEC,
                           * ENQUEUE). Never mixed: ops of either kind have buckets of their own. */
  uint64_t count, bytes;
  double p50_us, p90_us, p99_us, max_us, mean_us;
  int pct_exact;          /* 1: exact order statistics, 0: sketch (< 1 % relative) */
  double algbw_gbs, busbw_gbs; /* total bytes / total time; busbw with the func's factor */
} ns_bucket_stats;

/* A communicator's GPU clock fit as a window closes (ns_analysis_clock_fit then). */
typedef struct {
  uint32_t comm;
  ns_clock_fit fit;
} ns_window_clock;

struct ns_window {
  uint64_t index;
  uint64_t start_ns, end_ns; /* nominal interval of op starts */
  uint64_t ops;
  size_t n_buckets;
  const ns_bucket_stats* buckets;
  size_t n_links;
  const ns_link_stats* links;
  size_t n_funcs;
  const ns_func_stats* funcs;
  size_t n_lateness;
  const ns_lateness_stats* lateness;
  size_t n_tags;
  const ns_tag_stats* tags;
  /* As the window closes: every communicator with a clock fit, and the
   * ProxySteps recorded but not analysed so far (ns_analysis_stats). */
  size_t n_clocks;
  const ns_window_clock* clocks;
  uint64_t steps_unanalysed;
};

/* ---- summary (merges any number of analyses; one per process) ---- */
#define NS_SUMMARY_COLLECTIVES 0x1u /* the nccl-tests style table */
#define NS_SUMMARY_LINKS 0x2u       /* the slowest links */
#define NS_SUMMARY_CLOCKS 0x4u      /* the GPU clock fits */
#define NS_SUMMARY_CROSS_RANK 0x8u  /* for callers that add a cross-rank section (the CLI) */
/* What the plugin's writer recorded and lost, for its own summary (the first lines, and "recording"
 * in the JSON). `ncclscope report` counts the same from the traces (its "loss"). */
typedef struct ns_summary_recording {
  uint64_t events;          /* events whose START reached the writer */
  uint64_t records_dropped; /* records (starts, stops, states) a full ring dropped */
  uint64_t bytes_lost;      /* trace bytes the file did not take (full disk, I/O errors) */
  uint64_t blocks_lost;     /* whole blocks among them (each a gap a reader sees) */
  uint64_t write_errors;    /* episodes of failing writes */
  uint64_t steps_unanalysed; /* ProxySteps in the trace but not in this summary's figures */
} ns_summary_recording;
typedef struct {
  size_t max_links;  /* slowest links listed (10) */
  unsigned sections; /* text: NS_SUMMARY_* bits to write; 0 = all. JSON always has all. */
  int wide; /* text: the collectives per algorithm, protocol and rank count, every figure, and the other tables in
             * their wide columns (0: narrow, NS_SUMMARY_NARROW columns where a row allows) */
  const ns_summary_recording* recording; /* the plugin's losses, written first; NULL: none */
} ns_summary_options;
#define NS_SUMMARY_NARROW 120
/* The narrow table's percentiles need this many timed calls (fewer: '-'). */
#define NS_SUMMARY_P50_MIN_CALLS 5
#define NS_SUMMARY_P99_MIN_CALLS 100

/* Returns 0 on success, -1 on write error. */
int ns_analysis_summary_text(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out);
int ns_analysis_summary_json(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out);

/* The same summary accumulated one analysis at a time, so that each can be
 * destroyed once added: it keeps the merged rows, the clock fits and, of the
 * link rows, the first max_links of each kind (opt: its max_links; later
 * calls may list fewer, not more). ns_summary_add returns 0, or -1 when out
 * of memory (the summary is then incomplete). The writers sort the rows in
 * place and may be called again. */
typedef struct ns_summary ns_summary;
ns_summary* ns_summary_new(const ns_summary_options* opt); /* NULL when out of memory */
int ns_summary_add(ns_summary* s, ns_analysis* a);
int ns_summary_text(ns_summary* s, const ns_summary_options* opt, FILE* out);
int ns_summary_json(ns_summary* s, const ns_summary_options* opt, FILE* out);
void ns_summary_free(ns_summary* s);

/* Counters for tests and the finalize record. */
typedef struct {
  uint64_t records, ops, ops_incomplete, orphans_evicted, windows, steps, pxn_skipped;
  uint64_t steps_unanalysed; /* ProxySteps recorded but not fed (ns_analysis_unanalysed) */
  uint64_t batches, ops_batched; /* kernel batches of 2+ ops, and their ops */
  size_t inflight, inflight_peak; /* the assembler's entries */
} ns_analysis_stats;
void ns_analysis_get_stats(const ns_analysis* a, ns_analysis_stats* out);
/* What the event assembler counted (hierarchy, events never stopped). */
void ns_analysis_event_stats(const ns_analysis* a, ns_asm_stats* out);

#endif
