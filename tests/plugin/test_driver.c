/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: drive the real .so through ncclProfiler_v1..v6 with
 * hand-built descriptors, the way NCCL would (including the odd inputs:
 * PXN with a foreign pid and an unmapped parent, NULL strings and handles,
 * parents stopped before their children, address reuse), then read the
 * trace back and check exact counts, parent ids, PXN flags and states. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

static char dump_dir[256];
static int warns;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line, (void)fmt;
  if (level == NCCL_LOG_WARN) warns++;
}

static const tl_rec* only_start(const tl_trace* t, int type, uint32_t comm, int nth) {
  int k = 0;
  for (size_t i = 0; i < t->nrecs; i++) {
    const ns_record* r = &t->recs[i].r;
    if (r->kind == NS_REC_START && r->type == type && r->comm == comm && k++ == nth) return &t->recs[i];
  }
  return NULL;
}

static uint64_t prop(const ns_props_info* p, uint32_t key) { return p->has[key] ? p->u[key] : 0; }

int main(void) {
  tp_plugin plugin;
  if (tp_start(&plugin, dump_dir, sizeof dump_dir, "test-driver")) return 2;
  setenv("NCCLSCOPE_SLAB_EVENTS", "64", 1); /* few open events held: the writer closes and forgets early */
  setenv("NCCLSCOPE_HOLD_MS", "0", 1);
  setenv("NCCLSCOPE_POLL_MS", "1", 1);
  setenv("NCCLSCOPE_RING_KB", "bogus", 1); /* must warn and use the default */
  CHECK_STR(plugin.v6->name, "ncclscope");
  int mask = 0;
  pid_t me = getpid();

  /* ---- v6: the full hierarchy (comm serial 1) ---- */
  void* c6 = NULL;
  CHECK_U64(plugin.v6->init(&c6, 0xC0FFEEull, &mask, "comm-six", 1, 8, 3, logger), ncclSuccess);
  CHECK_TRUE(c6 != NULL);
  CHECK_U64(mask, 0x7FFF);
  CHECK_TRUE(warns >= 1); /* NCCLSCOPE_RING_KB */
  ncclProfilerEventDescr_v6_t d;
/* Starts a v6 event on ctx whose descriptor has the given fields (the rest zero); d keeps it. */
#define START6(ctx, handle_out, ...)                  \
  do {                                                \
    d = (ncclProfilerEventDescr_v6_t){__VA_ARGS__};   \
    plugin.v6->startEvent(ctx, handle_out, &d);       \
  } while (0)
  void *hGroupApi, *hCollApi, *hGroup, *hColl, *hK0, *hK1, *hOp, *hStep, *hNet;
  START6(c6, &hGroupApi, .type = ncclProfileGroupApi, .groupApi.groupDepth = 1);
  plugin.v6->recordEventState(hGroupApi, ncclProfilerGroupStartApiStop, NULL);
  START6(c6, &hCollApi,
         .type = ncclProfileCollApi, .parentObj = hGroupApi, .collApi.func = "AllReduce",
         .collApi.datatype = "ncclFloat32", .collApi.count = 1024, .collApi.root = -1);
  START6(c6, &hGroup, .type = ncclProfileGroup);
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.parentObj = hCollApi;
  d.coll.parentGroup = hGroup;
  d.coll.func = "AllReduce";
  d.coll.datatype = NULL; /* NULL strings */
  d.coll.algo = "RING";
  d.coll.proto = NULL;
  d.coll.seqNumber = 7;
  d.coll.count = 1024;
  d.coll.nChannels = 2;
  d.coll.root = -1;
  plugin.v6->startEvent(c6, &hColl, &d);
  CHECK_TRUE(hColl != NULL);
  /* The API calls and the Coll stop before any child starts. */
  plugin.v6->stopEvent(hColl);
  plugin.v6->stopEvent(hCollApi);
  plugin.v6->recordEventState(hGroupApi, ncclProfilerGroupEndApiStart, NULL);
  plugin.v6->stopEvent(hGroupApi);
  plugin.v6->stopEvent(hGroup);
  usleep(5000); /* several writer polls: with HOLD_MS=0 only the refs keep the Coll slot */
  START6(c6, &hK0,
         .type = ncclProfileKernelCh, .parentObj = hColl, .kernelCh.channelId = 255, .kernelCh.pTimer = 1000000);
  d.kernelCh.channelId = 1;
  plugin.v6->startEvent(c6, &hK1, &d);
  START6(c6, &hOp,
         .type = ncclProfileProxyOp, .parentObj = hColl, .proxyOp.pid = me, .proxyOp.channelId = 1,
         .proxyOp.peer = 2, .proxyOp.nSteps = 1, .proxyOp.isSend = 1);
  START6(c6, &hStep, .type = ncclProfileProxyStep, .parentObj = hOp, .proxyStep.step = 0);
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  sa.proxyStep.transSize = 4096;
  plugin.v6->recordEventState(hStep, ncclProfilerProxyStepSendWait, &sa);
  ncclProfilerNetIbDescr_v1_t ib;
  memset(&ib, 0, sizeof ib);
  ib.type = ncclProfileQp;
  ib.qp.device = 1;
  ib.qp.wr_id = 99;
  ib.qp.opcode = 2;
  ib.qp.qpNum = 77;
  ib.qp.length = 4096;
  START6(c6, &hNet,
         .type = ncclProfileNetPlugin, .parentObj = hStep,
         .netPlugin.id = (int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER), .netPlugin.data = &ib);
  plugin.v6->stopEvent(hNet);
  /* A socket id with a NULL data pointer: not decoded, not read. */
  void* hNet2;
  d.netPlugin.id = (int64_t)(NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER);
  d.netPlugin.data = NULL;
  plugin.v6->startEvent(c6, &hNet2, &d);
  plugin.v6->stopEvent(hNet2);
  plugin.v6->stopEvent(hStep);
  plugin.v6->stopEvent(hOp);
  memset(&sa, 0, sizeof sa);
  sa.kernelCh.pTimer = 3000000;
  plugin.v6->recordEventState(hK0, ncclProfilerKernelChStop, &sa);
  plugin.v6->stopEvent(hK0);
  plugin.v6->recordEventState(hK1, ncclProfilerKernelChStop, &sa);
  plugin.v6->stopEvent(hK1);
  /* CE events, KernelLaunch, P2pApi, ProxyCtrl with a state. */
  void *hCe, *hCs, *hCb, *hKl, *hPa, *hCtrl;
  START6(c6, &hCe, .type = ncclProfileCeColl, .ceColl.func = "AllGather", .ceColl.syncStrategy = "sync");
  START6(c6, &hCs, .type = ncclProfileCeSync, .parentObj = hCe, .ceCollSync.nRanks = 8);
  START6(c6, &hCb, .type = ncclProfileCeBatch, .parentObj = hCe, .ceCollBatch.numOps = 3);
  plugin.v6->stopEvent(hCs);
  plugin.v6->stopEvent(hCb);
  plugin.v6->stopEvent(hCe);
  START6(c6, &hKl, .type = ncclProfileKernelLaunch);
  plugin.v6->stopEvent(hKl);
  START6(c6, &hPa, .type = ncclProfileP2pApi, .p2pApi.func = "Send");
  plugin.v6->stopEvent(hPa);
  START6(c6, &hCtrl, .type = ncclProfileProxyCtrl);
  ncclProfilerEventStateArgs_v6_t ca;
  memset(&ca, 0, sizeof ca);
  ca.proxyCtrl.appendedProxyOps = 5;
  plugin.v6->recordEventState(hCtrl, ncclProfilerProxyCtrlAppendEnd, &ca);
  plugin.v6->recordEventState(hCtrl, (ncclProfilerEventState_t)99, NULL); /* unknown state */
  plugin.v6->stopEvent(hCtrl);

  /* PXN: a ProxyOp for another process, parent pointer unmapped here, foreign context. */
  void *hPxn, *hPxnStep, *hPxnNet;
  void* foreign_ctx = (void*)0x12345678;
  START6(foreign_ctx, &hPxn,
         .type = ncclProfileProxyOp, .parentObj = (void*)0xdead0000ull, .proxyOp.pid = me + 100000,
         .proxyOp.channelId = 3);
  CHECK_TRUE(hPxn != NULL);
  START6(foreign_ctx, &hPxnStep, .type = ncclProfileProxyStep, .parentObj = hPxn, .proxyStep.step = 5);
  START6(foreign_ctx, &hPxnNet, .type = ncclProfileNetPlugin, .parentObj = hPxnStep);
  plugin.v6->stopEvent(hPxnNet);
  plugin.v6->stopEvent(hPxnStep);
  plugin.v6->stopEvent(hPxn);

  /* Odd input: NULL handles, unknown types, a foreign context, a bogus parent. */
  plugin.v6->stopEvent(NULL);
  plugin.v6->recordEventState(NULL, ncclProfilerProxyStepSendWait, NULL);
  plugin.v6->stopEvent((void*)&mask);       /* not ours: counted */
  plugin.v6->stopEvent(hNet);               /* stopped twice: a double stop, counted by the writer */
  void* h;
  START6(c6, &h, .type = 1ull << 40);
  CHECK_TRUE(h == NULL);
  d.type = ncclProfileColl | ncclProfileP2p;
  plugin.v6->startEvent(c6, &h, &d);
  CHECK_TRUE(h == NULL);
  d.type = ncclProfileGroup;
  plugin.v6->startEvent(foreign_ctx, &h, &d);
  CHECK_TRUE(h == NULL);
  memset(&d, 0, sizeof d);
  d.type = ncclProfileP2p;
  d.parentObj = &mask; /* not one of our handles: recorded as parent lost */
  d.p2p.func = "Send";
  d.p2p.peer = -5;
  void* hP2pLost;
  plugin.v6->startEvent(c6, &hP2pLost, &d);
  plugin.v6->stopEvent(hP2pLost);

  /* 600 parent/child pairs; each child starts after its parent stopped and
   * must still name that parent; no handle comes back (it carries the id). */
  enum { REUSE = 600 };
  void* seen[REUSE];
  int distinct = 0;
  for (int i = 0; i < REUSE; i++) {
    void *hp, *hc;
    START6(c6, &hp, .type = ncclProfileColl, .coll.seqNumber = 1000 + (uint64_t)i, .coll.func = "Broadcast");
    plugin.v6->stopEvent(hp);
    START6(c6, &hc, .type = ncclProfileProxyOp, .parentObj = hp, .proxyOp.pid = me, .proxyOp.channelId = (uint8_t)i);
    plugin.v6->stopEvent(hc);
    int found = 0;
    for (int k = 0; k < distinct; k++) found |= seen[k] == hp;
    if (!found) seen[distinct++] = hp;
    if (i % 4 == 3) usleep(5000); /* a pace the writer keeps up with under the sanitizers */
  }
  CHECK_U64(distinct, REUSE);

  /* ---- v1..v5: one communicator each (serials 2..6) ---- */
  void *c1, *c2, *c3, *c4, *c5;
  CHECK_U64(plugin.v1->init(&c1, &mask), ncclSuccess);
  CHECK_U64(mask, 0x3F);
  CHECK_U64(plugin.v2->init(&c2, &mask), ncclSuccess);
  CHECK_U64(plugin.v3->init(&c3, &mask), ncclSuccess);
  CHECK_U64(mask, 0xFF);
  CHECK_U64(plugin.v4->init(&c4, &mask, NULL, 0x44, 1, 2, 1, logger), ncclSuccess);
  CHECK_U64(plugin.v5->init(&c5, 0x55, &mask, "five", 1, 2, 0, logger), ncclSuccess);
  CHECK_U64(mask, 0xFFF);
  {
    ncclProfilerEventDescr_v1_t e;
    memset(&e, 0, sizeof e);
    e.type = ncclProfileColl;
    e.coll.func = ncclFuncAllReduce_v1;
    e.coll.datatype = ncclFloat32_v1;
    e.coll.algo = ncclAlgoRing_v1;
    e.coll.proto = 200; /* unknown code */
    e.coll.nMaxChannels = 4;
    void *hc, *ho;
    plugin.v1->startEvent(c1, &hc, &e);
    memset(&e, 0, sizeof e);
    e.type = ncclProfileProxyOp;
    e.parentObj = hc;
    e.proxyOp.pid = me;
    plugin.v1->startEvent(c1, &ho, &e);
    ncclProfilerEventStateArgs_v1_t s;
    memset(&s, 0, sizeof s);
    s.proxyOp.transSize = 123;
    plugin.v1->recordEventState(ho, ncclProfilerProxyOpSendPosted, &s);
    plugin.v1->stopEvent(ho);
    plugin.v1->stopEvent(hc);
  }
  /* v2..v4: one event each, started and stopped at once */
#define START_STOP(ver, ctx, ...)                         \
  do {                                                    \
    ncclProfilerEventDescr_##ver##_t e_ = {__VA_ARGS__};  \
    void* h_;                                             \
    plugin.ver->startEvent(ctx, &h_, &e_);                \
    plugin.ver->stopEvent(h_);                            \
  } while (0)
  START_STOP(v2, c2, .type = ncclProfileP2p, .p2p.func = "Recv", .p2p.peer = 1);
  START_STOP(v3, c3, .type = ncclProfileKernelCh, .kernelCh.channelId = 63);
  START_STOP(v4, c4, .type = ncclProfileKernelCh, .kernelCh.channelId = 9, .kernelCh.pTimer = 4242);
  {
    ncclProfilerEventDescr_v5_t e = {.type = ncclProfileGroupApi};
    void* hg;
    plugin.v5->startEvent(c5, &hg, &e);
    plugin.v5->recordEventState(hg, ncclProfilerGroupStartApiStop, NULL);
    plugin.v5->stopEvent(hg);
  }
  /* Finalize from other orders; the last one (v6) joins the writer. */
  plugin.v3->finalize(c3);
  plugin.v1->finalize(c1);
  plugin.v5->finalize(c5);
  plugin.v2->finalize(c2);
  plugin.v4->finalize(c4);
  plugin.v6->finalize(c6);
  dlclose(plugin.so);

  /* ---- read it back ---- */
  tl_trace t;
  memset(&t, 0, sizeof t);
  CHECK_U64(tl_load_dir(&t, dump_dir), 1);
  CHECK_TRUE(t.clean_end);
  CHECK_U64(t.bytes_cut, 0);
  CHECK_U64(t.seq_gaps, 0);
  CHECK_U64(t.process.pid, (uint64_t)me);
  CHECK_U64(t.ncomms, 6);
  CHECK_U64(t.nfinis, 6);
  const ns_comm_info* ci = tl_comm(&t, 1);
  CHECK_TRUE(ci != NULL);
  if (ci) {
    CHECK_U64(ci->abi_version, 6);
    CHECK_U64(ci->comm_id, 0xC0FFEE);
    CHECK_U64(ci->rank, 3);
    CHECK_U64(ci->nranks, 8);
    CHECK_STR(ci->comm_name, "comm-six");
  }
  for (uint32_t s = 2; s <= 6; s++) {
    ci = tl_comm(&t, s);
    CHECK_TRUE(ci != NULL);
    if (ci) CHECK_U64(ci->abi_version, s - 1);
  }
  ci = tl_comm(&t, 5);
  if (ci) CHECK_TRUE(!ci->has_name);

  /* exact counts for comm 1 */
  const tl_rec *gapi = only_start(&t, NS_EV_GROUP_API, 1, 0), *capi = only_start(&t, NS_EV_COLL_API, 1, 0),
               *grp = only_start(&t, NS_EV_GROUP, 1, 0), *coll = only_start(&t, NS_EV_COLL, 1, 0),
               *k0 = only_start(&t, NS_EV_KERNEL_CH, 1, 0), *k1 = only_start(&t, NS_EV_KERNEL_CH, 1, 1),
               *op = only_start(&t, NS_EV_PROXY_OP, 1, 0), *st = only_start(&t, NS_EV_PROXY_STEP, 1, 0),
               *net = only_start(&t, NS_EV_NET_PLUGIN, 1, 0);
  CHECK_TRUE(gapi && capi && grp && coll && k0 && k1 && op && st && net);
  if (!(gapi && capi && grp && coll && k0 && k1 && op && st && net)) CHECK_DONE();
  CHECK_U64(gapi->r.parent, 0);
  CHECK_U64(capi->r.parent, gapi->r.id);
  CHECK_U64(coll->r.parent, capi->r.id);
  CHECK_U64(coll->r.num[NS_COLL_PARENT_GROUP], grp->r.id); /* parentGroup resolved to the Group's id */
  CHECK_U64(coll->r.num[NS_COLL_SEQ], 7);
  CHECK_U64(coll->r.num[NS_COLL_CHANNELS], 2);
  CHECK_STR(coll->str[NS_COLL_FUNC], "AllReduce");
  CHECK_TRUE(!coll->has_str[NS_COLL_DTYPE]);
  CHECK_STR(coll->str[NS_COLL_ALGO], "RING");
  CHECK_TRUE(!coll->has_str[NS_COLL_PROTO]);
  CHECK_U64(k0->r.parent, coll->r.id);
  CHECK_U64(k1->r.parent, coll->r.id);
  CHECK_U64(k0->r.num[NS_KERNEL_CH_CHANNEL], 255);
  CHECK_U64(k0->r.num[NS_KERNEL_CH_PTIMER], 1000000);
  CHECK_U64(op->r.parent, coll->r.id);
  CHECK_U64(op->r.flags & NS_RF_PXN, 0);
  CHECK_U64(st->r.parent, op->r.id);
  CHECK_U64(net->r.parent, st->r.id);
  CHECK_U64(net->r.num[NS_NET_PLUGIN_KIND], 1);
  CHECK_U64(net->r.num[NS_NET_PLUGIN_IB_DEVICE], 1);
  CHECK_U64(net->r.num[NS_NET_PLUGIN_IB_WR_ID], 99);
  CHECK_U64(net->r.num[NS_NET_PLUGIN_IB_QP_NUM], 77);
  CHECK_U64(net->r.num[NS_NET_PLUGIN_IB_LENGTH], 4096);
  const tl_rec* net2 = only_start(&t, NS_EV_NET_PLUGIN, 1, 1);
  CHECK_TRUE(net2 && net2->r.num[NS_NET_PLUGIN_KIND] == 0 && net2->r.num[NS_NET_PLUGIN_DATA] == 0);
  const tl_rec* lost = only_start(&t, NS_EV_P2P, 1, 0);
  CHECK_TRUE(lost && (lost->r.flags & NS_RF_PARENT_LOST) && lost->r.parent == 0);
  if (lost) CHECK_U64((int64_t)lost->r.num[NS_P2P_PEER], -5);
  for (int ty = NS_EV_CE_COLL; ty <= NS_EV_CE_BATCH; ty++) CHECK_TRUE(only_start(&t, ty, 1, 0) != NULL);
  const tl_rec* cs = only_start(&t, NS_EV_CE_SYNC, 1, 0);
  const tl_rec* ce = only_start(&t, NS_EV_CE_COLL, 1, 0);
  if (cs && ce) CHECK_U64(cs->r.parent, ce->r.id);
  if (ce) CHECK_STR(ce->str[NS_CE_COLL_SYNC_STRATEGY], "sync");

  /* states */
  int saw_gstart = 0, saw_gend = 0, saw_send = 0, saw_kstop = 0, saw_ctrl = 0, saw_unknown = 0, saw_v1 = 0;
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind != NS_REC_STATE) continue;
    if (r->state == ncclProfilerGroupStartApiStop && r->id == gapi->r.id)
      saw_gstart = !(r->flags & NS_RF_HAS_ARG);
    if (r->state == ncclProfilerGroupEndApiStart) saw_gend++;
    if (r->state == ncclProfilerProxyStepSendWait && r->id == st->r.id) saw_send = r->arg == 4096;
    if (r->state == ncclProfilerKernelChStop && r->arg == 3000000) saw_kstop++;
    if (r->state == ncclProfilerProxyCtrlAppendEnd) saw_ctrl = r->arg == 5;
    if (r->state == 99) saw_unknown++;
    if (r->state == ncclProfilerProxyOpSendPosted) saw_v1 = r->arg == 123 && r->comm == 2;
  }
  CHECK_TRUE(saw_gstart);
  CHECK_U64(saw_gend, 1);
  CHECK_TRUE(saw_send);
  CHECK_U64(saw_kstop, 2);
  CHECK_TRUE(saw_ctrl);
  CHECK_U64(saw_unknown, 1);
  CHECK_TRUE(saw_v1);

  /* PXN */
  const tl_rec *pxn = NULL, *pxs = NULL, *pxnet = NULL;
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind != NS_REC_START || !(r->flags & NS_RF_PXN)) continue;
    if (r->type == NS_EV_PROXY_OP) pxn = &t.recs[i];
    if (r->type == NS_EV_PROXY_STEP) pxs = &t.recs[i];
    if (r->type == NS_EV_NET_PLUGIN) pxnet = &t.recs[i];
  }
  CHECK_TRUE(pxn && pxs && pxnet);
  if (pxn && pxs && pxnet) {
    CHECK_TRUE(pxn->r.flags & NS_RF_PARENT_RAW);
    CHECK_U64(pxn->r.parent, 0xdead0000ull);
    CHECK_U64(pxn->r.origin_pid, (uint64_t)(me + 100000));
    CHECK_U64(pxn->r.comm, 0);
    CHECK_U64(pxn->r.num[NS_PROXY_OP_PID], (uint64_t)(me + 100000));
    CHECK_U64(pxs->r.parent, pxn->r.id);
    CHECK_U64(pxs->r.origin_pid, (uint64_t)(me + 100000));
    CHECK_U64(pxs->r.num[NS_PROXY_STEP_STEP], 5);
    CHECK_U64(pxnet->r.parent, pxs->r.id);
  }

  /* each ProxyOp names the Coll started just before it */
  int reuse_ok = 0;
  for (size_t i = 0; i + 1 < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind != NS_REC_START || r->type != NS_EV_COLL || r->num[NS_COLL_SEQ] < 1000) continue;
    for (size_t j = i + 1; j < t.nrecs; j++) {
      const ns_record* c = &t.recs[j].r;
      if (c->kind == NS_REC_START && c->type == NS_EV_PROXY_OP) {
        if (c->parent == r->id && c->num[NS_PROXY_OP_CHANNEL] == (uint8_t)(r->num[NS_COLL_SEQ] - 1000)) reuse_ok++;
        break;
      }
    }
  }
  CHECK_U64(reuse_ok, REUSE);

  /* v1 names */
  const tl_rec* c1r = only_start(&t, NS_EV_COLL, 2, 0);
  CHECK_TRUE(c1r != NULL);
  if (c1r) {
    CHECK_STR(c1r->str[NS_COLL_FUNC], "AllReduce");
    CHECK_STR(c1r->str[NS_COLL_DTYPE], "ncclFloat32");
    CHECK_STR(c1r->str[NS_COLL_ALGO], "RING");
    CHECK_STR(c1r->str[NS_COLL_PROTO], "unknown");
    CHECK_U64(c1r->r.num[NS_COLL_CHANNELS], 4);
  }
  const tl_rec* o1 = only_start(&t, NS_EV_PROXY_OP, 2, 0);
  if (o1 && c1r) CHECK_U64(o1->r.parent, c1r->r.id);
  const tl_rec* k4 = only_start(&t, NS_EV_KERNEL_CH, 5, 0);
  CHECK_TRUE(k4 && k4->r.num[NS_KERNEL_CH_PTIMER] == 4242 && k4->r.num[NS_KERNEL_CH_CHANNEL] == 9);
  CHECK_TRUE(only_start(&t, NS_EV_KERNEL_CH, 4, 0) != NULL);
  CHECK_TRUE(only_start(&t, NS_EV_GROUP_API, 6, 0) != NULL);
  CHECK_TRUE(only_start(&t, NS_EV_P2P, 3, 0) != NULL);

  /* every START has a STOP; per-type totals match the counters */
  size_t starts = tl_count(&t, NS_REC_START, -1);
  CHECK_U64(starts, tl_count(&t, NS_REC_STOP, -1));
  CHECK_TRUE(t.have_counters);
  CHECK_U64(prop(&t.counters, NS_P_EVENTS), starts);
  CHECK_U64(prop(&t.counters, NS_P_DROPPED), 0);
  CHECK_U64(prop(&t.counters, NS_P_PXN_EVENTS), 3);
  CHECK_U64(prop(&t.counters, NS_P_PARENT_LOST), 1);
  CHECK_U64(prop(&t.counters, NS_P_BAD_HANDLES), 1);
  CHECK_U64(prop(&t.counters, NS_P_DOUBLE_STOPS) + prop(&t.counters, NS_P_STALE_HANDLES), 1);
  CHECK_U64(prop(&t.counters, NS_P_TYPE_EVENTS_BASE + NS_EV_COLL), 1 + REUSE + 1);
  CHECK_U64(prop(&t.counters, NS_P_TYPE_EVENTS_BASE + NS_EV_PROXY_OP), 1 + 1 + REUSE + 1);
  uint64_t fini_events = 0;
  for (int i = 0; i < t.nfinis; i++) fini_events += prop(&t.finis[i], NS_P_EVENTS);
  CHECK_U64(fini_events + 3, starts); /* PXN events belong to no communicator */
  tl_free(&t);
  if (!check_failures && tp_remove_dir(dump_dir)) return 3;
  CHECK_DONE();
}
