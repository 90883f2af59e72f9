/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope ABI test: every descriptor field of every event type, through
 * every ABI version (ncclProfiler_v1..v6), lands in the right num[]/str[]
 * slot of the recorded START (record.h layout). Descriptors are first
 * filled with garbage bytes, then every field is given a distinct value, so
 * a field the adapter forgets, misplaces or reads from the wrong version's
 * layout shows up as a wrong number; a slot the adapter leaves
 * uninitialised shows up as garbage (or under valgrind/MSan). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin/plugin_open.h"
#include "plugin/trace_load.h"

#define GARBAGE 0xA5

/* Distinct values per version v and field k. */
#define V(v, k) ((uint64_t)(v)*1000u + (k))
#define PTR(v, k) ((void*)(uintptr_t)(0x7f0000000000ull + V(v, k) * 16))

static const char* const k_strs[] = {"AllReduce", "ncclFloat32", "RING", "SIMPLE"};

/* The START records of comm `serial`, in start order. */
static const tl_rec* nth_start(const tl_trace* t, uint32_t serial, int type, int nth) {
  for (size_t i = 0; i < t->nrecs; i++) {
    const ns_record* r = &t->recs[i].r;
    if (r->kind == NS_REC_START && r->comm == serial && r->type == type && nth-- == 0) return &t->recs[i];
  }
  return NULL;
}

static void check_nums(const tl_rec* r, const uint64_t* want, int n, const char* what, int v) {
  if (!r) {
    fprintf(stderr, "v%d %s: no START record\n", v, what);
    check_failures++;
    return;
  }
  for (int i = 0; i < n; i++)
    if (r->r.num[i] != want[i]) {
      fprintf(stderr, "v%d %s: num[%d] = %#llx, want %#llx\n", v, what, i, (unsigned long long)r->r.num[i],
              (unsigned long long)want[i]);
      check_failures++;
    }
}

static void check_strs(const tl_rec* r, const char* const* want, int n, const char* what, int v) {
  if (!r) return;
  for (int i = 0; i < n; i++)
    if (!r->has_str[i] || strcmp(r->str[i], want[i])) {
      fprintf(stderr, "v%d %s: str[%d] = \"%s\", want \"%s\"\n", v, what, i, r->has_str[i] ? r->str[i] : "(null)",
              want[i]);
      check_failures++;
    }
}

/* Fields every version's descriptors share by name (duck-typed: each
 * version's struct is different, the names are the same). */
#define FILL_PROXY_OP(d, v)                   \
  do {                                        \
    (d).proxyOp.pid = getpid();               \
    (d).proxyOp.channelId = (uint8_t)(v + 1); \
    (d).proxyOp.peer = -(int)(v);             \
    (d).proxyOp.nSteps = (int)V(v, 3);        \
    (d).proxyOp.chunkSize = (int)V(v, 4);     \
    (d).proxyOp.isSend = 1;                   \
  } while (0)
#define FILL_COLL_NUMS(d, v)                    \
  do {                                          \
    (d).coll.seqNumber = V(v, 10);              \
    (d).coll.count = V(v, 11);                  \
    (d).coll.root = -(int)(v);                  \
    (d).coll.sendBuff = PTR(v, 13);             \
    (d).coll.recvBuff = PTR(v, 14);             \
    (d).coll.nWarps = (uint8_t)(16 + v);        \
  } while (0)
#define FILL_P2P_NUMS(d, v)        \
  do {                             \
    (d).p2p.peer = -(int)(v)-10;   \
    (d).p2p.count = V(v, 21);      \
    (d).p2p.buff = PTR(v, 22);     \
  } while (0)
#define FILL_STR4(x)                \
  do {                              \
    (x).func = k_strs[0];           \
    (x).datatype = k_strs[1];       \
    (x).algo = k_strs[2];           \
    (x).proto = k_strs[3];          \
  } while (0)

static ncclProfilerNetIbDescr_v1_t g_ib;

#define START(p, ctx, h, d) (p)->startEvent((ctx), &(h), &(d))
#define START_STOP(p, ctx, d)         \
  do {                                \
    void* h_ = NULL;                  \
    (p)->startEvent((ctx), &h_, &(d)); \
    CHECK_TRUE(h_ != NULL);                \
    (p)->stopEvent(h_);               \
  } while (0)

