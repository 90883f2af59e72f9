/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: feeding the writer's records into the tracker (tracker.h),
 * whose events the analysis library, the flight recorder (flightrec_run.c)
 * and the open events (open_events.h) follow.
 *
 * The writer thread owns the one per-process ns_analysis: nothing here runs
 * on NCCL's threads. It sees exactly the records written to the trace, in
 * the same order, so the plugin's numbers and `ncclscope report` on the
 * trace agree (up to what the CLI merges across processes). */
#include "writer/analysis_feed.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "ncclscope/analysis.h"
#include "clock/clock.h"
#include "log/log.h"
#include "session/session.h"
#include "sinks/summary_file.h"
#include "writer/counters.h"
#include "writer/detail.h"
#include "writer/flightrec_run.h"
#include "writer/metrics_out.h"
#include "writer/open_events.h"
#include "writer/trace_out.h"
#include "writer/tracker.h"

static ns_analysis* g_a; /* writer thread only */
static uint64_t g_now;   /* the last tick's time */
static ns_fr_inflight g_inflight[NS_MAX_CONTEXTS];

static const char* strtab_string(void* user, uint32_t id) { return ns_strtab_str(user, id); }

static void on_window(void* user, const ns_window* w) {
  (void)user;
  static uint64_t closed[NS_CLOSE_REASONS];
  static uint32_t comm[NS_MAX_CONTEXTS];
  static uint64_t comm_dropped[NS_MAX_CONTEXTS];
  ns_mout_losses lost = {.closed = closed, .comm = comm, .comm_dropped = comm_dropped};
  ns_writer_drops(&lost.ring, closed);
  lost.ncomms = ns_writer_comm_drops(comm, comm_dropped);
  ns_detail_window(w, g_now);
  ns_mout_window(w, &lost);
}

void ns_feed_open(const ns_strtab* strings) {
  g_a = NULL;
  size_t analysis_bytes = ns_sess.cfg.analysis ? ns_analysis_event_bytes() : 0;
  if (ns_tracker_open(analysis_bytes, ns_fr_event_bytes(), ns_open_event_bytes()) != 0) {
    ns_log_warn("no memory for the event tracker; no analysis, hang detection or closing of open events");
    return;
  }
  ns_asm_sink sink;
  ns_open_attach(ns_tracker(), ns_tracker_area_open(), &sink);
  ns_tracker_follow_open(&sink);
  ns_frw_open(strings);
  if (!ns_sess.cfg.analysis) return;
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.window_sec = ns_sess.cfg.window_sec; /* validated by src/config */
  cfg.window_ops = ns_sess.cfg.window_ops;
  cfg.string = strtab_string;
  cfg.string_user = (void*)(uintptr_t)strings;
  cfg.on_window = on_window;
  g_a = ns_analysis_create_on(&cfg, ns_tracker(), &sink);
  if (!g_a) {
    ns_log_warn("no memory for the analysis; no clock fit or summary from this process");
    return;
  }
  ns_tracker_follow_analysis(&sink);
  ns_mout_open();
}

int ns_feed_enabled(void) { return g_a != NULL; }

void ns_feed_comm(const ns_context* c) {
  ns_comm_info ci = ns_comm_info_make(c->serial, c->comm_id, c->rank, (uint32_t)(c->nranks < 0 ? 0 : c->nranks));
  ci.nnodes = (uint32_t)(c->nnodes < 0 ? 0 : c->nnodes);
  ci.has_name = c->has_name;
  if (c->has_name) snprintf(ci.comm_name, sizeof ci.comm_name, "%s", c->name);
  ci.abi_version = (uint32_t)c->abi_version;
  ci.event_mask = c->mask;
  snprintf(ci.gpu_uuid, sizeof ci.gpu_uuid, "%s", c->gpu_uuid);
  ci.ts = ns_clock_to_ns(&ns_sess.clock, c->init_tick);
  ci.tid = c->init_tid;
  ci.ctx_addr = (uint64_t)(uintptr_t)c;
  ns_tracker_comm(ci.comm, ci.event_mask, ci.abi_version, ci.rank);
  ns_frw_comm(&ci);
  if (!g_a) return;
  ns_analysis_comm(g_a, &ci);
  ns_mout_comm(ci.comm, ci.comm_id, ci.rank, ci.nranks, ci.gpu_uuid, ci.has_name ? ci.comm_name : NULL);
}

