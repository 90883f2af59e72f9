/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: state shared by the analysis sources (not public).
 * Everything here belongs to the one thread that owns the ns_analysis.
 */
#ifndef NCCLSCOPE_ANALYSIS_INTERNAL_H
#define NCCLSCOPE_ANALYSIS_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "analysis/clockfit.h"
#include "analysis/links.h"
#include "analysis/percentiles.h"
#include "ncclscope/events.h"
#include "util/idmap.h"

#define NS_STR_LEN 24

/* Why an op's pTimers are not taken as its own (ptimers.c). */
enum {
  NS_PT_OWN = 0,
  NS_PT_DRIFT,   /* after a work without a profiler op on its comm (self send/recv, AllGatherV Broadcast) */
  NS_PT_OVERRUN, /* so many later launches before its callbacks that the 64-slot ring may have wrapped */
  NS_PT_CAUSAL,  /* its converted start precedes its own launch: another, earlier work's time */
  NS_PT_REASONS
};

/* Where a ProxyOp's steps count in a window: the index + 1 of its link's
 * accumulators (its channel's and all channels') in that window's links,
 * so its steps after the first need no lookup (windows.c ns_win_step).
 * Every step of a ProxyOp has its link key (communicator, rank, peer,
 * direction, channel: all the ProxyOp's). */
typedef struct {
  uint64_t window; /* index + 1 of the window the indexes are of; 0: none */
  uint32_t channel, all;
} ns_link_cache;

/* What the analysis keeps per event, in the assembler's consumer area
 * (ns_event_user): a Coll/P2p's window and the two "before" sides of its
 * GPU clock bound; a ProxyStep's transfer; a ProxyOp's link cache. */
typedef struct {
  uint64_t window;        /* op: the window it started in (has_window) */
  uint64_t launch_ts;     /* op: earliest KernelLaunch start of its group on this comm, 0 if not known (yet) */
  uint64_t recv_ready_ts; /* op: latest RecvGPUWait of its own network receives, 0 if none */
  uint64_t plan;          /* op: its plan's legacy Group (parentGroup, or the parent before v5), 0 unknown */
  uint64_t ptimer_last;   /* op: the largest pTimer (start or stop) of its KernelCh */
  uint64_t wait_ts, size; /* ProxyStep: SendWait/RecvWait time, its own transSize (SendWait/RecvFlushWait) */
  ns_link_cache links;    /* ProxyOp: where its steps count */
  uint8_t has_window;
  uint8_t graph;    /* op: its CollApi/P2pApi was graph-captured: the Coll start precedes the kernel */
  uint8_t has_wait; /* ProxyStep */
} ns_an_event;

/* A GroupApi, known only through its children: the earliest KernelLaunch
 * start per communicator (a group launches one or more kernels per comm). */
#define NS_GROUP_COMMS 4
typedef struct {
  uint32_t comm[NS_GROUP_COMMS];
  uint64_t launch_ts[NS_GROUP_COMMS];
  uint32_t n;
} ns_group_state;

/* The launch links (launch.c): GroupApi, CollApi and P2pApi events kept
 * past their stop for the ops that name them. */
typedef struct {
  uint64_t id;     /* 0: free */
  uint64_t parent; /* CollApi/P2pApi: their GroupApi; a free slot: the next free position + 1 */
  uint8_t type;    /* NS_EV_GROUP_API, NS_EV_COLL_API or NS_EV_P2P_API */
  uint8_t graph;   /* CollApi/P2pApi: graphCaptured */
  uint64_t first_seen, last_activity;
  ns_group_state grp; /* GroupApi */
} ns_launch_link;

/* One GPU's clock (comms.c). A communicator's kernels run on one GPU, and
 * communicators on one GPU share its clock: split communicators, or any
 * with the same GPU UUID. Without a UUID (no CUDA lookup), communicators
 * whose KernelCh come from one proxy thread share a GPU (NCCL runs a proxy
 * thread per device; split communicators that share resources share it);
 * others get a fit of their own, which is sound, only less tight. */
