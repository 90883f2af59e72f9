/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the communicators' lifecycle in the trace (lifecycle_queue.h). */
#include "writer/lifecycle_queue.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "session/session.h"
#include "writer/analysis_feed.h"
#include "writer/closed_events.h"
#include "writer/open_events.h"
#include "writer/writer_state.h"

struct ns_lq_item {
  struct ns_lq_item* next;
  uint32_t ctx;
  uint64_t tick;
  uint32_t tid;
};

static struct {
  pthread_mutex_t lock; /* guards the lists */
  ns_lq_item *inits, **inits_tail, *finis, **finis_tail;
  uint64_t ctx_fit_samples[NS_MAX_CONTEXTS]; /* samples of the last CLOCKFIT written (writer thread) */
} Q;

int ns_lq_open(void) {
  memset(&Q, 0, sizeof Q);
  if (pthread_mutex_init(&Q.lock, NULL) != 0) return -1;
  Q.inits_tail = &Q.inits;
  Q.finis_tail = &Q.finis;
  return 0;
}

static void free_list(ns_lq_item* l) {
  while (l) {
    ns_lq_item* n = l->next;
    free(l);
    l = n;
  }
}

void ns_lq_close(void) {
  if (Q.inits_tail) pthread_mutex_destroy(&Q.lock);
  free_list(Q.inits);
  free_list(Q.finis);
  memset(&Q, 0, sizeof Q);
}

static void post(ns_lq_item*** tail, uint32_t ctx, uint64_t tick, uint32_t tid) {
  ns_lq_item* c = calloc(1, sizeof *c);
  if (!c) return; /* the block is lost; the trace stays readable */
  c->ctx = ctx;
  c->tick = tick;
  c->tid = tid;
  pthread_mutex_lock(&Q.lock);
  **tail = c;
  *tail = &c->next;
  pthread_mutex_unlock(&Q.lock);
}

void ns_lq_post_init(uint32_t ctx_index) { post(&Q.inits_tail, ctx_index, 0, 0); }

void ns_lq_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid) { post(&Q.finis_tail, ctx_index, tick, tid); }

static ns_lq_item* take(ns_lq_item** head, ns_lq_item*** tail) {
  ns_lq_item* l = *head;
  *head = NULL;
  *tail = head;
  return l;
}

void ns_lq_take(ns_lq_item** inits, ns_lq_item** finis) {
  pthread_mutex_lock(&Q.lock);
  *inits = take(&Q.inits, &Q.inits_tail);
  *finis = take(&Q.finis, &Q.finis_tail);
  pthread_mutex_unlock(&Q.lock);
}

void ns_lq_write_inits(ns_lq_item* l) {
  ns_buf* out = &ns_ws.out;
  while (l) {
    ns_lq_item* next = l->next;
    ns_context* c = &ns_ctx_table[l->ctx];
    size_t at = ns_block_begin(out);
    ns_props_u64(out, NS_P_COMM, c->serial);
    ns_props_u64(out, NS_P_COMM_ID, c->comm_id);
    ns_props_i64(out, NS_P_RANK, c->rank);
    ns_props_u64(out, NS_P_NRANKS, (uint64_t)(c->nranks < 0 ? 0 : c->nranks));
    ns_props_u64(out, NS_P_NNODES, (uint64_t)(c->nnodes < 0 ? 0 : c->nnodes));
    if (c->has_name) ns_props_str(out, NS_P_COMM_NAME, c->name, strlen(c->name));
    ns_props_u64(out, NS_P_ABI_VERSION, (uint64_t)c->abi_version);
    ns_props_u64(out, NS_P_EVENT_MASK, c->mask);
    ns_props_str(out, NS_P_GPU_UUID, c->gpu_uuid, strlen(c->gpu_uuid));
    ns_props_u64(out, NS_P_TS, ns_clock_to_ns(&ns_sess.clock, c->init_tick));
    ns_props_u64(out, NS_P_TID, c->init_tid);
    ns_props_u64(out, NS_P_CTX_ADDR, (uint64_t)(uintptr_t)c);
    ns_block_end(out, at, NS_BLOCK_COMM_INIT, ns_ws.seq++);
    ns_ws.ctx_serial[l->ctx] = c->serial;
    memset(ns_ws.ctx_events[l->ctx], 0, sizeof ns_ws.ctx_events[l->ctx]);
    Q.ctx_fit_samples[l->ctx] = 0;
    ns_feed_comm(c);
    ns_ws.lifecycle_pending = 1;
    free(l);
    l = next;
  }
}

void ns_lq_write_inits_now(void) {
  pthread_mutex_lock(&Q.lock);
  ns_lq_item* l = take(&Q.inits, &Q.inits_tail);
  pthread_mutex_unlock(&Q.lock);
  ns_lq_write_inits(l);
}

void ns_lq_write_finis(ns_lq_item* l) {
  ns_buf* out = &ns_ws.out;
  while (l) {
    ns_lq_item* next = l->next;
    ns_context* c = &ns_ctx_table[l->ctx];
    /* Its events still open end here, before its COMM_FINI. */
    ns_open_release_context(l->ctx, ns_closed_on_close, NULL);
    ns_closed_flush();
    ns_feed_comm_end(c->serial);
    /* The exporter attaches the last CLOCKFIT seen before COMM_FINI. */
    ns_feed_clockfit(out, &ns_ws.seq, c->serial, 1, &Q.ctx_fit_samples[l->ctx]);
    size_t at = ns_block_begin(out);
    ns_props_u64(out, NS_P_COMM, c->serial);
    ns_props_u64(out, NS_P_TS, ns_clock_to_ns(&ns_sess.clock, l->tick));
    ns_props_u64(out, NS_P_TID, l->tid);
    uint64_t ev = 0, dr = 0;
    const uint64_t* events = ns_ws.ctx_events[l->ctx];
    for (int t = 0; t < NS_EV_COUNT; t++) {
      uint64_t d = atomic_load_explicit(&c->dropped[t], memory_order_relaxed);
      ev += events[t];
      dr += d;
      if (events[t]) ns_props_u64(out, NS_P_TYPE_EVENTS_BASE + t, events[t]);
      if (d) ns_props_u64(out, NS_P_TYPE_DROPPED_BASE + t, d);
    }
    ns_props_u64(out, NS_P_EVENTS, ev);
    ns_props_u64(out, NS_P_DROPPED, dr);
    ns_block_end(out, at, NS_BLOCK_COMM_FINI, ns_ws.seq++);
    ns_ws.lifecycle_pending = 1;
    ns_ws.ctx_serial[l->ctx] = 0;
    memset((void*)c->dropped, 0, sizeof c->dropped);
    /* C1: release: our reads of the entry happen before init reuses it. */
    atomic_store_explicit(&c->state, NS_CTX_FREE, memory_order_release);
    free(l);
    l = next;
  }
}

void ns_lq_write_clockfits(void) {
  if (!ns_feed_enabled()) return;
  for (uint32_t i = 0; i < NS_MAX_CONTEXTS; i++)
    if (ns_ws.ctx_serial[i]) ns_feed_clockfit(&ns_ws.out, &ns_ws.seq, ns_ws.ctx_serial[i], 0, &Q.ctx_fit_samples[i]);
}
