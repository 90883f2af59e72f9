/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: what one closed window adds to the metrics model
 * (ns_metrics_window, metrics.h), family by family: what the budget never
 * refuses first, then the rest in the reverse of the order it gives them up.
 * Writer thread only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclscope/record.h"
#include "sinks/metrics_model.h"

static const char* op_type(uint8_t type) { return type == NS_EV_P2P ? "p2p" : "coll"; }

/* Gauges are the last window's: forget them; counters and histograms stay. */
static void begin(ns_metrics* m) {
  m->series = 0;
  m->refused = 0;
  for (int f = 0; f < F_COUNT; f++) {
    ns_mfamily* fam = &m->fam[f];
    if (fam->d->kind == NS_MK_GAUGE && !ns_mfamily_is_live(f)) fam->n = 0;
    for (size_t i = 0; i < fam->n; i++) m->series += ns_mpoint_series(fam->d);
  }
}

static void process_counters(ns_metrics* m, const ns_mwindow* in) {
  ns_madd(m, F_WINDOWS, 0, 0, NULL, 1);
  const char* ring[] = {"reason", "ring"};
  ns_mset(m, F_DROPPED, 0, 1, ring, (double)in->dropped_ring);
  for (unsigned r = 1; in->closed && r < NS_CLOSE_REASONS; r++) {
    const char* name = ns_close_reason_name(r);
    const char* kv[] = {"reason", name ? name : "unknown"};
    if (in->closed[r]) ns_mset(m, F_CLOSED, 0, 1, kv, (double)in->closed[r]);
  }
  if (in->steps_unanalysed) ns_mset(m, F_UNANALYSED, 0, 0, NULL, (double)in->steps_unanalysed);
  if (in->otlp_ok || in->otlp_failed || in->otlp_dropped || m->fam[F_OTLP_REQ].n) {
    const char* ok[] = {"result", "ok"};
    const char* failed[] = {"result", "failed"};
    ns_mset(m, F_OTLP_REQ, 0, 1, ok, (double)in->otlp_ok);
    ns_mset(m, F_OTLP_REQ, 0, 1, failed, (double)in->otlp_failed);
    ns_mset(m, F_OTLP_DROPPED, 0, 0, NULL, (double)in->otlp_dropped);
  }
  if (in->detail_level) {
    const char* kv[] = {"level", in->detail_level};
    ns_mset(m, F_DETAIL_FULL, 0, 1, kv, in->detail_full_ratio);
    ns_mset(m, F_DETAIL_ESC, 0, 0, NULL, (double)in->detail_escalations);
  }
}

static uint64_t comm_dropped(const ns_mwindow* in, uint32_t comm) {
  for (size_t i = 0; i < in->ncomm_dropped; i++)
    if (in->dropped_comm[i] == comm) return in->comm_dropped[i];
  return 0;
}

/* The comm's GPU clock error bound in seconds; NaN: none, or unbounded. */
static double clock_error_s(const ns_window* w, uint32_t comm) {
  for (size_t i = 0; w && i < w->n_clocks; i++) {
    const ns_clock_fit* f = &w->clocks[i].fit;
    if (w->clocks[i].comm == comm) return f->bounded && isfinite(f->error_ns) ? f->error_ns * 1e-9 : NAN;
  }
  return NAN;
}

/* Per communicator rank: its starts lost to a full ring. */
static void comm_drops(ns_metrics* m, const ns_mwindow* in) {
  for (size_t r = 1; in->comm_dropped && r < m->nres; r++) {
    const char* ring[] = {"reason", "ring"};
    ns_mset(m, F_DROPPED, (uint32_t)r, 1, ring, (double)comm_dropped(in, m->res[r].comm));
  }
}

/* Per communicator rank: its GPU clock's error bound. */
static void clock_errors(ns_metrics* m, const ns_mwindow* in) {
  for (size_t r = 1; r < m->nres; r++) {
    double err = clock_error_s(in->w, m->res[r].comm);
    if (isfinite(err)) ns_mset(m, F_CLOCK, (uint32_t)r, 0, NULL, err);
  }
}