typedef struct {
  char uuid[48];  /* the GPU UUID, "" when keyed by the proxy thread */
  uint64_t ring;  /* without a UUID: the ring serial of its proxy thread (event id >> 40) */
  uint32_t proxy_tid; /* that thread (for the summary) */
  ns_clockfit clock;
} ns_gpu_state;

/* The ids of a communicator's operations whose pTimers were judged its own
 * (ptimers.c), as sorted ranges: consecutive judgments extend a range. */
typedef struct {
  uint64_t lo, hi;
} ns_id_range;

/* Which pTimers of a communicator's operations are their own (ptimers.c):
 * the sources of work-counter drift, the recent launches, the verdicts. */
#define NS_PT_LAUNCH_LOG 2048
#define NS_PT_PENDING_BCAST 64
typedef struct {
  uint64_t drift_since;  /* ops started at or after this may carry another work's pTimers; 0: no drift seen */
  uint64_t bcast_id[NS_PT_PENDING_BCAST], bcast_ts[NS_PT_PENDING_BCAST]; /* Broadcast CollApis without a Coll yet */
  uint32_t nbcast;
  uint64_t launch_log[NS_PT_LAUNCH_LOG]; /* launch (else start) times of the latest ops, a ring */
  uint64_t launch_max[NS_PT_LAUNCH_LOG]; /* the latest of those times up to each entry, in log order */
  uint64_t launch_min[NS_PT_LAUNCH_LOG]; /* the earliest of those times from each entry to the newest */
  uint64_t nlaunch;                      /* entries written (the ring holds the last NS_PT_LAUNCH_LOG) */
  uint64_t launch_lost_max;              /* the latest time the ring has overwritten (0: none yet) */
  ns_id_range* own;                      /* ops whose pTimers were judged their own */
  size_t nown, capown;
  uint64_t last_judged;
  int last_own;
  uint64_t verdicts[NS_PT_REASONS];      /* ops judged, by verdict (NS_PT_OWN or the reason not) */
} ns_pt_comm;

typedef struct {
  uint32_t comm;
  int known;      /* ns_analysis_comm was called */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  char name[64];
  char uuid[48];  /* its GPU's UUID from COMM_INIT, "" if unknown */
  int gpu;        /* index in ns_analysis.gpus, -1 until its first KernelCh */
  ns_pt_comm pt;
} ns_comm_state;

/* ---- kernel batches (batches.c) ---- */
/* An op with a GPU interval of its own, held until its batch is known. */
typedef struct {
  ns_op_result r; /* its strings point into the fields below */
  char func[NS_STR_LEN], dtype[NS_STR_LEN], algo[NS_STR_LEN], proto[NS_STR_LEN];
  uint64_t p0, p1; /* raw pTimers: its channels' earliest start, latest stop */
  uint8_t own;     /* its pTimers are judged its own; else it joined at the very start pTimer of one that is */
} ns_held_op;

/* Ops of one plan that began together on the GPU: the batch being formed. */
typedef struct {
  uint32_t comm;
  uint64_t plan;   /* their Group (the plan's legacy group event), 0 if unknown */
  uint64_t p0, p1; /* earliest start, latest stop (raw pTimers) of the own ops */
  uint32_t nown;   /* ops whose pTimers are judged their own; 0: none yet (p0, p1 are then a held op's) */
  uint64_t last_join;
  ns_held_op* ops;
  size_t n, cap;
} ns_batch_open;

/* ---- aggregates (windows.c) ---- */
typedef struct {
  ns_bucket_stats key; /* identity fields (batch_ops too); stats filled when published */
  uint32_t nranks;
  uint64_t count, bytes, dur_ns_sum;
  ns_pct pct;
} ns_bucket_acc;

typedef struct {
  ns_link_stats key; /* comm, rank, peer, is_send, channel */
  ns_linkacc acc;
} ns_link_acc;

