/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a trace file's intervals nested per location and written
 * as OTF2 Enter/Leave and MpiCollectiveBegin/End events (see
 * otf2_nesting.h). Single-threaded. */
#include "otf2/otf2_nesting.h"

#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iv_cmp(const void* pa, const void* pb) {
  const ns_otf2_iv *a = pa, *b = pb;
  if (a->track != b->track) return a->track < b->track ? -1 : 1;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  if (a->e != b->e) return a->e > b->e ? -1 : 1; /* the outer one first */
  return a->order < b->order ? -1 : a->order > b->order;
}

static void put_attrs(ns_otf2_state* s, const ns_otf2_iv* v) {
  OTF2_AttributeList* l = s->attrs;
  if (v->has & NS_OTF2_HAS(A_EVENT_ID)) OTF2_AttributeList_AddUint64(l, A_EVENT_ID, v->event_id);
  if (v->has & NS_OTF2_HAS(A_PARENT_ID)) OTF2_AttributeList_AddUint64(l, A_PARENT_ID, v->parent_id);
  if (v->has & NS_OTF2_HAS(A_BYTES)) OTF2_AttributeList_AddUint64(l, A_BYTES, v->bytes);
  if (v->has & NS_OTF2_HAS(A_CHANNEL)) OTF2_AttributeList_AddInt64(l, A_CHANNEL, v->channel);
  if (v->has & NS_OTF2_HAS(A_PEER)) OTF2_AttributeList_AddInt64(l, A_PEER, v->peer);
  if (v->has & NS_OTF2_HAS(A_SEQ)) OTF2_AttributeList_AddUint64(l, A_SEQ, v->seq);
  if (v->has & NS_OTF2_HAS(A_INCOMPLETE)) OTF2_AttributeList_AddUint8(l, A_INCOMPLETE, 1);
  if (v->has & NS_OTF2_HAS(A_GPU_ERROR_US)) OTF2_AttributeList_AddDouble(l, A_GPU_ERROR_US, v->err_us);
}

static void see_time(ns_otf2_state* s, uint64_t t) {
  if (t < s->t_min) s->t_min = t;
  if (t > s->t_max) s->t_max = t;
}

static void leave(ns_otf2_state* s, ns_otf2_lane* l, ns_otf2_iv* v) {
  ns_otf2_location* loc = &s->d.locs[l->loc];
  if (v->coll_emitted) {
    uint32_t root = v->root >= 0 ? (uint32_t)v->root : OTF2_UNDEFINED_UINT32;
    OTF2_EvtWriter_MpiCollectiveEnd(loc->w, NULL, v->e, (OTF2_CollectiveOp)(v->coll_op - 1), v->comm, root, v->sent,
                                    v->recv);
    loc->nevents++;
    l->coll_open = 0;
  }
  OTF2_EvtWriter_Leave(loc->w, NULL, v->e, v->region);
  loc->nevents++;
  see_time(s, v->e);
}

static void enter(ns_otf2_state* s, ns_otf2_track* t, uint32_t lane, ns_otf2_iv* v) {
  ns_otf2_lane* l = &t->lanes[lane];
  ns_otf2_location* loc = &s->d.locs[l->loc];
  put_attrs(s, v);
  OTF2_EvtWriter_Enter(loc->w, s->attrs, v->s, v->region);
  loc->nevents++;
  s->events++;
  see_time(s, v->s);
  if (!v->coll_op) return;
  uint64_t* member = &s->d.comms[v->comm].members[v->rank];
  if (*member == NS_OTF2_NONE && lane == 0) *member = l->loc;
  if (*member != l->loc || l->coll_open) {
    s->colls_regions_only++;
    return;
  }
  OTF2_EvtWriter_MpiCollectiveBegin(loc->w, NULL, v->s);
  loc->nevents++;
  l->coll_open = 1;
  v->coll_emitted = 1;
  s->colls_recorded++;
}

/* Leaves every interval of the lane that ends by `until`. */
static void pop_until(ns_otf2_state* s, ns_otf2_lane* l, uint64_t until) {
  while (l->n && s->ivs[l->stack[l->n - 1]].e <= until) leave(s, l, &s->ivs[l->stack[--l->n]]);
}

static void place(ns_otf2_state* s, ns_otf2_track* t, uint32_t idx) {
  ns_otf2_iv* v = &s->ivs[idx];
  uint32_t i = 0;
  for (; i < t->nlanes; i++) {
    ns_otf2_lane* l = &t->lanes[i];
    pop_until(s, l, v->s);
    if (!l->n || s->ivs[l->stack[l->n - 1]].e >= v->e) break;
  }
  if (i == t->nlanes) {
    ns_otf2_lane* nl = realloc(t->lanes, (t->nlanes + 1) * sizeof *nl);
    if (!nl) {
      s->d.failed = 1;
      return;
    }
    t->lanes = nl;
    memset(&nl[i], 0, sizeof nl[i]);
    char name[176];
    if (i)
      snprintf(name, sizeof name, "%s #%u", t->name, i + 1);
    else
      snprintf(name, sizeof name, "%s", t->name);
    nl[i].loc = ns_otf2_add_location(&s->d, name, t->type, t->group);
    OTF2_EvtWriter* w = nl[i].loc == NS_OTF2_NONE ? NULL : OTF2_Archive_GetEvtWriter(s->archive, nl[i].loc);
    if (!w) {
      s->d.failed = 1;
      return;
    }
    s->d.locs[nl[i].loc].w = w;
    t->nlanes++;
  }
  ns_otf2_lane* l = &t->lanes[i];
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 8;
    uint32_t* ns = realloc(l->stack, cap * sizeof *ns);
    if (!ns) {
      s->d.failed = 1;
      return;
    }
    l->stack = ns;
    l->cap = cap;
  }
  l->stack[l->n++] = idx;
  enter(s, t, i, v);
}

void ns_otf2_write_nested(ns_otf2_state* s, uint64_t end) {
  for (size_t i = 0; i < s->nivs; i++)
    if (s->ivs[i].e == NS_OTF2_NONE) s->ivs[i].e = end > s->ivs[i].s ? end : s->ivs[i].s;
  if (s->nivs) qsort(s->ivs, s->nivs, sizeof *s->ivs, iv_cmp);
  for (size_t i = 0; i < s->nivs && !s->d.failed; i++) place(s, &s->tracks[s->ivs[i].track], (uint32_t)i);
  for (size_t t = 0; t < s->ntracks; t++)
    for (uint32_t k = 0; k < s->tracks[t].nlanes; k++) pop_until(s, &s->tracks[t].lanes[k], NS_OTF2_NONE);
}
