/* ncclscope analysis: state shared by the analysis sources (not public).
 * Everything here belongs to the one thread that owns the ns_analysis.
 */
#ifndef NCCLSCOPE_ANALYSIS_INTERNAL_H
#define NCCLSCOPE_ANALYSIS_INTERNAL_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/clockfit.h"
#include "analysis/links.h"
#include "analysis/percentiles.h"

#define NS_STR_LEN 24
#define NS_NODE_OP_PENDING 0xfe /* a Coll/P2p named by a child before its own start arrived */

typedef struct {
  int func;
  char func_name[NS_STR_LEN], dtype[NS_STR_LEN], algo[NS_STR_LEN], proto[NS_STR_LEN];
  uint64_t seq, count;
  int64_t root_or_peer;
  uint32_t nchannels;
  uint32_t live_children;  /* started, not yet stopped */
  uint32_t n_proxy_ops, n_kernel_ch, n_kch_done, n_steps;
  uint32_t n_kch_timed; /* stopped KernelCh children whose stop pTimer is known */
  uint64_t exec_stop;
  uint64_t ptimer_min, ptimer_max; /* raw GPU timer interval of the KernelCh children */
  int has_ptimer_start, has_ptimer_stop;
  uint64_t api_id;    /* the CollApi/P2pApi parent (v5+), 0 if none */
  uint64_t launch_ts; /* earliest KernelLaunch start of its group on this comm, 0 if not known (yet) */
  uint64_t recv_ready_ts; /* latest RecvGPUWait of its own network receives, 0 if none */
  int graph;          /* its CollApi/P2pApi was graph-captured: the Coll start precedes the kernel */
  uint64_t window;
  unsigned flags; /* NS_OPF_* gathered before finalization */
} ns_op_state;

typedef struct {
  int32_t channel, peer;
  int is_send, pxn;
  uint64_t root; /* the op (Coll/P2p) id, 0 if none */
} ns_pop_state;

typedef struct {
  uint64_t wait_ts, size;
  int has_wait;
} ns_step_state;

typedef struct {
  uint64_t ptimer_start, ptimer_stop;
  int has_stop;
} ns_kch_state;

/* A GroupApi, known only through its children: the earliest KernelLaunch
 * start per communicator (a group launches one or more kernels per comm). */
#define NS_GROUP_COMMS 4
typedef struct {
  uint32_t comm[NS_GROUP_COMMS];
  uint64_t launch_ts[NS_GROUP_COMMS];
  uint32_t n;
} ns_group_state;

typedef struct {
  uint64_t id, parent;
  uint32_t comm;
  uint8_t type; /* ns_event_type, or NS_NODE_OP_PENDING */
  uint8_t started, stopped;
  uint64_t first_seen, last_activity;
  uint64_t start_ts, stop_ts;
  int32_t next; /* hash chain / free list */
  union {
    ns_op_state op;
    ns_pop_state pop;
    ns_step_state step;
    ns_kch_state kch;
    ns_group_state grp; /* NS_EV_GROUP_API */
    int api_graph;      /* NS_EV_COLL_API / NS_EV_P2P_API (`parent` is their GroupApi): graphCaptured */
  } u;
} ns_node;

typedef struct {
  uint32_t comm;
  int known;      /* ns_analysis_comm was called */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  char name[64];
  int kernel_seen; /* KernelCh events arrive for this comm */
  ns_clockfit clock;
} ns_comm_state;

/* ---- aggregates (windows.c) ---- */
typedef struct {
  ns_bucket_stats key; /* identity fields; stats filled when published */
  uint32_t nranks;
  uint64_t count, bytes, dur_ns_sum;
  ns_pct pct;
} ns_bucket_acc;

typedef struct {
  ns_link_stats key; /* comm, rank, peer, is_send, channel */
  ns_linkacc acc;
} ns_link_acc;

typedef struct {
  ns_bucket_acc* b;
  size_t nb, capb;
  ns_link_acc* l;
  size_t nl, capl;
} ns_aggr;

typedef struct {
  uint64_t index, start_ns, end_ns, ops;
  uint64_t inflight; /* ops attributed here and not yet final */
  int closing;       /* a newer window exists */
  ns_aggr ag;
} ns_win;

/* summary table row: one (func, nranks, bytes, dtype) */
typedef struct {
  int func;
  char func_name[NS_STR_LEN], dtype[NS_STR_LEN];
  uint32_t nranks;
  uint64_t bytes, count_elems, calls, dur_ns_sum;
  int basis_min, basis_max;
  ns_pct pct;
} ns_row_acc;

struct ns_analysis {
  ns_analysis_config cfg;
  /* nodes: pool + chained hash by id */
  ns_node* nodes;
  size_t nnodes_cap, live_nodes;
  int32_t free_head;
  int32_t* buckets;
  size_t nbuckets; /* power of two */
  /* comms: indexed by serial, grown on demand */
  ns_comm_state** comms;
  size_t ncomms;
  uint64_t now, last_scan;
  uint64_t records_since_scan;
  /* windows */
  ns_win* wins;
  size_t nwins, capwins;
  uint64_t next_win_index;
  int have_origin;
  uint64_t origin;
  /* totals for the summary */
  ns_aggr total;
  ns_row_acc* rows;
  size_t nrows, caprows;
  ns_analysis_stats st;
};

/* analysis.c */
ns_comm_state* ns_an_comm(ns_analysis* a, uint32_t comm, int create);
ns_node* ns_an_find(ns_analysis* a, uint64_t id);
ns_node* ns_an_get(ns_analysis* a, uint64_t id, uint64_t ts); /* find or create */
void ns_an_remove(ns_analysis* a, ns_node* n);

/* completion.c */
void ns_an_handle(ns_analysis* a, const ns_record* r, const char* const strs[NS_REC_STRS]);
void ns_an_scan(ns_analysis* a, int flush);
void ns_an_finalize_op(ns_analysis* a, ns_node* n, unsigned flags);

/* windows.c */
uint64_t ns_win_attach(ns_analysis* a, uint64_t ts); /* window index for an op starting at ts (inflight++) */
void ns_win_op_done(ns_analysis* a, const ns_op_result* r);
void ns_win_op_dropped(ns_analysis* a, uint64_t window);
void ns_win_step(ns_analysis* a, uint64_t window, const ns_link_stats* key, uint64_t size, double time_us);
void ns_win_scan(ns_analysis* a, int flush);
void ns_aggr_free(ns_aggr* g);
void ns_aggr_link_merge(ns_aggr* dst, const ns_link_acc* src);
void ns_link_publish(const ns_link_acc* l, ns_link_stats* out);

#endif