/* ProxyOp and a ProxyStep under it: every version. */
#define DRIVE_PROXY(p, ctx, D, v)             \
  do {                                        \
    D dp_;                                    \
    void* op_ = NULL;                         \
    memset(&dp_, GARBAGE, sizeof dp_);        \
    dp_.type = ncclProfileProxyOp;            \
    dp_.parentObj = NULL;                     \
    FILL_PROXY_OP(dp_, v);                    \
    START(p, ctx, op_, dp_);                  \
    CHECK_TRUE(op_ != NULL);                       \
    memset(&dp_, GARBAGE, sizeof dp_);        \
    dp_.type = ncclProfileProxyStep;          \
    dp_.parentObj = op_;                      \
    dp_.proxyStep.step = -(int)V(v, 30);      \
    START_STOP(p, ctx, dp_);                  \
    (p)->stopEvent(op_);                      \
  } while (0)
/* KernelCh and NetPlugin: v3+ (SET_PTIMER sets the pTimer where the
 * version has one). */
#define DRIVE_KCH_NET(p, ctx, D, v)                                                  \
  do {                                                                               \
    D dk_;                                                                           \
    memset(&dk_, GARBAGE, sizeof dk_);                                               \
    dk_.type = ncclProfileKernelCh;                                                  \
    dk_.parentObj = NULL;                                                            \
    dk_.kernelCh.channelId = (uint8_t)(40 + v);                                      \
    SET_PTIMER(dk_, v);                                                              \
    START_STOP(p, ctx, dk_);                                                         \
    memset(&dk_, GARBAGE, sizeof dk_);                                               \
    dk_.type = ncclProfileNetPlugin;                                                 \
    dk_.parentObj = NULL;                                                            \
    dk_.netPlugin.id = (int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER); \
    dk_.netPlugin.data = &g_ib;                                                      \
    START_STOP(p, ctx, dk_);                                                         \
  } while (0)

/* The expected nums of the types every version shares. */
static void check_common(const tl_trace* t, uint32_t serial, int v, int has_kch, int has_ptimer) {
  uint64_t op[] = {(uint64_t)(v + 1), (uint64_t)(int64_t)(-(int)v), V(v, 3), V(v, 4), 1, (uint64_t)getpid()};
  check_nums(nth_start(t, serial, NS_EV_PROXY_OP, 0), op, 6, "ProxyOp", v);
  uint64_t step[] = {(uint64_t)(int64_t)(-(int)V(v, 30))};
  check_nums(nth_start(t, serial, NS_EV_PROXY_STEP, 0), step, 1, "ProxyStep", v);
  if (has_kch) {
    uint64_t k[] = {(uint64_t)(40 + v), has_ptimer ? V(v, 41) : 0};
    check_nums(nth_start(t, serial, NS_EV_KERNEL_CH, 0), k, 2, "KernelCh", v);
    uint64_t n[] = {NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER, (uint64_t)(uintptr_t)&g_ib, 1,
                    (uint64_t)(int64_t)g_ib.qp.device, g_ib.qp.wr_id, (uint64_t)(int64_t)g_ib.qp.opcode,
                    (uint64_t)(int64_t)g_ib.qp.qpNum, g_ib.qp.length};
    check_nums(nth_start(t, serial, NS_EV_NET_PLUGIN, 0), n, 8, "NetPlugin", v);
  }
}

/* Coll and P2p: *_nch are the descriptors' channel fields (0 where the
 * version has none), group the Group START's id (0 before v5). */
static void check_coll_p2p(const tl_trace* t, uint32_t serial, int v, uint64_t coll_nch, uint64_t p2p_nch,
                           int with_group) {
  const tl_rec* g = nth_start(t, serial, NS_EV_GROUP, 0);
  uint64_t gid = with_group && g ? g->r.id : 0;
  CHECK_TRUE(!with_group || g);
  uint64_t c[] = {V(v, 10), V(v, 11), (uint64_t)(int64_t)(-(int)v), (uint64_t)(uintptr_t)PTR(v, 13),
                  (uint64_t)(uintptr_t)PTR(v, 14), coll_nch, (uint64_t)(16 + v), gid};
  const tl_rec* coll = nth_start(t, serial, NS_EV_COLL, 0);
  check_nums(coll, c, 8, "Coll", v);
  check_strs(coll, k_strs, 4, "Coll", v);
  uint64_t p[] = {(uint64_t)(int64_t)(-(int)v - 10), V(v, 21), (uint64_t)(uintptr_t)PTR(v, 22), p2p_nch, gid};
  const tl_rec* p2p = nth_start(t, serial, NS_EV_P2P, 0);
  check_nums(p2p, p, 5, "P2p", v);
  check_strs(p2p, k_strs, 2, "P2p", v);
}

