/* SPDX-License-Identifier: Apache-2.0 */
/* Whose times pTimers are (ptimers.c), the per-GPU clock (comms.c) and kernel
 * batches (batches.c), on synthetic streams shaped as NCCL 2.27+ makes them.
 *
 * One rank: a world communicator and a split one whose KernelCh come from
 * the same proxy thread (so one GPU clock). Each op: GroupApi, CollApi or
 * P2pApi, KernelLaunch (its kernel starts 4..9 us later), Group (the plan),
 * Coll/P2p; on the proxy thread one KernelCh per channel, called back 3..30
 * us after the GPU time it carries. The device numbers every work per
 * channel and the proxy reads slot b % 64 (the ring is modelled exactly):
 * after a work without a profiler op (a self send/recv, an AllGatherV
 * Broadcast) every later op reads its predecessor's time.
 * Checks, with typed assertions:
 *  - every published GPU interval contains the op's own true one;
 *  - ops before a drift source own their pTimers, every op after it is
 *    flagged NS_OPF_PTIMER_FOREIGN, and ns_analysis_ptimers_own (the
 *    export's question) agrees with the flag for every op;
 *  - a Broadcast CollApi that gets its Coll is no drift source;
 *  - without any drift source, a shifted pTimer that precedes its op's
 *    launch is caught by causality;
 *  - the split communicator shares the world's clock (same samples);
 *  - four same-function Colls of one plan sharing one interval are one
 *    batch (bytes summed, busbw from the batch), a lone op is not batched,
 *    and the summary counts the batch once; still so when the last op's
 *    KernelCh are called back 300 ms late (a busy proxy thread), some
 *    2,000 launches later, with one stop read from a slot a later work
 *    overwrote: its pTimers are judged possibly another work's, it joins
 *    by its batch's very start, and the batch's interval stays its own
 *    ops' (the true one, within a timer tick at each end);
 *  - an op whose KernelCh come 10 ms late, after some 60 launches, one stop
 *    read from an overwritten slot, and that becomes final only a second
 *    later (a KernelCh that never comes), after thousands more launches
 *    than the analysis keeps: its pTimers are judged possibly another
 *    work's (the launches in its window are no longer known), never
 *    published as its own. */
#include <stdlib.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "check.h"
#include "synth_stream.h"

#define NCH 2
#define MAXOPS (1 << 16) /* ids of everything pushed, ops included */

/* Whether the summary row that contains `key` (a row is one {...} of
 * "collectives") also contains `field`. */
static int row_has(const char* json, const char* key, const char* field) {
  const char* at = strstr(json, key);
  if (!at) return 0;
  const char* end = strchr(at, '}');
  const char* f = strstr(at, field);
  return f && end && f < end;
}

typedef struct {
  int used;
  uint64_t kstart, kend; /* own true interval (earliest channel start, latest end) */
  int batch;             /* index of its batch group, -1 alone */
} op_truth;

static synth_stream S;
static op_truth truth[MAXOPS];
static uint64_t next_id = 1;
static unsigned long long rng = 11;
static uint64_t kch_lag_ns; /* the last op of a batch: its KernelCh callbacks this much later */
/* The next plan's op: its channel 0 KernelCh called back this much later, with
 * a stop read from a slot that a work 64 launches later overwrote (that work
 * ended halfway to the callback); its channel
 * 1 KernelCh never comes (it is final only after the analysis's kernel wait). */
static uint64_t late_overwritten_ns;

/* the device side, per channel: time of each numbered work (0: no profiler write) */
typedef struct {
  uint64_t dev_ctr, host_ctr;
  uint64_t start_of[8192], end_of[8192];
} chan;
static chan CH[3][NCH]; /* per communicator: NCCL counts works per channel of a communicator */

static uint64_t gpu_read(uint64_t t) { return (uint64_t)(((double)t * (1.0 - 2e-6) + 7.7e10) / 2048.0) * 2048; }

