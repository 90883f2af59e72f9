/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's metric outputs (metrics_out.h): the model
 * and when each output is written; the files and the sender are src/sinks'
 * (windows_file.h, prom_file.h, sender.h).
 *
 * Windows close inside the analysis while records are fed (during a ring's
 * drain), so ns_mout_window only folds the window into the model and keeps
 * its windows.jsonl line; the files are written and the OTLP payload queued
 * by ns_mout_flush after the drain. ns_mout_live, also after the drain, takes
 * the flight recorder's operations in flight into the model when a window
 * closed, a watchdog verdict came or a window's length passed: so the
 * textfile and OTLP are written at least that often even when no window
 * closes (no operation starts while the application hangs). Cost: a few KiB
 * encoded per write (at most NCCLSCOPE_MAX_SERIES series), two small file
 * writes; nothing per record. */
#include "writer/metrics_out.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "log/log.h"
#include "session/session.h"
#include "sinks/metrics.h"
#include "sinks/outputs.h"
#include "sinks/prom_file.h"
#include "sinks/sender.h"
#include "sinks/sink_buf.h"
#include "sinks/windows_file.h"
#include "util/safefile.h"
#include "writer/detail.h"
#include "writer/flightrec_run.h"
#include "writer/trace_out.h"

static struct {
  ns_metrics* m;
  ns_mprocess proc;
  char exe[NAME_MAX + 1];   /* the executable's name, for the OTLP resource */
  int64_t unix_minus_trace; /* wall clock - trace clock (ns) */
  uint64_t live_at;         /* trace time of the last ns_mout_live update */
  ns_mlive* live;           /* NS_MAX_CONTEXTS entries, NULL: no live series */
  ns_fr_inflight* inflight; /* NS_MAX_CONTEXTS entries */
  int pending;              /* windows folded or live series taken since the last flush */
  ns_windows_file windows;  /* windows.jsonl */
  ns_prom_file prom;        /* the textfile in NCCLSCOPE_PROM_DIR */
  int closing;              /* ns_mout_close: the .prom file goes, not a new version */
  ns_sender* otlp;          /* NULL: no OTLP */
  ns_buf payload;           /* the OTLP request being encoded (handed to the sender) */
  uint64_t detail_at, detail_full_ns; /* trace time and full-detail time at the last window (0: none yet) */
} M = {.windows = {.fd = -1}, .prom = {.dirfd = -1}, .payload = {.limit = NS_SINK_BUF_LIMIT}};

/* read (and a bad value warned about) with the configuration */
static int local_rank(void) { return ns_sess.cfg.otel.local_rank; }

static void open_files(void) {
  unsigned mode = ns_sess.cfg.file_mode ? ns_sess.cfg.file_mode : NS_FILE_MODE_DEFAULT;
  char stem[NAME_MAX + 1];
  ns_trace_out_stem("windows", stem, sizeof stem);
  /* the trace's suffix; another only when that name is taken (never an existing file) */
  ns_windows_file_open(&M.windows, ns_trace_out_dirfd(), ns_sess.cfg.dump_dir, stem, mode, ns_mono_ns());
  char prom_stem[NAME_MAX + 1 - sizeof ".prom" + 1];
  ns_trace_out_stem("ncclscope", prom_stem, sizeof prom_stem); /* the trace's name: one per process */
  ns_prom_file_open(&M.prom, ns_sess.cfg.prom_dir, prom_stem);
}

void ns_mout_open(void) {
  struct timespec rt, mono;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t trace_now = ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks());
  clock_gettime(CLOCK_MONOTONIC, &mono);
  (void)mono;
  M.unix_minus_trace = ((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec) - (int64_t)trace_now;
  if (ns_frw_running()) {
    M.live = calloc(NS_MAX_CONTEXTS, sizeof *M.live);
    M.inflight = calloc(NS_MAX_CONTEXTS, sizeof *M.inflight);
    if (!M.live || !M.inflight) {
      free(M.live);
      free(M.inflight);
      M.live = NULL;
      M.inflight = NULL;
    }
  }
  ns_metrics_config mc = {.max_series = ns_sess.cfg.max_series ? ns_sess.cfg.max_series : NS_MAX_SERIES_DEFAULT,
                          .top_links = ns_sess.cfg.top_links,
                          .top_tags = ns_sess.cfg.top_tags,
                          .pid = ns_sess.pid,
                          .start_unix_ns = (uint64_t)((int64_t)trace_now + M.unix_minus_trace),
                          .live = M.live != NULL};
  M.m = ns_metrics_new(&mc);
  if (!M.m) {
    ns_log_warn("no memory for the metrics: no windows exported from this process");
    return;
  }
  /* process.executable.name: the base name of /proc/self/exe's target */
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k > 0) {
    exe[k] = 0;
    const char* base = strrchr(exe, '/');
    snprintf(M.exe, sizeof M.exe, "%.*s", (int)(sizeof M.exe - 1), base ? base + 1 : exe);
  }
  const ns_otel_config* oc = &ns_sess.cfg.otel;
  const ns_job_identity* job = &ns_sess.cfg.job;
  M.proc = (ns_mprocess){.host = ns_sess.hostname,
                         .pid = ns_sess.pid,
                         .service_name = oc->service_name,
                         .job_id = job->id[0] ? job->id : NULL,
                         .slurm_job = job->slurm_job[0] ? job->slurm_job : NULL,
                         .executable = M.exe[0] ? M.exe : NULL,
                         .local_rank = local_rank(),
                         .nattrs = oc->nattrs,
                         .attr_key = oc->attr_key,
                         .attr_val = oc->attr_val,
                         .version = NCCLSCOPE_VERSION};
  open_files();
  if (oc->enabled) {
    const char* headers[NS_OTEL_HEADERS_MAX];
    for (unsigned i = 0; i < oc->nheaders; i++) headers[i] = oc->header[i];
    ns_sender_config sc = {.url = oc->url,
                           .headers = headers,
                           .nheaders = oc->nheaders,
                           .json = oc->protocol == NS_OTLP_JSON,
                           .gzip = oc->gzip,
                           .timeout_ms = oc->timeout_ms};
    M.otlp = ns_sender_start(&sc);
    if (M.otlp)
      ns_log_info("OTLP metrics to %s (%s%s) every window", oc->url_shown,
                  oc->protocol == NS_OTLP_JSON ? "http/json" : "http/protobuf", oc->gzip ? ", gzip" : "");
  }
}

