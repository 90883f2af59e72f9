/* SPDX-License-Identifier: Apache-2.0 */
/* End to end through ns_analysis on a synthetic record stream: 2000
 * collectives of every kind on rank 0 of 4, two channels, KernelCh with
 * pTimers from a known GPU clock, ProxyOps/ProxySteps with an injected link
 * model (latency + size/bandwidth + noise), records interleaved across the
 * launch and proxy threads as a batching writer would deliver them.
 * The kernel's launch (KernelLaunch, linked through GroupApi <- CollApi <-
 * Coll) precedes its start by 3..8 us (+ queueing); the Coll start often
 * comes after the kernel start, as in NCCL.
 * Asserts: bytes/busbw per formula; GPU intervals within the published bound
 * (and within a few us late); execStop = last child stop; windows never split
 * an op from its children; link regression (MIN) within 5 %. */
#include <stdlib.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "check.h"
#include "synth_stream.h"

#define NCOLL 2000
#define NCH 2
#define NRANKS 4
#define LAT_NS 6000.0
#define BW_GBS 20.0

static synth_stream S;

static const char* funcs[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AlltoAll"};
static const char* dtypes[] = {"ncclFloat32", "ncclBfloat16", "ncclFloat32", "ncclInt8", "ncclFloat64", "ncclFloat32"};

typedef struct {
  uint64_t kstart, kstop, last_child, bytes;
  double factor;
  int seen;
  uint64_t steps;
} truth;
static truth tr[NCOLL + 1];

static synth_ev* push(int thread, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id) {
  return synth_push(&S, thread, kind, type, ts, id, 0);
}

static uint64_t gpu_read(uint64_t t) {
  const uint64_t t0 = 5000000000000ull, g0 = 1731000012345678901ull;
  const double drift = 3.3e-6;
  int64_t dv = (int64_t)floor((double)(int64_t)(t - t0) * (1.0 + drift));
  uint64_t v = g0 + (uint64_t)dv;
  return v - v % 2048;
}

static uint64_t lagns(unsigned long long* s) {
  if (test_unif(s) < 0.005) return 1000000ull + (uint64_t)(test_unif(s) * 2000000.0);
  double x = test_unif(s);
  return 2000ull + (uint64_t)(x * x * 38000.0);
}

static uint64_t batch(uint64_t ts, uint64_t period, uint64_t phase) { return ((ts + phase) / period + 1) * period; }

/* results */
static uint64_t ops_seen, gpu_viol, exec_bad, bw_bad;
static double worst_late_err, bound_late_max;
static uint64_t win_steps_from_ops[64];
static uint64_t win_steps_from_links[64];
static double last_min_bw, last_min_lat;
static uint64_t op_window[NCOLL + 1];
static uint64_t kernel_before_coll; /* kernel channels that started before their Coll start */

static void on_op(void* user, const ns_op_result* r) {
  (void)user;
  if (r->id == 0 || r->id > NCOLL) return;
  truth* t = &tr[r->id];
  ops_seen++;
  t->seen = 1;
  op_window[r->id] = r->window;
  if (r->window < 64) win_steps_from_ops[r->window] += r->n_steps;
  if (r->bytes != t->bytes) {
    fprintf(stderr, "op %llu %s: bytes %llu != %llu\n", (unsigned long long)r->id, r->func_name,
            (unsigned long long)r->bytes, (unsigned long long)t->bytes);
    bw_bad++;
  }
  double expect_bus = (double)t->bytes / (double)r->dur_ns * t->factor;
  if (fabs(r->busbw_gbs - expect_bus) > 1e-9 * expect_bus) {
    fprintf(stderr, "op %llu: busbw %.9g != %.9g\n", (unsigned long long)r->id, r->busbw_gbs, expect_bus);
    bw_bad++;
  }
  if (r->exec_stop_ns != t->last_child) {
    fprintf(stderr, "op %llu: execStop %llu != %llu\n", (unsigned long long)r->id, (unsigned long long)r->exec_stop_ns,
            (unsigned long long)t->last_child);
    exec_bad++;
  }
  if (r->basis != NS_BASIS_GPU) {
    fprintf(stderr, "op %llu: basis %d\n", (unsigned long long)r->id, r->basis);
    exec_bad++;
    return;
  }
  double e1 = fabs((double)(int64_t)(r->gpu_start_ns - t->kstart));
  double e2 = fabs((double)(int64_t)(r->gpu_stop_ns - t->kstop));
  if (e1 > r->gpu_err_ns || e2 > r->gpu_err_ns) {
    if (gpu_viol++ < 5)
      fprintf(stderr, "op %llu: gpu error %.0f/%.0f ns outside bound %.0f ns\n", (unsigned long long)r->id, e1, e2,
              r->gpu_err_ns);
  }
  if (r->id > 1000) {
    worst_late_err = fmax(worst_late_err, fmax(e1, e2));
    bound_late_max = fmax(bound_late_max, r->gpu_err_ns);
  }
}

static uint64_t windows_published, windows_out_of_order, last_window_index;

static void on_window(void* user, const ns_window* w) {
  (void)user;
  /* published in the order they opened, each once */
  if (windows_published++ && w->index <= last_window_index) windows_out_of_order++;
  last_window_index = w->index;
  for (size_t i = 0; i < w->n_links; i++) {
    const ns_link_stats* l = &w->links[i];
    if (l->channel != -1) continue;
    if (w->index < 64) win_steps_from_links[w->index] += l->steps;
  }
}

int main(void) {
  unsigned long long s = 99;
  uint64_t t = 5000000000000ull + 777;
  uint64_t id = NCOLL + 1000;
  for (uint64_t c = 1; c <= NCOLL; c++) {
    int fi = (int)(c % 6);
    uint64_t count = 1024ull << (test_rng(&s) % 8);
    unsigned ts_ = fi == 1 ? 2 : fi == 3 ? 1 : fi == 4 ? 8 : 4;
    t += 100000 + test_rng(&s) % 400000;
    /* as NCCL (v5+) does on the launching thread: GroupApi, CollApi, the
     * launch call bracketed by KernelLaunch, then the Coll start */
    uint64_t gid = ++id, aid = ++id, lid = ++id;
    uint64_t tlaunch = t - 8000;
    push(0, NS_REC_START, NS_EV_GROUP_API, t - 15000, gid);
    push(0, NS_REC_START, NS_EV_COLL_API, t - 14000, aid);
    S.v[S.n - 1].r.parent = gid;
    push(0, NS_REC_STOP, NS_EV_COLL_API, t - 13000, aid);
    push(0, NS_REC_START, NS_EV_KERNEL_LAUNCH, tlaunch, lid);
    S.v[S.n - 1].r.parent = gid;
    push(0, NS_REC_STOP, NS_EV_KERNEL_LAUNCH, tlaunch + 3000, lid);
    uint64_t cstart = t;
    push(0, NS_REC_START, NS_EV_COLL, cstart, c);
    synth_ev* e = &S.v[S.n - 1];
    e->r.parent = aid;
    e->tag = fi;
    e->r.num[NS_COLL_SEQ] = c;
    e->r.num[NS_COLL_COUNT] = count;
    e->r.num[NS_COLL_CHANNELS] = NCH;
    push(0, NS_REC_STOP, NS_EV_COLL, cstart + 3000, c);
    push(0, NS_REC_STOP, NS_EV_GROUP_API, cstart + 4000, gid);
    int nr_mult = (fi == 1 || fi == 2 || fi == 5) ? NRANKS : 1;
    tr[c].bytes = count * ts_ * (uint64_t)nr_mult;
    tr[c].factor = fi == 0 ? 2.0 * 3 / 4 : (fi == 3 || fi == 4) ? 1.0 : 3.0 / 4;
    /* the kernel starts 3..8 us into its launch call on an idle stream, often
     * before the Coll start; a third of the time it waits up to 25 us for
     * earlier work */
    uint64_t kbase = tlaunch + 3000 + test_rng(&s) % 5000;
    if (test_rng(&s) % 3 == 0) kbase += test_rng(&s) % 25000;
    tr[c].kstart = UINT64_MAX;
    for (int ch = 0; ch < NCH; ch++) {
      uint64_t tk = kbase + test_rng(&s) % 3000;
      uint64_t te = tk + 20000 + test_rng(&s) % 100000;
      if (tk < tr[c].kstart) tr[c].kstart = tk;
      if (tk < cstart) kernel_before_coll++;
      if (te > tr[c].kstop) tr[c].kstop = te;
      uint64_t kid = ++id;
      uint64_t cb1 = tk + lagns(&s), cb2 = te + lagns(&s);
      if (cb2 < cb1) cb2 = cb1 + 100;
      push(1, NS_REC_START, NS_EV_KERNEL_CH, cb1, kid);
      S.v[S.n - 1].r.parent = c;
      S.v[S.n - 1].r.num[NS_KERNEL_CH_CHANNEL] = (uint64_t)ch;
      S.v[S.n - 1].r.num[NS_KERNEL_CH_PTIMER] = gpu_read(tk);
      push(1, NS_REC_STATE, NS_EV_KERNEL_CH, cb2, kid);
      S.v[S.n - 1].r.state = NS_ST_KERNEL_CH_STOP;
      S.v[S.n - 1].r.flags = NS_RF_HAS_ARG;
      S.v[S.n - 1].r.arg = gpu_read(te);
      push(1, NS_REC_STOP, NS_EV_KERNEL_CH, cb2, kid);
      if (cb2 > tr[c].last_child) tr[c].last_child = cb2;
      /* proxy op on this channel: sends to rank 1 */
      uint64_t pid_ = ++id;
      uint64_t pt = tk + 1000;
      push(1, NS_REC_START, NS_EV_PROXY_OP, pt, pid_);
      S.v[S.n - 1].r.parent = c;
      S.v[S.n - 1].r.num[NS_PROXY_OP_CHANNEL] = (uint64_t)ch;
      S.v[S.n - 1].r.num[NS_PROXY_OP_PEER] = 1;
      S.v[S.n - 1].r.num[NS_PROXY_OP_IS_SEND] = 1;
      uint64_t remaining = tr[c].bytes / NCH + 1;
      const uint64_t chunk = 131072;
      while (remaining > 0) {
        uint64_t sz = remaining > chunk ? chunk : remaining;
        remaining -= sz;
        uint64_t sid = ++id;
        push(1, NS_REC_START, NS_EV_PROXY_STEP, pt, sid);
        S.v[S.n - 1].r.parent = pid_;
        uint64_t w = pt + 500;
        push(1, NS_REC_STATE, NS_EV_PROXY_STEP, w, sid);
        S.v[S.n - 1].r.state = NS_ST_PROXY_STEP_SEND_WAIT;
        S.v[S.n - 1].r.flags = NS_RF_HAS_ARG;
        S.v[S.n - 1].r.arg = sz;
        double noise = test_unif(&s) < 0.05 ? 30000.0 * test_unif(&s) : 3000.0 * test_unif(&s) * test_unif(&s);
        uint64_t dt = (uint64_t)(LAT_NS + (double)sz / BW_GBS + noise);
        push(1, NS_REC_STOP, NS_EV_PROXY_STEP, w + dt, sid);
        tr[c].steps++;
        pt = w + dt + 200;
      }
      if (pt < te) pt = te + 100; /* the proxy op ends after the kernel channel */
      push(1, NS_REC_STOP, NS_EV_PROXY_OP, pt, pid_);
      if (pt > tr[c].last_child) tr[c].last_child = pt;
    }
  }
  /* arrival by batches (different periods per thread) */
  for (size_t i = 0; i < S.n; i++)
    S.v[i].arrival = S.v[i].thread == 0 ? batch(S.v[i].r.ts, 700000, 0) : batch(S.v[i].r.ts, 1000000, 333333);
  synth_order(&S);

  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.window_sec = 0.05;
  cfg.on_op = on_op;
  cfg.on_window = on_window;
  cfg.string = synth_string;
  ns_analysis* a = ns_analysis_create(&cfg);
  ns_comm_info ci = ns_comm_info_make(1, 0xabcdef, 0, NRANKS);
  ns_analysis_comm(a, &ci);
  for (size_t i = 0; i < S.n; i++) {
    ns_record* r = &S.v[i].r;
    if (r->type == NS_EV_COLL && r->kind == NS_REC_START) {
      r->str[NS_COLL_FUNC] = synth_str(funcs[S.v[i].tag]);
      r->str[NS_COLL_DTYPE] = synth_str(dtypes[S.v[i].tag]);
      r->str[NS_COLL_ALGO] = synth_str("RING");
      r->str[NS_COLL_PROTO] = synth_str("SIMPLE");
    }
    ns_analysis_record(a, r);
  }
  ns_analysis_flush(a);
  ns_analysis_stats st;
  ns_analysis_get_stats(a, &st);
  printf("records %llu ops %llu windows %llu inflight peak %zu incomplete %llu orphans %llu\n",
         (unsigned long long)st.records, (unsigned long long)st.ops, (unsigned long long)st.windows, st.inflight_peak,
         (unsigned long long)st.ops_incomplete, (unsigned long long)st.orphans_evicted);
  printf("GPU: bound violations %llu; after 1000 ops: max |err| %.2f us, max bound %.2f us\n",
         (unsigned long long)gpu_viol, worst_late_err / 1e3, bound_late_max / 1e3);
  CHECK_U64(ops_seen, NCOLL);
  CHECK_U64(st.ops_incomplete, 0);
  CHECK_U64(st.orphans_evicted, 0);
  CHECK_U64(st.inflight, 0);
  CHECK_U64(gpu_viol, 0);
  CHECK_U64(bw_bad, 0);
  CHECK_U64(exec_bad, 0);
  /* the Coll start is no bound on the kernel start: many kernels began before it */
  printf("kernel channels started before their Coll: %llu\n", (unsigned long long)kernel_before_coll);
  CHECK_TRUE(kernel_before_coll > NCOLL / 4);
  CHECK_TRUE(worst_late_err < 5000.0);
  CHECK_TRUE(bound_late_max < 5000.0);
  for (int w = 0; w < 64; w++) {
    if (win_steps_from_ops[w] != win_steps_from_links[w])
      fprintf(stderr, "window %d: steps of its ops %llu, steps in its links %llu\n", w,
              (unsigned long long)win_steps_from_ops[w], (unsigned long long)win_steps_from_links[w]);
    CHECK_U64(win_steps_from_ops[w], win_steps_from_links[w]);
  }
  CHECK_TRUE(st.windows > 5);
  CHECK_U64(windows_published, st.windows);
  CHECK_U64(windows_out_of_order, 0);

  /* link regression over the whole run (summary JSON and text) */
  ns_analysis* list[1] = {a};
  FILE* f = tmpfile();
  ns_analysis_summary_json(list, 1, NULL, f);
  rewind(f);
  char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  const char* m = strstr(buf, "\"min\":{");
  CHECK_TRUE(m != NULL);
  if (m) {
    const char* l = strstr(m, "\"latencyUs\":");
    const char* b = strstr(m, "\"bandwidthGBs\":");
    if (l && b) {
      last_min_lat = atof(l + 12);
      last_min_bw = atof(b + 15);
    }
  }
  printf("link MIN: latency %.3f us (true %.3f), bandwidth %.3f GB/s (true %.3f)\n", last_min_lat, LAT_NS / 1e3,
         last_min_bw, BW_GBS);
  CHECK_REL(last_min_lat, LAT_NS / 1e3, 0.05);
  CHECK_REL(last_min_bw, BW_GBS, 0.05);
  ns_analysis_summary_text(list, 1, NULL, stdout);
  ns_analysis_destroy(a);
  synth_free(&S);
  CHECK_DONE();
}