/* One plan on comm `comm` at time t: nops ops of type `type` (func names the
 * Coll function), all sharing one batch interval when `batch` (else one
 * after another). self: a P2p to this rank itself (device work, no profiler
 * op, no KernelCh); 2: the same without any event (a drift source the
 * analysis cannot see). Returns the time after it. */
static uint64_t plan(uint64_t t, uint32_t comm, int nops, uint8_t type, const char* func, int batch, int self,
                     uint64_t* first_op) {
  uint64_t gid = next_id++, grp = next_id++, lid = next_id++;
  size_t mark = S.n;
  synth_push(&S, 0, NS_REC_START, NS_EV_GROUP_API, t, gid, 0)->r.comm = comm;
  uint64_t tlaunch = t + 2000 + (uint64_t)nops * 1000;
  uint64_t tk = tlaunch + 4000 + test_rng(&rng) % 5000;
  uint64_t ids[16];
  for (int i = 0; i < nops; i++) {
    uint64_t aid = next_id++;
    synth_ev* e = synth_push(&S, 0, NS_REC_START, type == NS_EV_COLL ? NS_EV_COLL_API : NS_EV_P2P_API,
                             t + 1000 + (uint64_t)i * 1000, aid, gid);
    e->r.comm = comm;
    e->tag = (int)aid; /* the op below names it */
    ids[i] = aid;
  }
  synth_push(&S, 0, NS_REC_START, NS_EV_KERNEL_LAUNCH, tlaunch, lid, gid)->r.comm = comm;
  synth_push(&S, 0, NS_REC_STOP, NS_EV_KERNEL_LAUNCH, tlaunch + 1500, lid, 0)->r.comm = comm;
  synth_push(&S, 0, NS_REC_START, NS_EV_GROUP, tlaunch + 2000, grp, 0)->r.comm = comm;
  uint64_t tend = tk;
  for (int i = 0; i < nops; i++) {
    uint64_t op = next_id++;
    if (i == 0) *first_op = op;
    synth_ev* e = synth_push(&S, 0, NS_REC_START, type, tlaunch + 2500 + (uint64_t)i * 200, op, ids[i]);
    e->r.comm = comm;
    if (type == NS_EV_COLL) {
      e->r.num[NS_COLL_COUNT] = 16384;
      e->r.num[NS_COLL_CHANNELS] = NCH;
      e->r.num[NS_COLL_PARENT_GROUP] = grp;
      e->r.str[NS_COLL_FUNC] = synth_str(func);
      e->r.str[NS_COLL_DTYPE] = synth_str("ncclFloat32");
      e->r.str[NS_COLL_ALGO] = synth_str("RING");
      e->r.str[NS_COLL_PROTO] = synth_str("LL");
    } else {
      e->r.num[NS_P2P_PEER] = self ? 0 : 1;
      e->r.num[NS_P2P_COUNT] = 16384;
      e->r.num[NS_P2P_CHANNELS] = self ? 0 : NCH;
      e->r.num[NS_P2P_PARENT_GROUP] = grp;
      e->r.str[NS_P2P_FUNC] = synth_str(func);
      e->r.str[NS_P2P_DTYPE] = synth_str("ncclFloat32");
    }
    synth_push(&S, 0, NS_REC_STOP, type, tlaunch + 2600 + (uint64_t)i * 200, op, 0)->r.comm = comm;
    /* the device: one work per channel; a batch shares one interval */
    uint64_t ks = batch ? tk : tend, ke = ks + 30000 + test_rng(&rng) % 20000;
    if (batch && i > 0) ke = truth[op % MAXOPS].kend = truth[(*first_op) % MAXOPS].kend;
    op_truth* tr = &truth[op % MAXOPS];
    tr->used = !self;
    tr->kstart = ks;
    tr->kend = ke;
    tr->batch = batch ? (int)(*first_op % MAXOPS) : -1;
    for (int c = 0; c < NCH; c++) {
      chan* ch = &CH[comm][c];
      uint64_t w = ++ch->dev_ctr;
      ch->start_of[w % 8192] = ks + (uint64_t)c * 100;
      ch->end_of[w % 8192] = ke;
      if (self) continue; /* no profiler op: the host does not count it */
      uint64_t base = ++ch->host_ctr;
      /* the proxy reads slot base % 64 once its counter reached base: the
       * latest work numbered base (mod 64) at or after base */
      uint64_t from = base;
      while (from + 64 <= ch->dev_ctr) from += 64;
      if (!ch->start_of[from % 8192]) continue; /* an unprofiled work's slot: this op stalls (never delivered here) */
      uint64_t kid = next_id++;
      uint64_t p0 = gpu_read(ch->start_of[from % 8192]), p1 = gpu_read(ch->end_of[from % 8192]);
      uint64_t cb0 = ks + 3000 + test_rng(&rng) % 27000, cb1 = ke + 3000 + test_rng(&rng) % 27000;
      if (late_overwritten_ns) {
        if (c == 1) continue;
        cb0 += late_overwritten_ns, cb1 += late_overwritten_ns;
        p1 = gpu_read(ke + late_overwritten_ns / 2); /* a later work's end, before the callback read it */
      }
      if (batch && i == nops - 1 && kch_lag_ns) {
        cb0 += kch_lag_ns, cb1 += kch_lag_ns;
        /* read that late, its last channel's slot already holds a work a second later: its stop */
        if (c == NCH - 1) p1 = gpu_read(ke + 1000000000ull);
      }
      if (ch->start_of[from % 8192] > ks) cb0 = ch->start_of[from % 8192] + 3000; /* a later work's time: read later */
      synth_ev* k = synth_push(&S, 1, NS_REC_START, NS_EV_KERNEL_CH, cb0, kid, op);
      k->r.comm = comm;
      k->r.num[NS_KERNEL_CH_CHANNEL] = (uint64_t)c;
      k->r.num[NS_KERNEL_CH_PTIMER] = p0;
      if (cb1 < cb0) cb1 = cb0 + 1000;
      synth_ev* st = synth_push(&S, 1, NS_REC_STATE, NS_EV_KERNEL_CH, cb1, kid, 0);
      st->r.comm = comm;
      st->r.state = NS_ST_KERNEL_CH_STOP;
      st->r.flags = NS_RF_HAS_ARG;
      st->r.arg = p1;
      synth_push(&S, 1, NS_REC_STOP, NS_EV_KERNEL_CH, cb1, kid, 0)->r.comm = comm;
    }
    if (ke > tend) tend = ke;
  }
  synth_push(&S, 0, NS_REC_STOP, NS_EV_GROUP, tlaunch + 5000, grp, 0)->r.comm = comm;
  synth_push(&S, 0, NS_REC_STOP, NS_EV_GROUP_API, tlaunch + 6000, gid, 0)->r.comm = comm;
  if (self == 2) S.n = mark; /* the device work stays, its events go */
  return tend + 100000; /* the app waits for the GPU */
}