int main(void) {
  char dir[128];
  tp_plugin plugin;
  if (tp_start(&plugin, dir, sizeof dir, "test-fields")) return 2;
  g_ib.type = ncclProfileQp;
  g_ib.qp.device = 3;
  g_ib.qp.wr_id = 0x1234567890ull;
  g_ib.qp.opcode = -2;
  g_ib.qp.qpNum = 77;
  g_ib.qp.length = 65536;
  int mask = 0;
  void* ctx[7] = {0};
  /* Serials follow init order: v1 gets 1, ..., v6 gets 6. */
  CHECK_U64(plugin.v1->init(&ctx[1], &mask), ncclSuccess);
  CHECK_U64(plugin.v2->init(&ctx[2], &mask), ncclSuccess);
  CHECK_U64(plugin.v3->init(&ctx[3], &mask), ncclSuccess);
  CHECK_U64(plugin.v4->init(&ctx[4], &mask, "four", 0x4444, 1, 8, 4, NULL), ncclSuccess);
  CHECK_U64(plugin.v5->init(&ctx[5], 0x5555, &mask, "five", 1, 8, 5, NULL), ncclSuccess);
  CHECK_U64(plugin.v6->init(&ctx[6], 0x6666, &mask, "six", 1, 8, 6, NULL), ncclSuccess);

  { /* v1: numeric codes (AllReduce = 4, ncclFloat32 = 7, RING = 1, SIMPLE = 2) */
    ncclProfilerEventDescr_v1_t d;
    memset(&d, GARBAGE, sizeof d);
    d.type = ncclProfileColl;
    d.parentObj = NULL;
    FILL_COLL_NUMS(d, 1);
    d.coll.nMaxChannels = 9;
    d.coll.func = 4, d.coll.datatype = 7, d.coll.algo = 1, d.coll.proto = 2;
    START_STOP(plugin.v1, ctx[1], d);
    memset(&d, GARBAGE, sizeof d);
    d.type = ncclProfileP2p;
    d.parentObj = NULL;
    FILL_P2P_NUMS(d, 1);
    d.p2p.func = 4, d.p2p.datatype = 7;
    START_STOP(plugin.v1, ctx[1], d);
    DRIVE_PROXY(plugin.v1, ctx[1], ncclProfilerEventDescr_v1_t, 1);
  }
/* Coll and P2p with string fields (v2+). SET_CHANNELS sets the version's
 * channel fields, SET_GROUP the v5+ parentGroup. */
#define DRIVE_COLL_P2P(p, c, D, v, group) \
  do {                                    \
    D dd_;                                \
    memset(&dd_, GARBAGE, sizeof dd_);    \
    dd_.type = ncclProfileColl;           \
    dd_.parentObj = NULL;                 \
    FILL_COLL_NUMS(dd_, v);               \
    FILL_STR4(dd_.coll);                  \
    SET_COLL_CHANNELS(dd_);               \
    SET_GROUP(dd_.coll, group);           \
    START_STOP(p, c, dd_);                \
    memset(&dd_, GARBAGE, sizeof dd_);    \
    dd_.type = ncclProfileP2p;            \
    dd_.parentObj = NULL;                 \
    FILL_P2P_NUMS(dd_, v);                \
    dd_.p2p.func = k_strs[0];             \
    dd_.p2p.datatype = k_strs[1];         \
    SET_P2P_CHANNELS(dd_);                \
    SET_GROUP(dd_.p2p, group);            \
    START_STOP(p, c, dd_);                \
  } while (0)
/* v2, v3: a maximum channel count on Coll only, no parentGroup. */
#define SET_COLL_CHANNELS(d) ((d).coll.nMaxChannels = 9)
#define SET_P2P_CHANNELS(d) (void)0
#define SET_GROUP(x, g) (void)(g)
  DRIVE_COLL_P2P(plugin.v2, ctx[2], ncclProfilerEventDescr_v2_t, 2, NULL);
  DRIVE_PROXY(plugin.v2, ctx[2], ncclProfilerEventDescr_v2_t, 2);
  DRIVE_COLL_P2P(plugin.v3, ctx[3], ncclProfilerEventDescr_v3_t, 3, NULL);
  DRIVE_PROXY(plugin.v3, ctx[3], ncclProfilerEventDescr_v3_t, 3);
#define SET_PTIMER(d, v) (void)0 /* v3: no pTimer */
  DRIVE_KCH_NET(plugin.v3, ctx[3], ncclProfilerEventDescr_v3_t, 3);
#undef SET_PTIMER
#define SET_PTIMER(d, v) ((d).kernelCh.pTimer = V(v, 41))
  /* v4+: nChannels (also the KernelCh expectation) and pTimer; v5+: parentGroup. */
#undef SET_COLL_CHANNELS
#undef SET_P2P_CHANNELS
#define SET_COLL_CHANNELS(d) ((d).coll.nChannels = 9)
#define SET_P2P_CHANNELS(d) ((d).p2p.nChannels = 10)
  DRIVE_COLL_P2P(plugin.v4, ctx[4], ncclProfilerEventDescr_v4_t, 4, NULL);
  DRIVE_PROXY(plugin.v4, ctx[4], ncclProfilerEventDescr_v4_t, 4);
  DRIVE_KCH_NET(plugin.v4, ctx[4], ncclProfilerEventDescr_v4_t, 4);
#undef SET_GROUP
#define SET_GROUP(x, g) ((x).parentGroup = (g))
#define DRIVE_API(p, c, D, v)                                     \
  do {                                                            \
    D da_;                                                          \
    void* grp = NULL;                                             \
    memset(&da_, GARBAGE, sizeof da_);                                \
    da_.type = ncclProfileGroup;                                    \
    da_.parentObj = NULL;                                           \
    START(p, c, grp, da_);                                          \
    DRIVE_COLL_P2P(p, c, D, v, grp);                                \
    (p)->stopEvent(grp);                                          \
    memset(&da_, GARBAGE, sizeof da_);                                \
    da_.type = ncclProfileGroupApi;                                 \
    da_.parentObj = NULL;                                           \
    da_.groupApi.groupDepth = -(int)(v);                            \
    da_.groupApi.graphCaptured = true;                              \
    START_STOP(p, c, da_);                                          \
    memset(&da_, GARBAGE, sizeof da_);                                \
    da_.type = ncclProfileCollApi;                                  \
    da_.parentObj = NULL;                                           \
    da_.collApi.func = k_strs[0];                                   \
    da_.collApi.datatype = k_strs[1];                               \
    da_.collApi.count = V(v, 50);                                   \
    da_.collApi.root = -(int)(v);                                   \
    da_.collApi.stream = PTR(v, 52);                                \
    da_.collApi.graphCaptured = false;                              \
    START_STOP(p, c, da_);                                          \
    memset(&da_, GARBAGE, sizeof da_);                                \
    da_.type = ncclProfileP2pApi;                                   \
    da_.parentObj = NULL;                                           \
    da_.p2pApi.func = k_strs[0];                                    \
    da_.p2pApi.datatype = k_strs[1];                                \
    da_.p2pApi.count = V(v, 60);                                    \
    da_.p2pApi.stream = PTR(v, 61);                                 \
    da_.p2pApi.graphCaptured = true;                                \
    START_STOP(p, c, da_);                                          \
    memset(&da_, GARBAGE, sizeof da_);                                \
    da_.type = ncclProfileKernelLaunch;                             \
    da_.parentObj = NULL;                                           \
    da_.kernelLaunch.stream = PTR(v, 70);                           \
    START_STOP(p, c, da_);                                          \
  } while (0)
  DRIVE_API(plugin.v5, ctx[5], ncclProfilerEventDescr_v5_t, 5);
  DRIVE_PROXY(plugin.v5, ctx[5], ncclProfilerEventDescr_v5_t, 5);
  DRIVE_KCH_NET(plugin.v5, ctx[5], ncclProfilerEventDescr_v5_t, 5);
  DRIVE_API(plugin.v6, ctx[6], ncclProfilerEventDescr_v6_t, 6);
  DRIVE_PROXY(plugin.v6, ctx[6], ncclProfilerEventDescr_v6_t, 6);
  DRIVE_KCH_NET(plugin.v6, ctx[6], ncclProfilerEventDescr_v6_t, 6);
  {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, GARBAGE, sizeof d);
    d.type = ncclProfileCeColl;
    d.parentObj = NULL;
    d.ceColl.seqNumber = V(6, 80);
    d.ceColl.count = V(6, 81);
    d.ceColl.root = -6;
    d.ceColl.stream = PTR(6, 83);
    d.ceColl.sendBuff = PTR(6, 84);
    d.ceColl.recvBuff = PTR(6, 85);
    d.ceColl.intraBatchSync = true;
    d.ceColl.batchSize = (uint32_t)V(6, 87);
    d.ceColl.numBatches = (uint32_t)V(6, 88);
    d.ceColl.ceSeqNum = (uint32_t)V(6, 89);
    d.ceColl.func = k_strs[0];
    d.ceColl.datatype = k_strs[1];
    d.ceColl.syncStrategy = k_strs[2];
    START_STOP(plugin.v6, ctx[6], d);
    memset(&d, GARBAGE, sizeof d);
    d.type = ncclProfileCeSync;
    d.parentObj = NULL;
    d.ceCollSync.isComplete = true;
    d.ceCollSync.nRanks = -6;
    START_STOP(plugin.v6, ctx[6], d);
    memset(&d, GARBAGE, sizeof d);
    d.type = ncclProfileCeBatch;
    d.parentObj = NULL;
    d.ceCollBatch.numOps = -7;
    d.ceCollBatch.totalBytes = V(6, 91);
    d.ceCollBatch.useIntraSync = true;
    START_STOP(plugin.v6, ctx[6], d);
  }
  for (int v = 1; v <= 6; v++) {
    /* finalize wants no outstanding references: the KernelCh expectation of
     * the v4+ Coll/P2p is released by the writer's max age or at finalize. */
    CHECK_U64(v == 1   ? plugin.v1->finalize(ctx[v])
             : v == 2 ? plugin.v2->finalize(ctx[v])
             : v == 3 ? plugin.v3->finalize(ctx[v])
             : v == 4 ? plugin.v4->finalize(ctx[v])
             : v == 5 ? plugin.v5->finalize(ctx[v])
                      : plugin.v6->finalize(ctx[v]),
             ncclSuccess);
  }

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  for (int v = 1; v <= 6; v++) {
    uint32_t serial = (uint32_t)v;
    check_coll_p2p(&t, serial, v, 9, v >= 4 ? 10 : 0, v >= 5);
    check_common(&t, serial, v, v >= 3, v >= 4);
  }
  uint64_t ga[] = {(uint64_t)(int64_t)-5, 1};
  check_nums(nth_start(&t, 5, NS_EV_GROUP_API, 0), ga, 2, "GroupApi", 5);
  for (int v = 5; v <= 6; v++) {
    uint64_t ca[] = {V(v, 50), (uint64_t)(int64_t)(-v), (uint64_t)(uintptr_t)PTR(v, 52), 0};
    const tl_rec* r = nth_start(&t, (uint32_t)v, NS_EV_COLL_API, 0);
    check_nums(r, ca, 4, "CollApi", v);
    check_strs(r, k_strs, 2, "CollApi", v);
    uint64_t pa[] = {V(v, 60), (uint64_t)(uintptr_t)PTR(v, 61), 1};
    r = nth_start(&t, (uint32_t)v, NS_EV_P2P_API, 0);
    check_nums(r, pa, 3, "P2pApi", v);
    check_strs(r, k_strs, 2, "P2pApi", v);
    uint64_t kl[] = {(uint64_t)(uintptr_t)PTR(v, 70)};
    check_nums(nth_start(&t, (uint32_t)v, NS_EV_KERNEL_LAUNCH, 0), kl, 1, "KernelLaunch", v);
  }
  uint64_t ce[] = {V(6, 80), V(6, 81), (uint64_t)(int64_t)-6, (uint64_t)(uintptr_t)PTR(6, 83),
                   (uint64_t)(uintptr_t)PTR(6, 84), (uint64_t)(uintptr_t)PTR(6, 85), 1, V(6, 87), V(6, 88), V(6, 89)};
  const tl_rec* r = nth_start(&t, 6, NS_EV_CE_COLL, 0);
  check_nums(r, ce, 10, "CeColl", 6);
  const char* const ce_strs[] = {k_strs[0], k_strs[1], k_strs[2]};
  check_strs(r, ce_strs, 3, "CeColl", 6);
  uint64_t cs[] = {1, (uint64_t)(int64_t)-6};
  check_nums(nth_start(&t, 6, NS_EV_CE_SYNC, 0), cs, 2, "CeSync", 6);
  uint64_t cb[] = {(uint64_t)(int64_t)-7, V(6, 91), 1};
  check_nums(nth_start(&t, 6, NS_EV_CE_BATCH, 0), cb, 3, "CeBatch", 6);
  tl_free(&t);
  tp_remove_dir(dir);
  CHECK_DONE();
}