void ns_mout_comm(uint32_t serial, uint64_t comm_id, int32_t rank, uint32_t nranks, const char* uuid,
                  const char* name) {
  if (M.m) ns_metrics_comm(M.m, serial, comm_id, rank, nranks, uuid, name);
}

void ns_mout_window(const ns_window* w, const ns_mout_losses* lost) {
  if (!M.m) return;
  ns_mwindow in = {.w = w,
                   .start_unix_ns = (uint64_t)((int64_t)w->start_ns + M.unix_minus_trace),
                   .dropped_ring = lost->ring,
                   .closed = lost->closed,
                   .steps_unanalysed = w->steps_unanalysed,
                   .dropped_comm = lost->comm,
                   .comm_dropped = lost->comm_dropped,
                   .ncomm_dropped = lost->ncomms};
  /* the window's end, or now for the last one, open-ended */
  uint64_t end = w->end_ns != UINT64_MAX ? w->end_ns : ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks());
  in.end_unix_ns = (uint64_t)((int64_t)end + M.unix_minus_trace);
  ns_sender_stats(M.otlp, &in.otlp_ok, &in.otlp_failed, &in.otlp_dropped);
  /* the share of full detail since the last window was written */
  ns_detail_counts dc;
  uint64_t now = ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks());
  ns_detail_counts_get(&dc, now);
  if (!M.detail_at) M.detail_at = w->start_ns;
  in.detail_level = ns_detail_name(ns_detail_configured());
  in.detail_escalations = dc.escalations;
  if (now > M.detail_at) in.detail_full_ratio = (double)(dc.full_ns - M.detail_full_ns) / (double)(now - M.detail_at);
  if (in.detail_full_ratio > 1) in.detail_full_ratio = 1;
  M.detail_at = now;
  M.detail_full_ns = dc.full_ns;
  ns_metrics_window(M.m, &in);
  if (M.windows.fd >= 0) {
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    ns_metrics_stamp(M.m, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec); /* the line's own time */
    ns_windows_file_add(&M.windows, M.m, &M.proc);
  }
  M.pending = 1;
}

/* The textfile, or at a clean end its removal (prom_file.h). */
static void write_prom(void) {
  if (M.closing && !ns_sess.cfg.prom_keep)
    ns_prom_file_close(&M.prom, 1, ns_sess.pid);
  else
    ns_prom_file_write(&M.prom, M.m, &M.proc);
}

void ns_mout_live(uint64_t now_ns, int verdicts) {
  if (!M.m || !M.live) return;
  double every_s = ns_sess.cfg.window_sec > 0 ? ns_sess.cfg.window_sec : NS_WINDOW_SEC_DEFAULT;
  if (!verdicts && !M.pending && M.live_at && now_ns - M.live_at < (uint64_t)(every_s * 1e9)) return;
  M.live_at = now_ns ? now_ns : 1;
  size_t n = ns_frw_inflight(now_ns, M.inflight, NS_MAX_CONTEXTS);
  for (size_t i = 0; i < n; i++) {
    const ns_fr_inflight* f = &M.inflight[i];
    M.live[i] = (ns_mlive){.comm = f->comm,
                           .oldest_s = (double)f->age_ns * 1e-9,
                           .episodes = f->episodes,
                           .stuck = f->stuck,
                           .func = f->func,
                           .seq = f->seq,
                           .posted = f->posted,
                           .completed = f->completed};
  }
  ns_metrics_live(M.m, M.live, n);
  M.pending = 1;
}

void ns_mout_flush(void) {
  if (!M.m || !M.pending) return;
  M.pending = 0;
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  ns_metrics_stamp(M.m, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
  ns_windows_file_flush(&M.windows);
  write_prom();
  if (M.otlp) {
    ns_buf_reset(&M.payload);
    if (ns_sess.cfg.otel.protocol == NS_OTLP_JSON) ns_otlp_json(M.m, &M.proc, &M.payload);
    else ns_otlp_proto(M.m, &M.proc, &M.payload);
    ns_sender_submit(M.otlp, &M.payload);
  }
}

void ns_mout_close(void) {
  M.closing = 1;
  M.pending = 1; /* the .prom file goes even when no window closed since the last write */
  ns_mout_flush();
  ns_sender_stop(M.otlp); /* joined here, on the writer thread, before the last finalize returns */
  ns_buf_free(&M.payload);
  ns_windows_file_close(&M.windows);
  ns_prom_file_close(&M.prom, 0, ns_sess.pid);
  ns_metrics_free(M.m);
  free(M.live);
  free(M.inflight);
  memset(&M, 0, sizeof M);
  M.windows.fd = M.prom.dirfd = -1;
  M.payload.limit = NS_SINK_BUF_LIMIT; /* as the initializer: a reload's buffers stay bounded */
}