/* A Broadcast CollApi (NCCL 2.29+ AllGatherV): device works on every channel,
 * no profiler op, no Coll. with_coll: an ordinary Broadcast instead. */
static uint64_t bcast(uint64_t t, uint32_t comm, int with_coll) {
  uint64_t first;
  if (with_coll) {
    plan(t, comm, 1, NS_EV_COLL, "Broadcast", 0, 0, &first);
    return t + 300000;
  }
  uint64_t gid = next_id++, aid = next_id++;
  synth_push(&S, 0, NS_REC_START, NS_EV_GROUP_API, t, gid, 0)->r.comm = comm;
  synth_ev* e = synth_push(&S, 0, NS_REC_START, NS_EV_COLL_API, t + 1000, aid, gid);
  e->r.comm = comm;
  e->r.str[NS_COLL_API_FUNC] = synth_str("Broadcast");
  synth_push(&S, 0, NS_REC_STOP, NS_EV_COLL_API, t + 1500, aid, 0)->r.comm = comm;
  synth_push(&S, 0, NS_REC_STOP, NS_EV_GROUP_API, t + 2000, gid, 0)->r.comm = comm;
  for (int c = 0; c < NCH; c++) {
    uint64_t w = ++CH[comm][c].dev_ctr;
    CH[comm][c].start_of[w % 8192] = 0; /* unprofiled: its slot keeps the older value */
    CH[comm][c].end_of[w % 8192] = 0;
  }
  return t + 300000;
}