/* Rows of ns_tag_stats by (communicator, tag): the NS_TAGS_MAX smallest tags
 * of a communicator, and its other row (tags.c). A communicator is its comm
 * serial, or its comm_id in a table of merged rows (by_id). */
typedef struct {
  ns_tag_stats* t;
  size_t n, cap;
  ns_idmap at;      /* a row key's hash -> its index + 1 in t */
  ns_idmap kept;    /* communicator key + 1 -> its tags with a row of their own */
  ns_idmap largest; /* communicator key + 1 -> index + 1 of its largest kept tag's row (a cache) */
  int by_id;
} ns_tag_table;
/* Adds row x's counts to its (communicator, tag) row: made on first use (a
 * full communicator's largest tag gives way to a smaller one), else x's
 * communicator's other row. -1: out of memory. */
int ns_tags_add(ns_tag_table* t, const ns_tag_stats* x);
/* One final op (r->user_tag != 0). */
void ns_tags_op(ns_tag_table* t, const ns_op_result* r);
/* Sorts the rows with cmp (a qsort comparator of ns_tag_stats); later adds still find them. */
void ns_tags_sort(ns_tag_table* t, int (*cmp)(const void*, const void*));
void ns_tags_free(ns_tag_table* t);

typedef struct {
  ns_bucket_acc* b;
  size_t nb, capb;
  ns_link_acc* l;
  size_t nl, capl;
  ns_idmap l_at;    /* a link key's hash -> its index + 1 in l (windows.c link_for) */
  ns_func_stats* f; /* per (comm, func): every op, the time histogram */
  size_t nf, capf;
  ns_lateness_stats* late; /* per comm serial (lateness.c) */
  size_t nlate, caplate;
  ns_tag_table tags; /* per (comm serial, userTag) */
} ns_aggr;

typedef struct {
  uint64_t index, start_ns, end_ns, ops;
  uint64_t inflight; /* ops attributed here and not yet final */
  int closing;       /* a newer window exists */
  ns_aggr ag;
} ns_win;

/* summary table row: one (communicator rank, func, nranks, bytes, dtype,
 * algo, proto) of this analysis. Warm-up: the durations of the first
 * NS_WARMUP_MAX calls are held in `first`, outside pct and dur_ns_sum; the
 * summary decides how many of them were warm-up (ns_warmup_calls) once the
 * number of calls is known, and folds the others back. */
#define NS_WARMUP_MAX 5
typedef struct {
  int func;
  char func_name[NS_STR_LEN], dtype[NS_STR_LEN], algo[NS_STR_LEN], proto[NS_STR_LEN];
  uint32_t comm; /* comm serial: one rank of one communicator */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  uint64_t bytes, count_elems, calls, dur_ns_sum; /* dur_ns_sum, pct: calls after the first NS_WARMUP_MAX */
  uint32_t batch_ops; /* ops per kernel batch (a call is then a batch); 0: not batched */
  int64_t root;       /* Broadcast, Reduce: the root (rows differ by it); -1 otherwise */
  int basis_min, basis_max;
  uint64_t first[NS_WARMUP_MAX];
  ns_pct pct;
  /* merged rows (summary.c): ranks seen, calls per rank, warm-up calls excluded */
  uint32_t ranks;
  uint64_t calls_min, calls_max, warmup;
} ns_row_acc;

/* Warm-up calls of a row of `calls` calls of one rank: min(NS_WARMUP_MAX, calls / 4). */
static inline uint64_t ns_warmup_calls(uint64_t calls) {
  return calls / 4 < NS_WARMUP_MAX ? calls / 4 : NS_WARMUP_MAX;
}

