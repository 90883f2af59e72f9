/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the metrics model (metrics.h): its resources, points,
 * series budget and live series; what a window adds is metrics_window.c's.
 * Writer thread only.
 * Memory: at most max_series points (each family's array) and the few that
 * are never refused beyond it, plus one resource per communicator rank. */
#include "sinks/metrics_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclscope/record.h"
#include "util/array.h"

static const ns_mdesc g_desc[F_COUNT] = {
    [F_SERIES] = {"ncclscope.series", "ncclscope_series", "{series}", NS_MK_GAUGE, 1,
                  "Series this process exports (Prometheus sample lines), at most NCCLSCOPE_MAX_SERIES."},
    [F_REFUSED] = {"ncclscope.series.refused", "ncclscope_series_refused", "{series}", NS_MK_GAUGE, 1,
                   "Series of the last window left out to stay within NCCLSCOPE_MAX_SERIES."},
    [F_UPDATED] = {"ncclscope.last_update.timestamp", "ncclscope_last_update_timestamp_seconds", "s", NS_MK_GAUGE, 0,
                   "When this process last wrote its metrics (Unix time): at least every NCCLSCOPE_WINDOW_SEC while "
                   "it lives; a value that stops moving is a dead process's."},
    [F_OLDEST] = {"ncclscope.oldest_inflight", "ncclscope_oldest_inflight_seconds", "s", NS_MK_GAUGE, 0,
                  "Age of the communicator rank's oldest collective or point-to-point operation in flight (0: none), "
                  "measured by ncclscope's own thread: it keeps rising while nothing progresses."},
    [F_HANGS] = {"ncclscope.hang.episodes", "ncclscope_hang_episodes_total", "{episode}", NS_MK_COUNTER, 1,
                 "Times the watchdog found an operation in flight longer than NCCLSCOPE_HANG_TIMEOUT_SEC."},
    [F_STUCK] = {"ncclscope.stuck_op.info", "ncclscope_stuck_op_info", "{op}", NS_MK_GAUGE, 1,
                 "1 while an operation of the communicator rank is in flight longer than NCCLSCOPE_HANG_TIMEOUT_SEC: "
                 "its function and seqNumber (gone once it completes)."},
    [F_POSTED] = {"ncclscope.last_posted_seq", "ncclscope_last_posted_seq", "{op}", NS_MK_GAUGE, 1,
                  "Communicator-wide sequence number of the rank's last collective posted: collectives posted so far, "
                  "all functions (the sum of NCCL's per-function seqNumber + 1). A rank below its communicator's "
                  "largest never posted the next one."},
    [F_COMPLETED] = {"ncclscope.last_completed_seq", "ncclscope_last_completed_seq", "{op}", NS_MK_GAUGE, 1,
                     "Communicator-wide sequence number of the rank's last collective completed: collectives "
                     "completed so far, all functions."},
    [F_WINDOWS] = {"ncclscope.windows", "ncclscope_windows_total", "{window}", NS_MK_COUNTER, 1,
                   "Metric windows closed (NCCLSCOPE_WINDOW_SEC)."},
    [F_DROPPED] = {"ncclscope.events.dropped", "ncclscope_events_dropped_total", "{event}", NS_MK_COUNTER, 1,
                   "Profiler events lost to a full ring (reason ring; or a thread without one): per process, and "
                   "per communicator for its starts."},
    [F_CLOSED] = {"ncclscope.events.incomplete", "ncclscope_events_incomplete_total", "{event}", NS_MK_COUNTER, 1,
                  "Events NCCL never stopped, closed by ncclscope, by reason."},
    [F_UNANALYSED] = {"ncclscope.steps.unanalysed", "ncclscope_steps_unanalysed_total", "{event}", NS_MK_COUNTER, 1,
                      "ProxySteps recorded in the trace but left out of the live analysis while the writer was behind "
                      "(NCCLSCOPE_SHED_FILL)."},
    [F_OTLP_REQ] = {"ncclscope.otlp.requests", "ncclscope_otlp_requests_total", "{request}", NS_MK_COUNTER, 1,
                    "OTLP export requests by result (ok, failed: each failed attempt)."},
    [F_OTLP_DROPPED] = {"ncclscope.otlp.payloads.dropped", "ncclscope_otlp_payloads_dropped_total", "{payload}",
                        NS_MK_COUNTER, 1,
                        "OTLP payloads given up (retries exhausted, or replaced by a newer one while queued)."},
    [F_DETAIL_FULL] = {"ncclscope.detail.full", "ncclscope_detail_full_ratio", "1", NS_MK_GAUGE, 0,
                       "Share of the window's time NCCL ran with full detail (KernelCh, ProxyStep: NCCLSCOPE_DETAIL); "
                       "label level: the level configured."},
    [F_DETAIL_ESC] = {"ncclscope.detail.escalations", "ncclscope_detail_escalations_total", "{escalation}",
                      NS_MK_COUNTER, 1, "Times ncclscope switched NCCL to full detail because something went wrong."},
    [F_OPS] = {"ncclscope.ops", "ncclscope_ops_total", "{op}", NS_MK_COUNTER, 1,
               "Collective (type coll) and point-to-point (type p2p) operations, by function."},
    [F_OPS_GPU] = {"ncclscope.ops.gpu_timed", "ncclscope_ops_gpu_timed_total", "{op}", NS_MK_COUNTER, 1,
                   "Those operations whose time came from the GPU's timers (full detail): the coverage of GPU "
                   "timing."},
    [F_BYTES] = {"ncclscope.bytes", "ncclscope_bytes_total", "By", NS_MK_COUNTER, 1,
                 "Bytes of those operations (the nccl-tests message size)."},
    [F_INCOMPLETE] = {"ncclscope.ops.incomplete", "ncclscope_ops_incomplete_total", "{op}", NS_MK_COUNTER, 1,
                      "Operations never stopped, or with a child never stopped."},
    [F_CLOCK] = {"ncclscope.gpu.clock.error", "ncclscope_gpu_clock_error_seconds", "s", NS_MK_GAUGE, 0,
                 "Bound on the error of the GPU clock mapping of the communicator's GPU."},
    [F_LATE_SUM] = {"ncclscope.straggler.lateness", "ncclscope_straggler_lateness_seconds_total", "s", NS_MK_COUNTER, 0,
                    "Sum of this rank's lateness (arrival - earliest arrival of the local ranks) over compared "
                    "collectives."},
    [F_LATE_N] = {"ncclscope.straggler.compared", "ncclscope_straggler_compared_total", "{op}", NS_MK_COUNTER, 1,
                  "Collectives compared across the ranks of the communicator in this process."},
    [F_LATE_LAST] = {"ncclscope.straggler.last", "ncclscope_straggler_last_total", "{op}", NS_MK_COUNTER, 1,
                     "Compared collectives this rank arrived at last."},
    [F_LATE_MAX] = {"ncclscope.straggler.lateness.max", "ncclscope_straggler_lateness_max_seconds", "s", NS_MK_GAUGE, 0,
                    "Largest lateness of this rank in the window."},
    [F_LINKS_FITTED] = {"ncclscope.links.fitted", "ncclscope_links_fitted", "{link}", NS_MK_GAUGE, 1,
                        "Send links (one channel's connection to a peer) with a valid latency/bandwidth fit in the "
                        "window."},
    [F_LINK_BW_MIN] = {"ncclscope.link.bandwidth.min", "ncclscope_link_bandwidth_min_bytes_per_second", "By/s",
                       NS_MK_GAUGE, 0, "Bandwidth of the slowest fitted send link in the window."},
    [F_LINK_LAT_MAX] = {"ncclscope.link.latency.max", "ncclscope_link_latency_max_seconds", "s", NS_MK_GAUGE, 0,
                        "Largest latency of the fitted send links in the window."},
    [F_DURATION] = {"ncclscope.op.duration", "ncclscope_op_duration_seconds", "s", NS_MK_HISTOGRAM, 0,
                    "Operation time (GPU kernel interval where known, else execution or enqueue time)."},
    [F_LINK_LAT] = {"ncclscope.link.latency", "ncclscope_link_latency_seconds", "s", NS_MK_GAUGE, 0,
                    "Latency of the slowest fitted send links (NCCLSCOPE_TOP_LINKS), fastest transfer per size."},
    [F_LINK_BW] = {"ncclscope.link.bandwidth", "ncclscope_link_bandwidth_bytes_per_second", "By/s", NS_MK_GAUGE, 0,
                   "Bandwidth of the slowest fitted send links (NCCLSCOPE_TOP_LINKS)."},
    [F_ALGBW] = {"ncclscope.algbw", "ncclscope_algbw_bytes_per_second", "By/s", NS_MK_GAUGE, 0,
                 "Algorithm bandwidth in the window by function and size bucket (bytes rounded down to a power of "
                 "4), as nccl-tests computes it."},
    [F_BUSBW] = {"ncclscope.busbw", "ncclscope_busbw_bytes_per_second", "By/s", NS_MK_GAUGE, 0,
                 "Bus bandwidth in the window by function and size bucket, as nccl-tests computes it."},
    [F_TAG_OPS] = {"ncclscope.tag.ops", "ncclscope_tag_ops_total", "{op}", NS_MK_COUNTER, 1,
                   "Collective and point-to-point operations by the application's userTag (NCCL 2.31+): the first "
                   "NCCLSCOPE_TOP_TAGS tags of a communicator rank, every later one in tag=\"other\"."},
    [F_TAG_SECONDS] = {"ncclscope.tag.time", "ncclscope_tag_seconds_total", "s", NS_MK_COUNTER, 0,
                       "Time of those operations by userTag (the timed ones; a batched operation's time is its "
                       "batch's and is left out)."},
};

/* The families the budget gives up, the first to go first (metrics.h): detail, then what no dashboard panel
 * shows, then the dashboard's own series, its per-rank health last. Every other family is never refused. */
static const int g_refuse_order[] = {F_TAG_SECONDS, F_TAG_OPS,      F_ALGBW,       F_LINK_LAT,   F_LINK_BW,
                                     F_BUSBW,       F_OPS_GPU,      F_BYTES,       F_INCOMPLETE, F_LINKS_FITTED,
                                     F_DURATION,    F_LINK_LAT_MAX, F_LINK_BW_MIN, F_LATE_MAX,   F_LATE_LAST,
                                     F_LATE_N,      F_LATE_SUM,     F_CLOCK};
enum { N_REFUSABLE = sizeof g_refuse_order / sizeof g_refuse_order[0] };

/* Where f is in g_refuse_order; N_REFUSABLE: never refused. */
static size_t refuse_rank(int f) {
  size_t i = 0;
  while (i < N_REFUSABLE && g_refuse_order[i] != f) i++;
  return i;
}

int ns_mfamily_is_live(int f) {
  return f == F_UPDATED || f == F_OLDEST || f == F_HANGS || f == F_STUCK || f == F_POSTED || f == F_COMPLETED;
}

unsigned ns_mpoint_series(const ns_mdesc* d) { return d->kind == NS_MK_HISTOGRAM ? NS_HIST_BOUNDS + 3 : 1; }

double ns_metrics_bound_s(unsigned i) { return (double)ns_hist_bound_ns(i) / 1e9; }

static void res_init(ns_mres* r, uint32_t comm, uint64_t comm_id, int32_t rank, uint32_t nranks, const char* uuid,
                     const char* name) {
  memset(r, 0, sizeof *r);
  r->comm = comm;
  r->comm_id = comm_id;
  r->rank = rank;
  r->nranks = nranks;
  snprintf(r->uuid, sizeof r->uuid, "%s", uuid ? uuid : "");
  snprintf(r->name, sizeof r->name, "%s", name ? name : "");
  snprintf(r->comm_hex, sizeof r->comm_hex, "0x%016llx", (unsigned long long)comm_id);
  snprintf(r->rank_str, sizeof r->rank_str, "%d", rank);
}


ns_metrics* ns_metrics_new(const ns_metrics_config* cfg) {
  ns_metrics* m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->cfg = *cfg;
  m->start_unix_ns = cfg->start_unix_ns;
  for (int f = 0; f < F_COUNT; f++) m->fam[f].d = &g_desc[f];
  m->res = calloc(4, sizeof *m->res);
  if (!m->res) {
    free(m);
    return NULL;
  }
  m->capres = 4;
  m->nres = 1;
  res_init(&m->res[0], 0, 0, -1, 0, "", NULL);
  snprintf(m->res[0].rank_str, sizeof m->res[0].rank_str, "%u", cfg->pid); /* the process: its pid */
  /* the budget gauges exist before the first window: a file written on a watchdog's verdict has them */
  ns_mpoint_at(m, F_SERIES, 0, 0, NULL);
  ns_mpoint_at(m, F_REFUSED, 0, 0, NULL);
  ns_mbudget_values(m);
  return m;
}

void ns_metrics_free(ns_metrics* m) {
  if (!m) return;
  for (int f = 0; f < F_COUNT; f++) free(m->fam[f].p);
  free(m->res);
  free(m);
}

uint32_t ns_mres_of(ns_metrics* m, uint32_t comm) {
  for (size_t i = 1; i < m->nres; i++)
    if (m->res[i].comm == comm) return (uint32_t)i;
  ns_metrics_comm(m, comm, 0, -1, 0, "", NULL);
  for (size_t i = 1; i < m->nres; i++)
    if (m->res[i].comm == comm) return (uint32_t)i;
  return UINT32_MAX;
}

void ns_metrics_comm(ns_metrics* m, uint32_t comm, uint64_t comm_id, int32_t rank, uint32_t nranks,
                     const char* uuid, const char* name) {
  for (size_t i = 1; i < m->nres; i++)
    if (m->res[i].comm == comm) { /* a comm serial is never reused: an update (its live state stays) */
      ns_mres_live keep = m->res[i].live;
      res_init(&m->res[i], comm, comm_id, rank, nranks, uuid, name);
      m->res[i].live = keep;
      return;
    }
  if (m->nres == m->capres) {
    ns_mres* r = realloc(m->res, m->capres * 2 * sizeof *r);
    if (!r) return;
    m->res = r;
    m->capres *= 2;
  }
  res_init(&m->res[m->nres++], comm, comm_id, rank, nranks, uuid, name);
}

/* Whether cost more series of family f fit: made to, where needed, by giving
 * up the newest points of the families that go before f's (each counted as
 * refused); a family never refused always fits, beyond max_series if it must. */
static int make_room(ns_metrics* m, int f, unsigned cost) {
  size_t rank = refuse_rank(f);
  if (rank < N_REFUSABLE) { /* nothing is given up for a point that would not fit even then */
    uint64_t lower = 0;
    for (size_t i = 0; i < rank; i++) {
      const ns_mfamily* lo = &m->fam[g_refuse_order[i]];
      lower += lo->n * ns_mpoint_series(lo->d);
    }
    if ((uint64_t)m->series + m->reserved + cost > (uint64_t)m->cfg.max_series + lower) return 0;
  }
  for (size_t i = 0; i < rank && m->series + m->reserved + cost > m->cfg.max_series;) {
    ns_mfamily* gone = &m->fam[g_refuse_order[i]];
    if (!gone->n) {
      i++;
      continue;
    }
    gone->n--;
    m->series -= ns_mpoint_series(gone->d);
    m->refused += ns_mpoint_series(gone->d);
  }
  return rank == N_REFUSABLE || m->series + m->reserved + cost <= m->cfg.max_series;
}

/* The point of family f for (resource, labels): found, else created when the
 * budget allows (else NULL, counted as refused), or in a place held for it
 * (!budgeted). Labels: key/value pairs. */
ns_mpoint* ns_mpoint_in(ns_metrics* m, int f, uint32_t res, unsigned nlabels, const char* const* kv, int budgeted) {
  ns_mfamily* fam = &m->fam[f];
  if (res == UINT32_MAX) return NULL;
  for (size_t i = 0; i < fam->n; i++) {
    ns_mpoint* p = &fam->p[i];
    if (p->res != res || p->nlabels != nlabels) continue;
    unsigned k = 0;
    while (k < nlabels && strcmp(p->labels[k].val, kv[2 * k + 1]) == 0) k++;
    if (k == nlabels) return p;
  }
  unsigned cost = ns_mpoint_series(fam->d);
  if (budgeted && !make_room(m, f, cost)) {
    m->refused += cost;
    return NULL;
  }
  ns_mpoint* p;
  NS_ARRAY_PUSH(p, fam->p, fam->cap, fam->n, 8);
  if (!p) return NULL;
  p->res = res;
  p->nlabels = (uint8_t)nlabels;
  for (unsigned k = 0; k < nlabels && k < NS_M_LABELS; k++) {
    p->labels[k].key = kv[2 * k];
    snprintf(p->labels[k].val, sizeof p->labels[k].val, "%s", kv[2 * k + 1]);
  }
  m->series += cost;
  return p;
}

ns_mpoint* ns_mpoint_at(ns_metrics* m, int f, uint32_t res, unsigned nlabels, const char* const* kv) {
  return ns_mpoint_in(m, f, res, nlabels, kv, 1);
}

void ns_mset(ns_metrics* m, int f, uint32_t res, unsigned nl, const char* const* kv, double v) {
  ns_mpoint* p = ns_mpoint_at(m, f, res, nl, kv);
  if (p) p->value = v;
}

void ns_madd(ns_metrics* m, int f, uint32_t res, unsigned nl, const char* const* kv, double v) {
  ns_mpoint* p = ns_mpoint_at(m, f, res, nl, kv);
  if (p) p->value += v;
}

/* ---- the live series ---- */

/* Forgets the points of family f of resource res. */
static void drop_points(ns_metrics* m, int f, uint32_t res) {
  ns_mfamily* fam = &m->fam[f];
  size_t k = 0;
  for (size_t i = 0; i < fam->n; i++) {
    if (fam->p[i].res == res) {
      m->series -= ns_mpoint_series(fam->d);
      continue;
    }
    fam->p[k++] = fam->p[i];
  }
  fam->n = k;
}

static ns_mpoint* point_of(ns_metrics* m, int f, uint32_t res) {
  for (size_t i = 0; i < m->fam[f].n; i++)
    if (m->fam[f].p[i].res == res) return &m->fam[f].p[i];
  return NULL;
}

/* The budget gauges' values (their points are made with the model and at each window). */
void ns_mbudget_values(ns_metrics* m) {
  ns_mpoint* series = point_of(m, F_SERIES, 0);
  ns_mpoint* refused = point_of(m, F_REFUSED, 0);
  if (series) series->value = m->series;
  if (refused) refused->value = m->refused;
}

/* The live series from the resources' live state, never refused: per
 * communicator rank its oldest operation's age, its episodes, its posted and
 * completed sequence numbers and its stuck-operation series, whose place is
 * held while there is none (so that a hang takes no room from the rest). */
void ns_mlive_points(ns_metrics* m) {
  ns_mpoint* up = ns_mpoint_at(m, F_UPDATED, 0, 0, NULL);
  if (up) up->value = (double)ns_metrics_time_unix_ns(m) * 1e-9;
  m->reserved = 0;
  for (size_t r = 1; r < m->nres && m->cfg.live; r++) {
    ns_mres_live* lv = &m->res[r].live;
    uint32_t res = (uint32_t)r;
    if (!lv->known) continue;
    ns_mset(m, F_OLDEST, res, 0, NULL, lv->oldest_s);
    ns_mset(m, F_HANGS, res, 0, NULL, (double)lv->episodes);
    ns_mset(m, F_POSTED, res, 0, NULL, (double)lv->posted);
    ns_mset(m, F_COMPLETED, res, 0, NULL, (double)lv->completed);
    const char* kv[] = {"func", lv->func, "seq", lv->seq};
    ns_mpoint* stuck = point_of(m, F_STUCK, res);
    if (stuck && (!lv->stuck || strcmp(stuck->labels[0].val, lv->func) || strcmp(stuck->labels[1].val, lv->seq)))
      drop_points(m, F_STUCK, res); /* at most one per communicator rank: the current one */
    if (lv->stuck) {
      ns_mpoint* p = ns_mpoint_in(m, F_STUCK, res, 2, kv, 0);
      if (p) p->value = 1;
    }
    if (!point_of(m, F_STUCK, res)) m->reserved++;
  }
  make_room(m, F_STUCK, 0); /* the places held, for a communicator rank new here */
}

void ns_metrics_live(ns_metrics* m, const ns_mlive* v, size_t n) {
  for (size_t r = 1; r < m->nres; r++) {
    ns_mres_live* lv = &m->res[r].live;
    const ns_mlive* in = NULL;
    for (size_t i = 0; i < n && !in; i++)
      if (v[i].comm == m->res[r].comm) in = &v[i];
    if (!in) { /* ended: nothing in flight any more; its episodes stay counted */
      lv->oldest_s = 0;
      lv->stuck = 0;
      continue;
    }
    lv->known = 1;
    lv->oldest_s = in->oldest_s;
    if (in->episodes > lv->episodes) lv->episodes = in->episodes;
    lv->stuck = in->stuck;
    lv->posted = in->posted;
    lv->completed = in->completed;
    snprintf(lv->func, sizeof lv->func, "%s", in->stuck && in->func ? in->func : "");
    snprintf(lv->seq, sizeof lv->seq, "%llu", (unsigned long long)(in->stuck ? in->seq : 0));
  }
  ns_mlive_points(m);
  ns_mbudget_values(m);
}

/* The last-update gauge holds the time its points carry (ns_metrics_time_unix_ns): the stamp,
 * or the window's end where the trace clock's mapping puts that later. */
void ns_metrics_stamp(ns_metrics* m, uint64_t unix_ns) {
  m->time_unix_ns = unix_ns;
  ns_mpoint* up = point_of(m, F_UPDATED, 0);
  if (up) up->value = (double)ns_metrics_time_unix_ns(m) * 1e-9;
}


size_t ns_metrics_nfamilies(const ns_metrics* m) { (void)m; return F_COUNT; }
const ns_mfamily* ns_metrics_family(const ns_metrics* m, size_t i) { return i < F_COUNT ? &m->fam[i] : NULL; }
size_t ns_metrics_nres(const ns_metrics* m) { return m->nres; }
const ns_mres* ns_metrics_res(const ns_metrics* m, size_t i) { return i < m->nres ? &m->res[i] : NULL; }
uint64_t ns_metrics_windows(const ns_metrics* m) { return m->windows; }
uint64_t ns_metrics_window_index(const ns_metrics* m) { return m->window_index; }
uint64_t ns_metrics_start_unix_ns(const ns_metrics* m) { return m->start_unix_ns; }
uint64_t ns_metrics_end_unix_ns(const ns_metrics* m) { return m->end_unix_ns; }
uint64_t ns_metrics_win_start_unix_ns(const ns_metrics* m) { return m->win_start_unix_ns; }
uint64_t ns_metrics_time_unix_ns(const ns_metrics* m) {
  return m->time_unix_ns > m->end_unix_ns ? m->time_unix_ns : m->end_unix_ns;
}
uint32_t ns_metrics_series(const ns_metrics* m) { return m->series; }
uint32_t ns_metrics_refused(const ns_metrics* m) { return m->refused; }