/* ---- results ---- */
typedef struct {
  uint64_t ops, foreign, bounded, outside, export_disagrees, batched, batch_busbw_wrong, own_after_drift;
} tally;
static tally T;
static uint64_t drift_from_op; /* ops with an id above this follow a drift source (0: none) */
static ns_analysis* A;

static void on_op(void* user, const ns_op_result* r) {
  (void)user;
  op_truth* tr = r->id < next_id ? &truth[r->id % MAXOPS] : NULL;
  if (!tr || !tr->used || !r->n_kernel_ch) return;
  T.ops++;
  int foreign = (r->flags & NS_OPF_PTIMER_FOREIGN) != 0;
  T.foreign += foreign;
  if (drift_from_op && r->id > drift_from_op && r->comm == 1 && !foreign && T.own_after_drift++ < 3)
    fprintf(stderr, "op %llu after the drift source owns its pTimers\n", (unsigned long long)r->id);
  /* what the export asks after the first pass, the analysis answers as it flagged */
  if (ns_analysis_ptimers_own(A, r->comm, r->id) == foreign && T.export_disagrees++ < 3)
    fprintf(stderr, "op %llu: flag %d but ns_analysis_ptimers_own %d\n", (unsigned long long)r->id, foreign, !foreign);
  if (r->gpu_start_ns && !foreign && isfinite(r->gpu_err_ns)) {
    T.bounded++;
    double e0 = fabs((double)(int64_t)(r->gpu_start_ns - tr->kstart)), e1 = fabs((double)(int64_t)(r->gpu_stop_ns - tr->kend));
    if ((e0 > r->gpu_err_ns || e1 > r->gpu_err_ns) && T.outside++ < 3)
      fprintf(stderr, "op %llu: start off by %.0f, stop by %.0f ns, bound %.0f ns\n", (unsigned long long)r->id, e0,
              e1, r->gpu_err_ns);
  }
  if (r->flags & NS_OPF_BATCHED) {
    T.batched++;
    double want = (double)r->batch_bytes / (double)r->batch_dur_ns; /* GB/s; 2 ranks AllReduce: factor 1 */
    double true_dur = (double)(tr->kend - tr->kstart), tick = 2048.0;
    if (r->batch_ops != 4 || r->batch_bytes != 4 * 65536 || r->algbw_gbs != 0 ||
        fabs(r->batch_busbw_gbs - want) > 1e-9 * want ||
        fabs((double)r->batch_dur_ns - true_dur) > 2 * tick + 1e-5 * true_dur)
      if (T.batch_busbw_wrong++ < 5)
        fprintf(stderr, "op %llu: batch ops %u bytes %llu dur %llu, true %.0f, foreign %d\n",
                (unsigned long long)r->id, r->batch_ops, (unsigned long long)r->batch_bytes,
                (unsigned long long)r->batch_dur_ns, true_dur, foreign);
  }
}

/* Each window hands over the clock fits of its communicators as they stand
 * when it closes: the same as asking the analysis then. */
static uint64_t win_clocks, win_clocks_wrong;
static void on_window(void* user, const ns_window* w) {
  (void)user;
  size_t fits = 0;
  for (uint32_t c = 1; c <= 2; c++) {
    ns_clock_fit f;
    fits += ns_analysis_clock_fit(A, c, &f) ? 1 : 0;
  }
  if (w->n_clocks != fits) win_clocks_wrong++;
  for (size_t i = 0; i < w->n_clocks; i++) {
    ns_clock_fit f;
    if (!ns_analysis_clock_fit(A, w->clocks[i].comm, &f) || memcmp(&f, &w->clocks[i].fit, sizeof f)) win_clocks_wrong++;
    win_clocks++;
  }
  ns_analysis_stats st;
  ns_analysis_get_stats(A, &st);
  if (w->steps_unanalysed != st.steps_unanalysed) win_clocks_wrong++;
}