/* By function, family f: operations (F_OPS), their bytes (F_BYTES), those timed by the GPU (F_OPS_GPU). */
static void comm_counts(ns_metrics* m, const ns_window* w, int f) {
  for (size_t i = 0; w && i < w->n_funcs; i++) {
    const ns_func_stats* s = &w->funcs[i];
    const char* kv[] = {"type", op_type(s->type), "func", ns_func_name(s->func)};
    double v = f == F_OPS ? (double)s->ops : f == F_BYTES ? (double)s->bytes : (double)s->gpu_timed;
    ns_madd(m, f, ns_mres_of(m, s->comm), 2, kv, v);
  }
}

/* Per communicator rank: operations never completed. */
static void comm_incomplete(ns_metrics* m, const ns_window* w) {
  for (size_t r = 1; r < m->nres; r++) {
    uint64_t inc = 0;
    for (size_t i = 0; w && i < w->n_funcs; i++)
      if (w->funcs[i].comm == m->res[r].comm) inc += w->funcs[i].incomplete;
    ns_madd(m, F_INCOMPLETE, (uint32_t)r, 0, NULL, (double)inc);
  }
}

/* Family f: the sum of lateness (F_LATE_SUM), collectives compared (F_LATE_N), reached last (F_LATE_LAST), the
 * largest lateness (F_LATE_MAX). */
static void lateness(ns_metrics* m, const ns_window* w, int f) {
  for (size_t i = 0; w && i < w->n_lateness; i++) {
    const ns_lateness_stats* l = &w->lateness[i];
    uint32_t res = ns_mres_of(m, l->comm);
    if (f == F_LATE_SUM)
      ns_madd(m, f, res, 0, NULL, (double)l->lateness_ns_sum * 1e-9);
    else if (f == F_LATE_N)
      ns_madd(m, f, res, 0, NULL, (double)l->compared);
    else if (f == F_LATE_LAST)
      ns_madd(m, f, res, 0, NULL, (double)l->last);
    else if (l->compared)
      ns_mset(m, f, res, 0, NULL, (double)l->lateness_ns_max * 1e-9);
  }
}

/* A link row that estimates a link: one channel's send connection with a valid MIN fit. */
static int fitted_send(const ns_link_stats* l) {
  return l->is_send && l->channel >= 0 && l->nofit == NS_LINK_FIT && l->min.ok && l->min.bandwidth_gbs > 0;
}

static int by_bandwidth(const void* x, const void* y) {
  const ns_link_stats* a = *(const ns_link_stats* const*)x;
  const ns_link_stats* b = *(const ns_link_stats* const*)y;
  if (a->min.bandwidth_gbs != b->min.bandwidth_gbs) return a->min.bandwidth_gbs < b->min.bandwidth_gbs ? -1 : 1;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->peer != b->peer) return a->peer < b->peer ? -1 : 1;
  return a->channel < b->channel ? -1 : a->channel > b->channel;
}

/* Family f: per communicator rank, its fitted send links (F_LINKS_FITTED), the slowest one's bandwidth
 * (F_LINK_BW_MIN), the largest latency (F_LINK_LAT_MAX). */
static void link_aggregates(ns_metrics* m, const ns_window* w, int f) {
  for (size_t r = 1; w && r < m->nres; r++) {
    uint64_t n = 0;
    double bw = INFINITY, lat = 0;
    for (size_t i = 0; i < w->n_links; i++) {
      const ns_link_stats* l = &w->links[i];
      if (l->comm != m->res[r].comm || !fitted_send(l)) continue;
      n++;
      if (l->min.bandwidth_gbs < bw) bw = l->min.bandwidth_gbs;
      if (l->min.latency_us > lat) lat = l->min.latency_us;
    }
    if (!n) continue;
    double v = f == F_LINKS_FITTED ? (double)n : f == F_LINK_BW_MIN ? bw * 1e9 : lat * 1e-6;
    ns_mset(m, f, (uint32_t)r, 0, NULL, v);
  }
}

