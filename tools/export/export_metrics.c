/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: derived metrics in the export (see export_metrics.h).
 *
 * Ordering. The walker writes a Coll/P2p as soon as its children are done,
 * but the analysis only finalizes an op a grace period later, and a GPU
 * clock fit made from the samples seen so far is looser than one made from
 * the whole file. So the extension works in two passes per trace file: when
 * the walker starts a file (its first item), the whole file is first run
 * through an ns_analysis (trace_analysis.c), which keeps only its bounded
 * state: the GPU clock fit per communicator, aggregates, nothing per op.
 * During the walk every field is then computed at the moment its line is
 * written, from the walker's own bookkeeping of the event (execStop and the
 * KernelCh pTimer interval of a Coll/P2p, held by the walker until its
 * children are done) and the final clock fit.
 *
 * One source of truth: `execStop` is the walker's (the latest ProxyOp or
 * KernelCh stop, as the analysis defines it); the duration basis and the
 * nccl-tests formulas are the analysis library's (ns_op_duration,
 * ns_coll_bytes, ns_busbw_factor), so the export and `ncclscope report`
 * compute bandwidth the same way.
 *
 * A file whose COUNTERS block records no Coll, P2p or KernelCh event gets no
 * first pass (nothing could come of it; see nothing_to_derive).
 *
 * Memory: no per-op table. What is added to the export's own bound (open and
 * held events, see export_walk.h) is one analysis at a time, bounded as
 * docs/metrics.md describes (events in flight, 256 clock bins per
 * communicator, aggregates per size bucket and link), and each file is read
 * twice. */
#include "export/export_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "traces/trace_analysis.h"

struct ns_export_metrics {
  size_t max_open; /* the export's cap, kept by the first pass too */
  int file_index;  /* file the analysis belongs to; -1 none */
  ns_analysis* a;  /* NULL: the first pass failed, fields are omitted */
};

ns_export_metrics* ns_export_metrics_new(size_t max_open) {
  ns_export_metrics* m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->file_index = -1;
  m->max_open = max_open;
  return m;
}

void ns_export_metrics_free(ns_export_metrics* m) {
  if (!m) return;
  ns_analysis_destroy(m->a);
  free(m);
}

/* Whether the file's process counters (its COUNTERS block, known before the
 * walk) say it holds no Coll, P2p or KernelCh event: every derived field
 * comes from those (the clock fit from KernelCh pTimers), so the first pass
 * would find nothing, and is skipped. Files without the block (killed
 * processes) always get the pass. */
static int nothing_to_derive(const ns_wfile* f) {
  const ns_props_info* c = f->counters;
  if (!c || !c->has[NS_P_EVENTS]) return 0;
  static const unsigned types[] = {NS_EV_COLL, NS_EV_P2P, NS_EV_KERNEL_CH};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (c->u[NS_P_TYPE_EVENTS_BASE + types[i]]) return 0;
  return 1;
}

/* First pass over a file, run when the walker reads its first item. */
static void on_item(void* self, ns_wfile* f, const ns_item* it) {
  (void)it;
  ns_export_metrics* m = self;
  if (m->file_index == f->index) return;
  ns_analysis_destroy(m->a);
  m->a = NULL;
  m->file_index = f->index;
  if (nothing_to_derive(f)) return;
  char err[1024];
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  ns_analysis_config_offline(&cfg);
  cfg.max_open = m->max_open;
  cfg.window_sec = 0; /* windows are not used here */
  m->a = ns_analyze_file(f->path, &cfg, NULL, err, sizeof err);
  if (!m->a) fprintf(stderr, "ncclscope: warning: no derived metrics for %s\n", err);
}

static void key_err_us(ns_json* j, const char* key, double err_ns) {
  nsj_kf64(j, key, err_ns / 1000.0); /* null when unbounded (INFINITY) */
}

static const char* basis_name(int basis) {
  switch (basis) {
    case NS_BASIS_GPU: return "gpu";
    case NS_BASIS_EXEC: return "exec";
    case NS_BASIS_ENQUEUE: return "enqueue";
    default: return NULL;
  }
}

/* Converts a pTimer pair; 1 if both converted. */
static int convert_pair(ns_analysis* a, uint32_t comm, uint64_t p0, uint64_t p1, uint64_t* t0, uint64_t* t1,
                        double* err) {
  double e0 = INFINITY, e1 = INFINITY;
  if (!ns_analysis_gpu_to_cpu(a, comm, p0, t0, &e0) || !ns_analysis_gpu_to_cpu(a, comm, p1, t1, &e1)) return 0;
  *err = fmax(e0, e1);
  return 1;
}