/* The stream through a fresh analysis, each final op to `cb`. */
static ns_analysis* analyse_with(void (*cb)(void* user, const ns_op_result* r)) {
  synth_drain_every(&S, 2000000);
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.keep_op_verdicts = 1;
  cfg.on_op = cb;
  cfg.on_window = on_window;
  cfg.window_sec = 0.01; /* several windows close while the fits grow */
  cfg.string = synth_string;
  A = ns_analysis_create(&cfg);
  for (uint32_t c = 1; c <= 2; c++) synth_comm(A, c, 0xc0 + c, 0, 2);
  for (size_t i = 0; i < S.n; i++) {
    ns_record* r = &S.v[i].r;
    if (S.v[i].thread == 1) r->id |= 7ull << 40; /* KernelCh of both comms: one proxy thread's ring */
    ns_analysis_record(A, r);
  }
  ns_analysis_flush(A);
  return A;
}
static ns_analysis* analyse(void) { return analyse_with(on_op); }

static void reset(void) {
  S.n = 0;
  next_id = 1;
  memset(CH, 0, sizeof CH);
  memset(&T, 0, sizeof T);
  memset(truth, 0, sizeof truth);
  drift_from_op = 0;
  win_clocks = win_clocks_wrong = 0;
}

/* kind: 0 none, 1 self send/recv, 2 AllGatherV Broadcast, 3 Broadcast with its Coll, 4 a drift source with no event */
static void run(int kind, const char* name) {
  reset();
  uint64_t t = 5000000000000ull, first = 0;
  for (int i = 0; i < 300; i++) {
    if (i == 150 && (kind == 1 || kind == 4)) {
      drift_from_op = next_id;
      t = plan(t, 1, 1, NS_EV_P2P, "Send", 0, kind == 1 ? 1 : 2, &first);
    } else if (i == 150 && (kind == 2 || kind == 3)) {
      drift_from_op = kind == 2 ? next_id : 0;
      t = bcast(t, 1, kind == 3);
    }
    t = plan(t, 1, 1, NS_EV_COLL, "AllReduce", 0, 0, &first);
    if (i % 10 == 0) t = plan(t, 2, 1, NS_EV_COLL, "AllReduce", 0, 0, &first); /* the split comm */
  }
  analyse();
  printf("%-28s ops %llu, foreign %llu, bounded %llu, outside %llu, own after the drift source %llu\n", name,
         (unsigned long long)T.ops, (unsigned long long)T.foreign, (unsigned long long)T.bounded,
         (unsigned long long)T.outside, (unsigned long long)T.own_after_drift);
  CHECK_U64(T.outside, 0);
  CHECK_U64(T.own_after_drift, 0);
  CHECK_U64(T.export_disagrees, 0);
  if (kind == 0 || kind == 3) CHECK_U64(T.foreign, 0);
  if (kind != 0 && kind != 3) CHECK_TRUE(T.foreign >= 148 && T.foreign <= 150 && T.bounded >= 180);
  printf("%-28s windows handed over %llu clock fits, %llu unlike the analysis' own\n", name,
         (unsigned long long)win_clocks, (unsigned long long)win_clocks_wrong);
  CHECK_TRUE(win_clocks > 0);
  CHECK_U64(win_clocks_wrong, 0);
  ns_clock_fit w, s;
  CHECK_TRUE(ns_analysis_clock_fit(A, 1, &w) && ns_analysis_clock_fit(A, 2, &s));
  CHECK_U64(w.samples, s.samples); /* one GPU, one fit */
  CHECK_TRUE(w.bounded);
  ns_analysis_destroy(A);
}