struct ns_analysis {
  ns_analysis_config cfg;
  ns_asm* as; /* every record goes through the event assembler */
  int owns_as; /* as is the analysis' own: it feeds, flushes and frees it (else: ns_analysis_create_on) */
  /* launch links (launch.c): id -> position + 1 in `links` */
  ns_idmap link_index;
  ns_launch_link* links;
  size_t links_cap, links_used;
  size_t links_free; /* position + 1 of a free slot below links_used, chained through .parent; 0: none (rebuilt by each scan) */
  /* comms: indexed by serial, grown on demand */
  ns_comm_state** comms;
  size_t ncomms;
  ns_gpu_state** gpus;
  size_t ngpus;
  uint64_t now, last_scan, last_link_scan;
  /* The last op's function and datatype names and what they mean (finalize_op):
   * ops come in runs of one kind, and the names are looked up case-blind in tables. */
  ns_name_memo memo_func, memo_dtype;
  uint64_t records_since_scan;
  /* windows */
  ns_win* wins;
  size_t nwins, capwins;
  uint64_t next_win_index;
  int have_origin;
  uint64_t origin;
  /* cross-rank arrival of the local ranks' collectives (lateness.c) */
  ns_idmap late_index; /* key of (comm_id, func, seq) -> index + 1 in late_open */
  struct ns_late_open* late_open;
  size_t nlate_open, caplate_open;
  /* per send connection (comm, peer, channel): the latest step stop, to tell queued steps (completion.c) */
  ns_idmap conn_last_stop;
  /* kernel batches being formed, and what became of closed ones (for ns_analysis_batch_of) */
  ns_batch_open* open_batches; /* a ring of NS_BATCH_OPEN (allocated at the first batch), oldest at open_head */
  size_t nopen_batches, open_head;
  ns_idmap open_plans;     /* batch_key(comm, plan) -> open batches with that key (batches.c) */
  int open_plans_lost;     /* a count could not be kept (out of memory): every open batch is looked at */
  ns_idmap batch_of;       /* op id -> index + 1 in `batches` */
  ns_idmap plan_pending;   /* plan -> its ops started and not yet final (batches.c) */
  ns_batch_info* batches;
  size_t nbatches, capbatches;
  int batch_store_full;
  /* totals for the summary */
  ns_aggr total;
  ns_row_acc* rows;
  size_t nrows, caprows;
  ns_analysis_stats st;
};

/* comms.c */
ns_comm_state* ns_an_comm(ns_analysis* a, uint32_t comm, int create);
/* The clock of the comm's GPU; NULL until its first KernelCh (or out of memory). */
ns_clockfit* ns_an_clock(ns_analysis* a, const ns_comm_state* cs);
/* The comm's GPU, assigned at its first KernelCh (from proxy ring `ring`); NULL if out of memory. */
ns_clockfit* ns_an_clock_at_kch(ns_analysis* a, ns_comm_state* cs, uint64_t ring, uint32_t tid);
void ns_an_comms_free(ns_analysis* a);

/* ptimers.c: whose times an op's KernelCh pTimers are */
void ns_pt_op_started(ns_analysis* a, ns_comm_state* cs, const ns_event* op, uint64_t launch_ts);
void ns_pt_api_started(ns_analysis* a, const ns_event* api);
/* NS_PT_OWN, or the reason the op's pTimers may be another work's; recorded for ns_analysis_ptimers_own.
 * lower_ts: a time its kernel began after (its launch), 0 if none; ptimer_last: its largest pTimer. */
int ns_pt_judge(ns_analysis* a, ns_comm_state* cs, const ns_event* op, uint64_t lower_ts, uint64_t ptimer_last,
                const ns_clockfit* clock);
void ns_pt_scan(ns_analysis* a, int flush);
/* Releases what the judgments keep in every comm state (before ns_an_comms_free). */
void ns_pt_comms_free(ns_analysis* a);

/* The string of a record's string id through cfg.string; NULL for none. */
static inline const char* ns_an_string(const ns_analysis* a, uint32_t id) {
  return id && a->cfg.string ? a->cfg.string(a->cfg.string_user, id) : NULL;
}