static void op_fields(ns_export_metrics* m, ns_wfile* f, const ns_event* ev, ns_json* j) {
  const ns_record* r = &ev->start;
  const ns_wcomm* c = ns_wfile_comm(f, r->comm);
  uint32_t nranks = c ? c->info.nranks : 0;
  int coll = r->type == NS_EV_COLL;
  int func = ns_func_code(ns_wfile_string(f, r->str[coll ? NS_COLL_FUNC : NS_P2P_FUNC]));
  unsigned tsize = ns_dtype_size(ns_wfile_string(f, r->str[coll ? NS_COLL_DTYPE : NS_P2P_DTYPE]));
  uint64_t count = r->num[coll ? NS_COLL_COUNT : NS_P2P_COUNT];
  uint64_t bytes = tsize ? ns_coll_bytes(func, count, tsize, nranks) : 0;
  if (tsize) nsj_ku64(j, "bytes", bytes);

  ns_op_times tm = {.started = 1,
                    .stopped = ev->stopped,
                    .start_ns = r->ts,
                    .stop_ns = ev->stop_ts,
                    .exec_stop_ns = ev->has_exec_stop ? ev->exec_stop : 0,
                    .ptimer_start = ev->ptimer_min,
                    .ptimer_stop = ev->ptimer_max};
  uint64_t g0 = 0, g1 = 0;
  double err = INFINITY;
  if (m->a && ev->has_ptimer_min && ev->has_ptimer_max && ev->ptimer_max >= ev->ptimer_min &&
      convert_pair(m->a, r->comm, ev->ptimer_min, ev->ptimer_max, &g0, &g1, &err)) {
    /* pTimers that may be another work's give no bound and no GPU duration */
    tm.has_gpu = ns_analysis_ptimers_own(m->a, r->comm, ev->id);
    if (!tm.has_gpu) err = INFINITY;
    nsj_kus(j, "gpuStart", (int64_t)g0);
    nsj_kus(j, "gpuStop", (int64_t)g1);
    key_err_us(j, "gpuErrorUs", err);
  }
  uint64_t dur = 0;
  int basis = ns_op_duration(&tm, &dur);
  ns_batch_info b;
  int batched = basis == NS_BASIS_GPU ? ns_analysis_batch_of(m->a, ev->id, &b) : 0;
  if (batched) { /* its GPU interval is its kernel batch's: the bandwidth is the batch's, never its own */
    if (batched > 0) {
      char addr[NS_EVENT_ADDR_MAX];
      ns_event_addr(addr, sizeof addr, f->index, b.first_op);
      nsj_kstr(j, "bwBasis", "batch");
      nsj_kstr(j, "batch", addr);
      nsj_ku64(j, "batchOps", b.ops);
      nsj_ku64(j, "batchBytes", b.bytes);
      nsj_kf64(j, "batchAlgbwGBs", b.algbw_gbs);
      nsj_kf64(j, "batchBusbwGBs", b.busbw_gbs);
    }
  } else if (dur > 0 && bytes > 0) {
    double alg = ns_algbw_gbs(bytes, dur);
    nsj_kf64(j, "algbwGBs", alg);
    nsj_kf64(j, "busbwGBs", alg * ns_busbw_factor(func, nranks));
    nsj_kstr(j, "bwBasis", basis_name(basis));
  }
}

/* KernelCh and KernelPhase (v7): the same clock fit, the same bound. */
static void kernel_fields(ns_export_metrics* m, const ns_event* ev, ns_json* j) {
  uint64_t p0 = ev->start.num[ev->start.type == NS_EV_KERNEL_PHASE ? NS_KERNEL_PHASE_PTIMER : NS_KERNEL_CH_PTIMER];
  if (!m->a || !p0) return;
  uint64_t t0 = 0, t1 = 0;
  double e0 = INFINITY, e1 = INFINITY;
  if (!ns_analysis_gpu_to_cpu(m->a, ev->start.comm, p0, &t0, &e0)) return;
  nsj_kus(j, "gpuStart", (int64_t)t0);
  if (ev->has_ptimer_stop && ev->ptimer_stop >= p0 &&
      ns_analysis_gpu_to_cpu(m->a, ev->start.comm, ev->ptimer_stop, &t1, &e1)) {
    nsj_kus(j, "gpuStop", (int64_t)t1);
    e0 = fmax(e0, e1);
  }
  if (!ns_analysis_ptimers_own(m->a, ev->start.comm, ev->op)) e0 = INFINITY; /* another work's time, maybe */
  key_err_us(j, "gpuErrorUs", e0);
}

static void on_event_details(void* self, ns_wfile* f, const ns_event* ev, ns_json* j) {
  ns_export_metrics* m = self;
  if (!ev->started || (ev->start.flags & NS_RF_PXN)) return; /* PXN: another process's clock and comm */
  switch (ev->start.type) {
    case NS_EV_COLL:
    case NS_EV_P2P:
      op_fields(m, f, ev, j);
      break;
    case NS_EV_KERNEL_CH:
    case NS_EV_KERNEL_PHASE: kernel_fields(m, ev, j); break;
    default:
      break;
  }
}

static void on_fini_details(void* self, ns_wfile* f, const ns_wcomm* c, ns_json* j) {
  (void)f;
  ns_export_metrics* m = self;
  ns_clock_fit fit;
  if (c->has_clockfit || !m->a || !ns_analysis_clock_fit(m->a, c->info.comm, &fit)) return;
  nsj_kus(j, "gpuClockOffsetUs", fit.offset_ns);
  nsj_kf64(j, "gpuClockDriftPpm", fit.drift_ppm);
  key_err_us(j, "gpuClockErrorUs", fit.bounded ? fit.error_ns : INFINITY);
  nsj_ku64(j, "gpuClockSamples", fit.samples);
  nsj_kus(j, "gpuClockRefUs", (int64_t)fit.ref_cpu_ns);
}

void ns_export_metrics_ext(ns_export_metrics* m, ns_export_ext* ext) {
  *ext = (ns_export_ext){.self = m, .item = on_item, .event_details = on_event_details, .fini_details = on_fini_details};
}