static void histograms(ns_metrics* m, const ns_window* w) {
  for (size_t i = 0; w && i < w->n_funcs; i++) {
    const ns_func_stats* f = &w->funcs[i];
    if (!f->timed) continue;
    const char* kv[] = {"type", op_type(f->type), "func", ns_func_name(f->func)};
    ns_mpoint* p = ns_mpoint_at(m, F_DURATION, ns_mres_of(m, f->comm), 2, kv);
    if (!p) continue;
    p->count += f->timed;
    p->sum += (double)f->dur_ns_sum * 1e-9;
    for (unsigned b = 0; b <= NS_HIST_BOUNDS; b++) p->buckets[b] += f->hist[b];
  }
}

/* Family f: the slowest links' bandwidth (F_LINK_BW) or latency (F_LINK_LAT). */
static void top_links(ns_metrics* m, const ns_window* w, int f) {
  if (!w || !w->n_links || !m->cfg.top_links) return;
  const ns_link_stats** rank = malloc(w->n_links * sizeof *rank);
  if (!rank) return;
  size_t n = 0;
  for (size_t i = 0; i < w->n_links; i++)
    if (fitted_send(&w->links[i])) rank[n++] = &w->links[i];
  qsort(rank, n, sizeof *rank, by_bandwidth);
  for (size_t i = 0; i < n && i < m->cfg.top_links; i++) {
    char peer[16], ch[16];
    snprintf(peer, sizeof peer, "%d", rank[i]->peer);
    snprintf(ch, sizeof ch, "%d", rank[i]->channel);
    const char* kv[] = {"peer", peer, "channel", ch};
    uint32_t res = ns_mres_of(m, rank[i]->comm);
    if (f == F_LINK_LAT)
      ns_mset(m, f, res, 2, kv, rank[i]->min.latency_us * 1e-6);
    else
      ns_mset(m, f, res, 2, kv, rank[i]->min.bandwidth_gbs * 1e9);
  }
  free(rank);
}

/* The window's buckets are per (comm, func, algo, proto, size, ops per batch, timing): bandwidth per (comm,
 * func, size, timing), family f: F_BUSBW or F_ALGBW. timing "gpu": from the GPU's timers, "cpu": from the CPU
 * (execution or enqueue time, where the operation had no full detail); never mixed. */
static void bandwidth(ns_metrics* m, const ns_window* w, int f) {
  for (size_t i = 0; w && i < w->n_buckets; i++) {
    const ns_bucket_stats* b = &w->buckets[i];
    int done = 0;
    for (size_t j = 0; j < i && !done; j++)
      done = w->buckets[j].comm == b->comm && w->buckets[j].func == b->func &&
             w->buckets[j].size_bucket == b->size_bucket && w->buckets[j].gpu == b->gpu;
    if (done || !b->size_bucket) continue;
    double bytes = 0, dur_us = 0, factor = 0;
    for (size_t j = i; j < w->n_buckets; j++) {
      const ns_bucket_stats* c = &w->buckets[j];
      if (c->comm != b->comm || c->func != b->func || c->size_bucket != b->size_bucket || c->gpu != b->gpu) continue;
      bytes += (double)c->bytes;
      dur_us += c->mean_us * (double)c->count;
      if (c->algbw_gbs > 0) factor = c->busbw_gbs / c->algbw_gbs;
    }
    if (!(dur_us > 0) || !(bytes > 0)) continue;
    char size[24];
    snprintf(size, sizeof size, "%llu", (unsigned long long)b->size_bucket);
    const char* kv[] = {"func", ns_func_name(b->func), "size", size, "timing", b->gpu ? "gpu" : "cpu"};
    uint32_t res = ns_mres_of(m, b->comm);
    double algbw = bytes / (dur_us * 1e-6);
    if (f == F_ALGBW) ns_mset(m, F_ALGBW, res, 3, kv, algbw);
    else if (factor > 0) ns_mset(m, F_BUSBW, res, 3, kv, algbw * factor);
  }
}

static int by_comm_then_ops(const void* x, const void* y) {
  const ns_tag_stats* a = *(const ns_tag_stats* const*)x;
  const ns_tag_stats* b = *(const ns_tag_stats* const*)y;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->ops != b->ops) return a->ops > b->ops ? -1 : 1;
  return a->tag < b->tag ? -1 : a->tag > b->tag;
}

