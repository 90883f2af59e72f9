/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: a CUDA-graph replay long after the capture.
 *
 * NCCL re-emits a captured plan's Coll at every replay with parentObj = the
 * CollApi handle from the capture, which stopped long before. The handle
 * carries the CollApi's id (capture/handle.h), so the Coll names it however
 * many events ran since, and no handle of those events equals it. Here the
 * writer holds at most 64 open events (NCCLSCOPE_SLAB_EVENTS) and
 * thousands of events run between the capture and each replay. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

/* `events` ProxySteps, started and stopped; 1 if none got a handle equal to one of `olds`. */
static int churn(ncclProfiler_v6_t* p, void* ctx, int events, void* const* olds, int nolds) {
  ncclProfilerEventDescr_v6_t d;
  int distinct = 1;
  for (int i = 0; i < events; i++) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileProxyStep;
    d.proxyStep.step = i;
    void* h = NULL;
    p->startEvent(ctx, &h, &d);
    for (int k = 0; k < nolds; k++) distinct &= h != olds[k];
    p->stopEvent(h);
    if (i % 16 == 15) usleep(3000); /* the writer drains (POLL_MS=1, HOLD_MS=0) */
  }
  return distinct;
}

static void* start_api(ncclProfiler_v6_t* p, void* ctx, uint64_t type, void* parent, int captured) {
  ncclProfilerEventDescr_v6_t d = {.type = type, .parentObj = parent};
  if (type == ncclProfileGroupApi) {
    d.groupApi.groupDepth = 1;
    d.groupApi.graphCaptured = captured;
  } else {
    d.collApi.func = "AllReduce";
    d.collApi.datatype = "ncclFloat32";
    d.collApi.count = 1024;
    d.collApi.graphCaptured = captured;
  }
  void* h = NULL;
  p->startEvent(ctx, &h, &d);
  CHECK_TRUE(h != NULL);
  return h;
}

static void replay_coll(ncclProfiler_v6_t* p, void* ctx, void* coll_api, uint64_t seq) {
  ncclProfilerEventDescr_v6_t d = {.type = ncclProfileColl, .parentObj = coll_api};
  d.coll.func = "AllReduce";
  d.coll.seqNumber = seq;
  d.coll.count = 1024;
  d.coll.nChannels = 0; /* no KernelCh expected */
  void* h = NULL;
  p->startEvent(ctx, &h, &d);
  CHECK_TRUE(h != NULL);
  p->stopEvent(h);
}

int main(void) {
  char dir[128];
  tp_plugin plugin;
  static const char* const settings[] = {"NCCLSCOPE_SLAB_EVENTS", "64", "NCCLSCOPE_HOLD_MS", "0",
                                         "NCCLSCOPE_POLL_MS", "1", NULL};
  void* ctx = tp_start_v6(&plugin, dir, sizeof dir, "test-graph", settings, 0x6a, 2);
  if (!ctx) return 1;
  ncclProfiler_v6_t* p = plugin.v6;

  /* Capture: GroupApi -> CollApi, both graphCaptured, stopped at once. */
  void* g_api = start_api(p, ctx, ncclProfileGroupApi, NULL, 1);
  void* c_api = start_api(p, ctx, ncclProfileCollApi, g_api, 1);
  p->stopEvent(c_api);
  p->stopEvent(g_api);
  /* An eager (not captured) CollApi, stopped the same way: the control. */
  void* e_api = start_api(p, ctx, ncclProfileCollApi, NULL, 0);
  p->stopEvent(e_api);

  /* Replays, each after 2,560 other events. */
  void* const olds[2] = {c_api, e_api};
  for (int r = 0; r < 3; r++) {
    CHECK_TRUE(churn(p, ctx, 40 * 64, olds, 2));
    replay_coll(p, ctx, c_api, (uint64_t)r);
  }
  replay_coll(p, ctx, e_api, 99);
  CHECK_U64(p->finalize(ctx), ncclSuccess);

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  uint64_t captured_id = 0, eager_id = 0;
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind == NS_REC_START && r->type == NS_EV_COLL_API) {
      if (r->num[NS_COLL_API_GRAPH_CAPTURED]) captured_id = r->id;
      else eager_id = r->id;
    }
  }
  CHECK_TRUE(captured_id && eager_id);
  int replays = 0, eager_ok = 0;
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind != NS_REC_START || r->type != NS_EV_COLL) continue;
    if (r->num[NS_COLL_SEQ] == 99) {
      /* An ordinary CollApi, stopped as long ago: named as well. */
      eager_ok = r->parent == eager_id && !(r->flags & NS_RF_PARENT_LOST);
      continue;
    }
    replays++;
    CHECK_U64(r->parent, captured_id);
    CHECK_TRUE(!(r->flags & NS_RF_PARENT_LOST));
  }
  CHECK_U64(replays, 3);
  CHECK_TRUE(eager_ok);
  CHECK_TRUE(t.have_counters);
  CHECK_U64(t.have_counters ? (t.counters.has[NS_P_PARENT_LOST] ? t.counters.u[NS_P_PARENT_LOST] : 0) : 0, 0);
  tl_free(&t);
  tp_remove_dir(dir);
  CHECK_DONE();
}
