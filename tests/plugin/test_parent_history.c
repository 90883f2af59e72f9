/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: how long a stopped parent stays resolvable.
 *
 * A handle carries its event's id (capture/handle.h), so a parent named
 * long after it stopped is found with nothing to remember. Here a CollApi
 * and a ProxyStep stop, then 150,000 ProxySteps come and go (more events
 * than the writer holds open or remembers as ended, NCCLSCOPE_SLAB_EVENTS
 * 8192), then a Coll names the CollApi, a NetPlugin the first ProxyStep and
 * a KernelCh an address that is no handle of ours: the Coll and the
 * NetPlugin get their parents' ids, never a newer event's, and the KernelCh
 * is exported parentLost. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

#define STEPS 150000
#define BURST 1024

static void* start(ncclProfiler_v6_t* p, void* ctx, uint64_t type, void* parent, uint64_t step) {
  ncclProfilerEventDescr_v6_t d = {.type = type, .parentObj = parent};
  if (type == ncclProfileCollApi) {
    d.collApi.func = "AllReduce";
    d.collApi.count = 1024;
  } else if (type == ncclProfileColl) {
    d.coll.func = "AllReduce";
    d.coll.seqNumber = 7;
  } else if (type == ncclProfileProxyStep) {
    d.proxyStep.step = (int)step;
  }
  void* h = NULL;
  p->startEvent(ctx, &h, &d);
  return h;
}

int main(void) {
  char dir[128];
  tp_plugin plugin;
  static const char* const settings[] = {"NCCLSCOPE_SLAB_EVENTS", "8192", "NCCLSCOPE_POLL_MS", "1", NULL};
  void* ctx = tp_start_v6(&plugin, dir, sizeof dir, "test-history", settings, 0x4157, 1);
  if (!ctx) return 1;
  ncclProfiler_v6_t* p = plugin.v6;

  void* api = start(p, ctx, ncclProfileCollApi, NULL, 0);
  void* first_step = start(p, ctx, ncclProfileProxyStep, NULL, 0);
  CHECK_TRUE(api && first_step);
  p->stopEvent(api);
  p->stopEvent(first_step);
  /* STEPS recorded steps: a start the plugin drops (a full ring: a slow
   * writer, as under a sanitizer) returns NULL and is tried again later */
  int recorded = 0;
  for (int i = 1; recorded < STEPS && i < 20 * STEPS; i++) {
    void* h = start(p, ctx, ncclProfileProxyStep, NULL, (uint64_t)i);
    recorded += h != NULL;
    p->stopEvent(h);
    if (!h) usleep(20000);
    if (i % BURST == 0) usleep(4000); /* the writer drains and recycles */
  }
  CHECK_U64(recorded, STEPS);
  usleep(20000);
  void* coll = start(p, ctx, ncclProfileColl, api, 0);
  void* net = start(p, ctx, ncclProfileNetPlugin, first_step, 0);
  static long not_a_handle;
  void* kch = start(p, ctx, ncclProfileKernelCh, &not_a_handle, 0);
  p->stopEvent(coll);
  p->stopEvent(net);
  p->stopEvent(kch);
  CHECK_U64(p->finalize(ctx), ncclSuccess);

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  uint64_t api_id = 0, step_id = 0, coll_parent = 1, coll_flags = 0, net_parent = 1, net_flags = 0;
  uint64_t kch_parent = 1, kch_flags = 0;
  for (size_t i = 0; i < t.nrecs; i++) {
    const ns_record* r = &t.recs[i].r;
    if (r->kind != NS_REC_START) continue;
    if (r->type == NS_EV_COLL_API) api_id = r->id;
    if (r->type == NS_EV_PROXY_STEP && !step_id) step_id = r->id;
    if (r->type == NS_EV_COLL) coll_parent = r->parent, coll_flags = r->flags;
    if (r->type == NS_EV_NET_PLUGIN) net_parent = r->parent, net_flags = r->flags;
    if (r->type == NS_EV_KERNEL_CH) kch_parent = r->parent, kch_flags = r->flags;
  }
  CHECK_TRUE(t.have_counters);
  CHECK_U64(tl_count(&t, NS_REC_START, NS_EV_PROXY_STEP), STEPS + 1);
  CHECK_TRUE(api_id != 0);
  CHECK_U64(coll_parent, api_id);
  CHECK_TRUE(!(coll_flags & NS_RF_PARENT_LOST));
  CHECK_TRUE(step_id != 0);
  CHECK_U64(net_parent, step_id);
  CHECK_TRUE(!(net_flags & NS_RF_PARENT_LOST));
  CHECK_U64(kch_parent, 0);
  CHECK_TRUE(kch_flags & NS_RF_PARENT_LOST);
  tl_free(&t);
  tp_remove_dir(dir);
  CHECK_DONE();
}