/* Plans of four same-size AllReduces sharing one batch interval, between
 * lone ones; the last op of each batch has its KernelCh lag_ns late. */
static void run_batches(uint64_t lag_ns) {
  reset();
  kch_lag_ns = lag_ns;
  uint64_t t = 5000000000000ull, first = 0;
  for (int i = 0; i < 100; i++) {
    /* a slot is overwritten only once 64 later works ran on its channel: not in the last batches */
    kch_lag_ns = i < 80 ? lag_ns : 0;
    t = plan(t, 1, 4, NS_EV_COLL, "AllReduce", 1, 0, &first);
    t = plan(t, 1, 1, NS_EV_COLL, "AllReduce", 0, 0, &first);
  }
  analyse();
  ns_analysis_stats st;
  ns_analysis_get_stats(A, &st);
  printf("batches, last KernelCh %llu ms late: ops %llu (pTimers maybe foreign %llu), batched %llu in %llu batches, "
         "wrong batch figures %llu\n", (unsigned long long)(lag_ns / 1000000), (unsigned long long)T.ops,
         (unsigned long long)T.foreign, (unsigned long long)T.batched, (unsigned long long)st.batches,
         (unsigned long long)T.batch_busbw_wrong);
  if (lag_ns) CHECK_U64(T.foreign, 80); /* what the test is about: the late ones are judged so */
  CHECK_U64(T.batched, 400);
  CHECK_U64(st.batches, 100);
  CHECK_U64(T.batch_busbw_wrong, 0);
  CHECK_U64(T.outside, 0);
  /* the summary: one row of 100 batches of 4 x 65536 B, one row of 100 lone ops */
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  ns_analysis_summary_json(&A, 1, NULL, f);
  fclose(f);
  CHECK_TRUE(row_has(buf, "\"bytes\":262144,\"count\":65536,\"dtype\":\"ncclFloat32\"", "\"calls\":100,"));
  CHECK_TRUE(row_has(buf, "\"bytes\":65536,\"count\":16384,\"dtype\":\"ncclFloat32\"", "\"calls\":100,"));
  CHECK_TRUE(strstr(buf, "\"batchOps\":4") != NULL);
  free(buf);
  ns_analysis_destroy(A);
}

/* One op judged long after the launches that could have overwritten its slots. */
static uint64_t late_op_flags = UINT64_MAX, late_op_id;
static void on_op_late(void* user, const ns_op_result* r) {
  on_op(user, r);
  if (r->id == late_op_id) late_op_flags = r->flags;
}

static void run_late_overrun(void) {
  reset();
  uint64_t t = 5000000000000ull, first = 0;
  for (int i = 0; i < 7000; i++) {
    late_overwritten_ns = i == 100 ? 10000000 : 0;
    t = plan(t, 1, 1, NS_EV_COLL, "AllReduce", 0, 0, &first);
    if (i == 100) late_op_id = first;
  }
  late_overwritten_ns = 0;
  analyse_with(on_op_late);
  printf("an op judged 1 s after its launch: ops %llu, foreign %llu, bounded %llu, outside %llu; its flags 0x%llx\n",
         (unsigned long long)T.ops, (unsigned long long)T.foreign, (unsigned long long)T.bounded,
         (unsigned long long)T.outside, (unsigned long long)late_op_flags);
  CHECK_U64(T.outside, 0);
  CHECK_TRUE(late_op_flags != UINT64_MAX && (late_op_flags & NS_OPF_PTIMER_FOREIGN));
  CHECK_TRUE(T.bounded >= 6900); /* the others keep their bounds */
  ns_analysis_destroy(A);
}

int main(void) {
  run(0, "no drift source");
  run(1, "a self send/recv");
  run(2, "an AllGatherV Broadcast");
  run(3, "a Broadcast with its Coll");
  run(4, "an unseen drift source");
  run_batches(0);
  run_batches(300000000);
  run_late_overrun();
  synth_free(&S);
  CHECK_DONE();
}
