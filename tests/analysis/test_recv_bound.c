/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU clock's receive-handover bound (completion.c, docs/metrics.md):
 * a Simple-protocol Coll's last KernelCh stop comes after the latest
 * RecvGPUWait of its own network receives.
 *
 * Synthetic stream, one communicator: every kernel waits 2..5 ms behind
 * earlier work after its launch call (a busy GPU: the launch samples are
 * milliseconds loose), and each channel's kernel ends 2..6 us after its
 * receive ProxyOp's last RecvGPUWait. Three runs:
 *  - Simple Colls: the receive samples make the fit tight (a few us);
 *  - LL Colls, whose kernels may finish before the proxy records the
 *    handover (here 1..20 us before): these must not be used, or the fit
 *    would contradict itself; the bound stays launch-limited (~ms);
 *  - P2p (no protocol named): no sample either;
 *  - Simple Colls where every third op lost channel 1's stop pTimer (a
 *    dropped KernelChStop record) and channel 1 received last: the other
 *    channel's stop is no bound for that handover, so those ops give none.
 * Every run: every conversion inside its published bound. */
#include <stdlib.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "check.h"
#include "synth_stream.h"

#define NOPS 600
#define NCH 2

static synth_stream S;
static uint64_t true_kstart[NOPS + 1];
static uint64_t viol, converted;
static double late_bound_max, late_err_max;

static synth_ev* push(int thread, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id, uint64_t parent) {
  return synth_push(&S, thread, kind, type, ts, id, parent);
}

/* GPU timer: offset and +3 ppm drift, read in 2048 ns steps. */
static uint64_t gpu_read(uint64_t t) {
  double v = (double)t * (1.0 + 3e-6) + 4.2e10;
  return (uint64_t)(v / 2048.0) * 2048;
}

static void on_op(void* user, const ns_op_result* r) {
  (void)user;
  if (r->id == 0 || r->id > NOPS || !r->gpu_start_ns) return;
  converted++;
  double err = fabs((double)(int64_t)(r->gpu_start_ns - true_kstart[r->id]));
  if (err > r->gpu_err_ns && viol++ < 5)
    fprintf(stderr, "op %llu: error %.0f ns outside bound %.0f ns\n", (unsigned long long)r->id, err, r->gpu_err_ns);
  if (r->id > NOPS / 2) {
    late_bound_max = fmax(late_bound_max, r->gpu_err_ns);
    late_err_max = fmax(late_err_max, err);
  }
}

/* One run; proto NULL makes P2p ops. ll_early: kernels end before the
 * handover. lose_ch1: every third op's channel 1 receives 200 us later and
 * its KernelChStop state is lost. */
