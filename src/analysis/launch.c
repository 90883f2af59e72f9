/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: kernel launches, the "before" side of the GPU clock
 * bound.
 *
 * A kernel cannot begin before the call that launched it began. NCCL (v5+)
 * brackets that call with a KernelLaunch event whose parent is the GroupApi;
 * a Coll/P2p reaches the same GroupApi through its CollApi/P2pApi parent.
 * The Coll/P2p start itself is no such bound in general: NCCL starts it
 * after the launch call returned, when the kernel may already be running.
 * Only for a graph-captured plan does NCCL start it in a host callback that
 * the kernel waits for (enqueue.cc: persistent plans use the host stream);
 * the CollApi/P2pApi's graphCaptured flag says so.
 *
 * The API events stop before the ops that name them start, so their links
 * are kept here, past their release by the assembler, in a pool found
 * through the id map, and forgotten at the first look (once per grace
 * period) after they were idle for 5 grace periods; ops resolve their
 * launch at their start and again when they are final.
 * Runs on the thread that owns the ns_analysis.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

static ns_launch_link* link_find(ns_analysis* a, uint64_t id) {
  uint64_t* at = id ? ns_idmap_get(&a->link_index, id) : NULL;
  return at ? &a->links[*at - 1] : NULL;
}

/* The link of id, created (zeroed, with that type) when absent; NULL when out of memory. */
static ns_launch_link* link_get(ns_analysis* a, uint64_t id, uint8_t type, uint64_t ts) {
  ns_launch_link* l = link_find(a, id);
  if (l) return l;
  size_t at = a->links_used;
  if (a->links_free) { /* a hole the last scan left: O(1), never a walk over the pool */
    at = a->links_free - 1;
    a->links_free = (size_t)a->links[at].parent;
  } else if (at == a->links_cap) {
    ns_launch_link* grown = ns_array_reach(a->links, &a->links_cap, at, sizeof *grown, 64);
    if (!grown) return NULL;
    a->links = grown;
  }
  int inserted;
  uint64_t* slot = ns_idmap_put(&a->link_index, id, &inserted);
  if (!slot) {
    if (at < a->links_used) { /* the hole goes back on the list */
      a->links[at].parent = a->links_free;
      a->links_free = at + 1;
    }
    return NULL;
  }
  *slot = at + 1;
  l = &a->links[at];
  memset(l, 0, sizeof *l);
  l->id = id;
  l->type = type;
  l->first_seen = l->last_activity = ts;
  if (at == a->links_used) a->links_used++;
  return l;
}

static void touch(ns_launch_link* l, uint64_t ts) {
  if (ts > l->last_activity) l->last_activity = ts;
}

void ns_launch_started(ns_analysis* a, const ns_event* ev) {
  const ns_record* r = &ev->start;
  uint64_t parent = (r->flags & NS_RF_PARENT_RAW) ? 0 : r->parent;
  if (r->type == NS_EV_COLL_API || r->type == NS_EV_P2P_API) {
    ns_launch_link* l = link_get(a, r->id, r->type, r->ts);
    if (!l || l->type != r->type) return;
    l->parent = parent;
    l->graph = (r->type == NS_EV_COLL_API ? r->num[NS_COLL_API_GRAPH_CAPTURED]
                                          : r->num[NS_P2P_API_GRAPH_CAPTURED]) != 0;
    touch(l, r->ts);
  } else if (r->type == NS_EV_KERNEL_LAUNCH && parent) {
    ns_launch_link* g = link_get(a, parent, NS_EV_GROUP_API, r->ts);
    if (!g || g->type != NS_EV_GROUP_API) return;
    touch(g, r->ts);
    ns_group_state* gs = &g->grp;
    for (uint32_t i = 0; i < gs->n; i++)
      if (gs->comm[i] == r->comm) {
        if (r->ts < gs->launch_ts[i]) gs->launch_ts[i] = r->ts;
        return;
      }
    if (gs->n == NS_GROUP_COMMS) return; /* more comms in one group: theirs stay unknown (no bound, never a wrong one) */
    gs->comm[gs->n] = r->comm;
    gs->launch_ts[gs->n] = r->ts;
    gs->n++;
  }
}

static ns_launch_link* api_link(ns_analysis* a, uint64_t api_id) {
  ns_launch_link* l = link_find(a, api_id);
  return l && (l->type == NS_EV_COLL_API || l->type == NS_EV_P2P_API) ? l : NULL;
}

uint64_t ns_launch_for(ns_analysis* a, uint64_t api_id, uint32_t comm) {
  ns_launch_link* api = api_link(a, api_id);
  ns_launch_link* g = api ? link_find(a, api->parent) : NULL;
  if (!g || g->type != NS_EV_GROUP_API) return 0;
  touch(api, a->now);
  touch(g, a->now);
  for (uint32_t i = 0; i < g->grp.n; i++)
    if (g->grp.comm[i] == comm) return g->grp.launch_ts[i];
  return 0;
}

int ns_launch_graph(ns_analysis* a, uint64_t api_id) {
  ns_launch_link* api = api_link(a, api_id);
  return api && api->graph;
}

void ns_launch_scan(ns_analysis* a, int flush) {
  size_t used = 0;
  a->links_free = 0;
  for (size_t i = 0; i < a->links_used; i++) {
    ns_launch_link* l = &a->links[i];
    if (l->id) {
      uint64_t age = a->now > l->first_seen ? a->now - l->first_seen : 0;
      uint64_t idle = a->now > l->last_activity ? a->now - l->last_activity : 0;
      if (!flush && age <= a->cfg.max_age_ns && idle <= 5 * a->cfg.grace_ns) {
        used = i + 1;
        continue;
      }
      ns_idmap_del(&a->link_index, l->id);
      l->id = 0;
    }
    l->parent = a->links_free; /* every hole goes on the free list, the highest on top */
    a->links_free = i + 1;
  }
  a->links_used = used;
  /* The holes at or above the new end are the list's top: off it. */
  while (a->links_free > used) a->links_free = (size_t)a->links[a->links_free - 1].parent;
}

void ns_launch_free(ns_analysis* a) {
  ns_idmap_free(&a->link_index);
  free(a->links);
  a->links = NULL;
  a->links_cap = a->links_used = a->links_free = 0;
}