void ns_feed_comm_end(uint32_t comm) { ns_frw_comm_end(comm); }

void ns_feed_record(const ns_record* r, int analysed) {
  ns_tracker_record(r, analysed);
  if (!g_a) return;
  if (analysed)
    ns_analysis_fed(g_a, r);
  else
    ns_analysis_unanalysed(g_a, r);
}

void ns_feed_tick(uint64_t now_ns) {
  g_now = now_ns;
  ns_tracker_advance(now_ns);
  int on_request = 0;
  int verdicts = ns_frw_tick(now_ns, &on_request);
  if (on_request) ns_detail_escalate(NS_DETAIL_WHY_SIGNAL, now_ns, "a flight record was asked for");
  /* The oldest operation in flight, for the detail control: suspect when
   * something of it runs (ProxyOps, KernelCh) and it is not the first of its
   * communicator (which connects the transports and takes long). One
   * without children is NCCL's without kernel work, or one without detail
   * that nothing can show stuck (the flight recorder ends it soon). */
  size_t n = ns_frw_inflight(now_ns, g_inflight, NS_MAX_CONTEXTS);
  for (size_t i = 0; i < n; i++)
    if (!g_inflight[i].first && g_inflight[i].children)
      ns_detail_inflight(g_inflight[i].age_ns, g_inflight[i].comm, now_ns);
  if (!g_a) return;
  ns_analysis_tick(g_a, now_ns);
  ns_mout_live(now_ns, verdicts);
  ns_mout_flush();
}

void ns_feed_detail(int full, uint64_t now_ns) { ns_frw_detail(full, now_ns); }

int ns_feed_clockfit(ns_buf* out, uint64_t* seq, uint32_t comm, int force, uint64_t* last_samples) {
  ns_clock_fit f;
  if (!g_a || !comm || !ns_analysis_clock_fit(g_a, comm, &f)) return 0;
  if (!f.bounded || !isfinite(f.error_ns)) return 0;
  if (!force && f.samples == *last_samples) return 0;
  *last_samples = f.samples;
  size_t at = ns_block_begin(out);
  ns_props_u64(out, NS_P_COMM, comm);
  /* The line's reference point (trace clock): offset_ns is gpu - ts there. */
  ns_props_u64(out, NS_P_TS, f.ref_cpu_ns);
  /* The offset is an f64 in the format: near 1e18 ns its rounding is up to
   * 128 ns, which the published bound includes. */
  double off = (double)f.offset_ns;
  double rounding = fabs(off) < 9e18 ? fabs((double)(f.offset_ns - (int64_t)off)) : 0;
  ns_props_f64(out, NS_P_GPU_OFFSET_NS, off);
  ns_props_f64(out, NS_P_GPU_DRIFT_PPM, f.drift_ppm);
  ns_props_f64(out, NS_P_GPU_ERROR_NS, f.error_ns + rounding);
  ns_props_u64(out, NS_P_GPU_SAMPLES, f.samples);
  ns_block_end(out, at, NS_BLOCK_CLOCKFIT, (*seq)++);
  return 1;
}

void ns_feed_finish(void) {
  ns_frw_close();
  if (g_a) {
    ns_analysis_flush(g_a);
    ns_mout_close();
    char stem[NAME_MAX + 1];
    ns_trace_out_stem("summary", stem, sizeof stem);
    ns_summary_recording rec;
    ns_writer_recording(&rec);
    ns_summary_file_write(g_a, &rec, ns_trace_out_dirfd(), ns_sess.cfg.dump_dir, stem, ns_sess.cfg.file_mode);
  }
  ns_feed_close(); /* with or without the analysis: the tracker's memory */
}

void ns_feed_close(void) {
  ns_frw_close();
  if (g_a) ns_mout_close();
  ns_tracker_follow_analysis(NULL);
  ns_analysis_destroy(g_a);
  g_a = NULL;
  ns_asm_sink none;
  ns_open_attach(NULL, 0, &none); /* the open events hold nothing more */
  ns_tracker_close();
}