static void run(const char* proto, int ll_early, int lose_ch1) {
  unsigned long long s = 7;
  S.n = 0;
  viol = converted = 0;
  late_bound_max = late_err_max = 0;
  uint8_t op_type = proto ? NS_EV_COLL : NS_EV_P2P;
  uint64_t t = 9000000000000ull, id = NOPS + 10;
  for (uint64_t c = 1; c <= NOPS; c++) {
    t += 5000000 + test_rng(&s) % 1000000;
    uint64_t gid = ++id, aid = ++id, lid = ++id;
    uint64_t tlaunch = t - 8000;
    push(0, NS_REC_START, NS_EV_GROUP_API, t - 15000, gid, 0);
    push(0, NS_REC_START, proto ? NS_EV_COLL_API : NS_EV_P2P_API, t - 14000, aid, gid);
    push(0, NS_REC_START, NS_EV_KERNEL_LAUNCH, tlaunch, lid, gid);
    push(0, NS_REC_STOP, NS_EV_KERNEL_LAUNCH, tlaunch + 3000, lid, 0);
    synth_ev* e = push(0, NS_REC_START, op_type, t, c, aid);
    if (proto) {
      e->r.num[NS_COLL_SEQ] = c;
      e->r.num[NS_COLL_COUNT] = 1 << 20;
      e->r.num[NS_COLL_CHANNELS] = NCH;
    } else {
      e->r.num[NS_P2P_PEER] = 1;
      e->r.num[NS_P2P_COUNT] = 1 << 20;
      e->r.num[NS_P2P_CHANNELS] = NCH;
    }
    push(0, NS_REC_STOP, op_type, t + 3000, c, 0);
    uint64_t kbase = tlaunch + 2000000 + test_rng(&s) % 3000000; /* queued behind earlier work */
    true_kstart[c] = UINT64_MAX;
    for (int ch = 0; ch < NCH; ch++) {
      uint64_t tk = kbase + (uint64_t)ch * 300;
      int lost = lose_ch1 && ch == 1 && c % 3 == 0;
      if (tk < true_kstart[c]) true_kstart[c] = tk;
      uint64_t kid = ++id, pop = ++id;
      /* the receive: 4 steps, the last handed over at `handover` */
      uint64_t pt = tk + 2000 + (lost ? 200000 : 0);
      push(1, NS_REC_START, NS_EV_PROXY_OP, pt, pop, c)->r.num[NS_PROXY_OP_CHANNEL] = (uint64_t)ch;
      uint64_t step_t = pt;
      uint64_t handover = 0;
      for (int k = 0; k < 4; k++) {
        uint64_t sid = ++id;
        push(1, NS_REC_START, NS_EV_PROXY_STEP, step_t, sid, pop);
        push(1, NS_REC_STATE, NS_EV_PROXY_STEP, step_t + 500, sid, 0)->r.state = NS_ST_PROXY_STEP_RECV_WAIT;
        handover = step_t + 20000 + test_rng(&s) % 10000;
        push(1, NS_REC_STATE, NS_EV_PROXY_STEP, handover, sid, 0)->r.state = NS_ST_PROXY_STEP_RECV_GPU_WAIT;
        push(1, NS_REC_STOP, NS_EV_PROXY_STEP, handover + 3000, sid, 0);
        step_t = handover + 1000;
      }
      /* Simple: the kernel ends after the handover; LL may end before it */
      uint64_t te = ll_early ? handover - 1000 - test_rng(&s) % 19000 : handover + 2000 + test_rng(&s) % 4000;
      uint64_t cb1 = tk + 2000 + test_rng(&s) % 30000, cb2 = te + 2000 + test_rng(&s) % 30000;
      if (cb1 < pt) cb1 = pt; /* keep each thread's stream in time order */
      synth_ev* k0 = push(1, NS_REC_START, NS_EV_KERNEL_CH, cb1, kid, c);
      k0->r.num[NS_KERNEL_CH_CHANNEL] = (uint64_t)ch;
      k0->r.num[NS_KERNEL_CH_PTIMER] = gpu_read(tk);
      if (!lost) {
        synth_ev* k1 = push(1, NS_REC_STATE, NS_EV_KERNEL_CH, cb2, kid, 0);
        k1->r.state = NS_ST_KERNEL_CH_STOP;
        k1->r.flags = NS_RF_HAS_ARG;
        k1->r.arg = gpu_read(te);
      }
      push(1, NS_REC_STOP, NS_EV_KERNEL_CH, cb2, kid, 0);
      push(1, NS_REC_STOP, NS_EV_PROXY_OP, (cb2 > step_t ? cb2 : step_t) + 500, pop, 0);
    }
  }
  synth_drain_every(&S, 1000000);
  ns_analysis* a = synth_analysis(on_op);
  synth_comm(a, 1, 0x5eed, 0, 2);
  for (size_t i = 0; i < S.n; i++) {
    ns_record* r = &S.v[i].r;
    if (r->type == NS_EV_COLL && r->kind == NS_REC_START) {
      r->str[NS_COLL_FUNC] = synth_str("AllReduce");
      r->str[NS_COLL_DTYPE] = synth_str("ncclFloat32");
      r->str[NS_COLL_ALGO] = synth_str("RING");
      r->str[NS_COLL_PROTO] = synth_str(proto);
    } else if (r->type == NS_EV_P2P && r->kind == NS_REC_START) {
      r->str[NS_P2P_FUNC] = synth_str("Recv");
      r->str[NS_P2P_DTYPE] = synth_str("ncclFloat32");
    }
    ns_analysis_record(a, r);
  }
  ns_analysis_flush(a);
  ns_analysis_destroy(a);
  printf("%-6s%s: %llu conversions, %llu outside the bound; second half: bound max %.1f us, error max %.1f us\n",
         proto ? proto : "P2p", lose_ch1 ? " (channel 1 stops lost)" : "", (unsigned long long)converted, (unsigned long long)viol, late_bound_max / 1e3,
         late_err_max / 1e3);
}

int main(void) {
  run("Simple", 0, 0);
  CHECK_U64(converted, NOPS);
  CHECK_U64(viol, 0);
  CHECK_TRUE(late_bound_max < 10000.0); /* receive handover: a few us */

  run("LL", 1, 0);
  CHECK_U64(converted, NOPS);
  CHECK_U64(viol, 0);
  CHECK_TRUE(late_bound_max > 500000.0); /* launch-limited: the 2..5 ms queueing */

  run(NULL, 0, 0);
  CHECK_U64(converted, NOPS);
  CHECK_U64(viol, 0);
  CHECK_TRUE(late_bound_max > 500000.0);

  run("Simple", 0, 1);
  CHECK_U64(converted, NOPS);
  CHECK_U64(viol, 0);
  CHECK_TRUE(late_bound_max < 10000.0); /* the other ops still bound it */
  synth_free(&S);
  CHECK_DONE();
}