static int tag_kept(const ns_mres* r, uint64_t tag) {
  for (uint32_t i = 0; i < r->ntags; i++)
    if (r->tags[i] == tag) return 1;
  return 0;
}

/* Gives the window's new userTags series of their own while their communicator rank has fewer than top_tags: the
 * busiest first. A tag once given one keeps it (metrics.h). */
static void admit_tags(ns_metrics* m, const ns_window* w) {
  uint32_t top = m->cfg.top_tags < NS_M_TAGS ? m->cfg.top_tags : NS_M_TAGS;
  if (!w || !w->n_tags || !top) return;
  const ns_tag_stats** rows = malloc(w->n_tags * sizeof *rows);
  if (!rows) return; /* this window's new tags count in "other" */
  for (size_t i = 0; i < w->n_tags; i++) rows[i] = &w->tags[i];
  qsort(rows, w->n_tags, sizeof *rows, by_comm_then_ops);
  for (size_t i = 0; i < w->n_tags; i++) {
    if (rows[i]->other) continue;
    uint32_t res = ns_mres_of(m, rows[i]->comm);
    if (res == UINT32_MAX) continue;
    ns_mres* r = &m->res[res];
    if (r->ntags < top && !tag_kept(r, rows[i]->tag)) r->tags[r->ntags++] = rows[i]->tag;
  }
  free(rows);
}

/* Family f: per communicator rank and userTag, the operations (F_TAG_OPS) or their time (F_TAG_SECONDS). */
static void tag_counts(ns_metrics* m, const ns_window* w, int f) {
  for (size_t i = 0; w && i < w->n_tags; i++) {
    const ns_tag_stats* t = &w->tags[i];
    uint32_t res = ns_mres_of(m, t->comm);
    if (res == UINT32_MAX) continue;
    char tag[24] = "other";
    if (!t->other && tag_kept(&m->res[res], t->tag)) snprintf(tag, sizeof tag, "%llu", (unsigned long long)t->tag);
    const char* kv[] = {"tag", tag};
    ns_madd(m, f, res, 1, kv, f == F_TAG_OPS ? (double)t->ops : (double)t->dur_ns_sum * 1e-9);
  }
}

void ns_metrics_window(ns_metrics* m, const ns_mwindow* in) {
  begin(m);
  /* the two budget gauges first, so that they always fit; their values last */
  ns_mpoint_at(m, F_SERIES, 0, 0, NULL);
  ns_mpoint_at(m, F_REFUSED, 0, 0, NULL);
  /* then what is never refused, and the rest in the reverse of the order the budget gives it up (metrics.h) */
  ns_mlive_points(m);
  process_counters(m, in);
  comm_drops(m, in);
  comm_counts(m, in->w, F_OPS);
  clock_errors(m, in);
  lateness(m, in->w, F_LATE_SUM);
  lateness(m, in->w, F_LATE_N);
  lateness(m, in->w, F_LATE_LAST);
  lateness(m, in->w, F_LATE_MAX);
  link_aggregates(m, in->w, F_LINK_BW_MIN);
  link_aggregates(m, in->w, F_LINK_LAT_MAX);
  histograms(m, in->w);
  link_aggregates(m, in->w, F_LINKS_FITTED);
  comm_incomplete(m, in->w);
  comm_counts(m, in->w, F_BYTES);
  comm_counts(m, in->w, F_OPS_GPU);
  bandwidth(m, in->w, F_BUSBW);
  top_links(m, in->w, F_LINK_BW);
  top_links(m, in->w, F_LINK_LAT);
  bandwidth(m, in->w, F_ALGBW);
  admit_tags(m, in->w);
  tag_counts(m, in->w, F_TAG_OPS);
  tag_counts(m, in->w, F_TAG_SECONDS);
  ns_mbudget_values(m);
  m->windows++;
  m->window_index = in->w ? in->w->index : m->window_index;
  m->win_start_unix_ns = in->start_unix_ns;
  m->end_unix_ns = in->end_unix_ns;
}