/* Copies a string into a NS_STR_LEN buffer (truncated; NULL -> ""). */
static inline void ns_an_copy_str(char* dst, const char* src) {
  size_t len = src ? strnlen(src, NS_STR_LEN - 1) : 0;
  if (len) memcpy(dst, src, len);
  dst[len] = '\0';
}

/* completion.c: the assembler's callbacks */
void ns_an_sink(ns_analysis* a, ns_asm_sink* sink);

/* launch.c */
void ns_launch_started(ns_analysis* a, const ns_event* ev); /* GroupApi/CollApi/P2pApi/KernelLaunch STARTs */
/* The earliest KernelLaunch start of the group of API event api_id on comm, 0 if unknown. */
uint64_t ns_launch_for(ns_analysis* a, uint64_t api_id, uint32_t comm);
/* Whether api_id names a graph-captured CollApi/P2pApi. */
int ns_launch_graph(ns_analysis* a, uint64_t api_id);
/* Forgets links idle for 5 grace periods or older than max_age (all of them when flush). */
void ns_launch_scan(ns_analysis* a, int flush);
void ns_launch_free(ns_analysis* a);

/* batches.c */
/* A final op: published at once, or held (with its raw pTimers and plan) until its batch closes. */
void ns_batch_op(ns_analysis* a, const ns_op_result* r, uint64_t plan, uint64_t p0, uint64_t p1);
/* An op of `plan` started / became final (or left unstarted): a batch of the plan stays open while
 * any of its ops may still join. plan 0 (unknown) is not counted. */
void ns_batch_plan_started(ns_analysis* a, uint64_t plan);
void ns_batch_plan_final(ns_analysis* a, uint64_t plan);
void ns_batch_scan(ns_analysis* a, int flush);
void ns_batch_free(ns_analysis* a);
/* The op goes out: callback, window, summary. */
void ns_an_publish(ns_analysis* a, const ns_op_result* r);

/* windows.c */
uint64_t ns_win_attach(ns_analysis* a, uint64_t ts); /* window index for an op starting at ts (inflight++) */
void ns_win_op_done(ns_analysis* a, const ns_op_result* r);
/* A closed batch of 2+ ops, as one call (func, bytes, dur_ns, basis, batch_ops): its window and summary row. */
void ns_win_batch_done(ns_analysis* a, const ns_op_result* batch);
void ns_win_op_dropped(ns_analysis* a, uint64_t window);
/* A step's transfer in its link's statistics (key's channel and all
 * channels). cache: its ProxyOp's (NULL: look the link up). */
void ns_win_step(ns_analysis* a, uint64_t window, const ns_link_stats* key, uint64_t size, double time_us,
                 int queued, ns_link_cache* cache);
void ns_win_scan(ns_analysis* a, int flush);
void ns_aggr_free(ns_aggr* g);

/* lateness.c: the local ranks' arrival at each collective */
#define NS_LATE_RANKS 16 /* local ranks of one communicator compared; more: not compared */
/* One collective that all local ranks reached: each rank's lateness (its
 * arrival - the earliest), and whether it arrived last alone. */
typedef struct {
  uint32_t n;
  uint8_t gpu; /* every arrival is a GPU kernel start */
  uint64_t comm_id;
  uint32_t comm[NS_LATE_RANKS];
  int32_t rank[NS_LATE_RANKS];
  uint64_t late_ns[NS_LATE_RANKS];
  uint8_t last[NS_LATE_RANKS];
} ns_late_cmp;
/* 1 when op r completed its collective's comparison (*out filled), 0 when none completed. */
int ns_late_op(ns_analysis* a, const ns_op_result* r, ns_late_cmp* out);
void ns_late_scan(ns_analysis* a, int flush);
void ns_late_free(ns_analysis* a);
void ns_aggr_link_merge(ns_aggr* dst, const ns_link_acc* src);
void ns_link_publish(const ns_link_acc* l, ns_link_stats* out);

#endif
