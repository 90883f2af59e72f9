/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: startEvent, version-independent part (hot path, NCCL threads).
 *
 * Sequence (labels used in docs/memory-ordering.md):
 *  A  resolve the context (range check) or, for PXN, decide not to
 *  B  the parent's id from its handle (capture/handle.h); a child of a PXN
 *     event is PXN too (its origin pid: the writer takes its parent's)
 *  C  reserve ring space (full: drop, count, NULL handle)
 *  D  write the START entry and publish it (R1); the handle carries the id
 * Nothing is read or written outside the thread's ring and the read-only
 * context and session: no memory is shared with the writer but the ring.
 */
#include <string.h>

#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/handle.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"
#include "session/session.h"

void* ns_capture_start(void* context, const ns_start_args* a) {
  uint32_t type = a->type;
  if (type >= NS_EV_COUNT) {
    atomic_fetch_add_explicit(&ns_cnt.unknown_types, 1, memory_order_relaxed);
    return NULL;
  }
  /* A, B */
  ns_context* ctx = NULL;
  unsigned flags = 0, ctx_index = NS_CTX_NONE;
  uint32_t comm = 0, origin_pid = 0;
  uint64_t parent_code = 0;
  if (type == NS_EV_PROXY_OP && (uint32_t)a->pid != ns_sess.pid) {
    /* PXN: context and parentObj are another process's. The parent handle
     * is kept as it is, never decoded here (the other process's plugin may
     * not be this one). */
    if (!(ns_sess.cfg.event_mask & (1u << type))) return NULL;
    flags = NS_RF_PXN;
    origin_pid = (uint32_t)a->pid;
    if (a->parent) {
      flags |= NS_RF_PARENT_RAW;
      parent_code = (uint64_t)(uintptr_t)a->parent;
    }
  } else {
    int parent_ours = a->parent && ns_handle_ok(a->parent);
    if (parent_ours) parent_code = ns_handle_id(a->parent);
    if (parent_ours && ns_handle_pxn(a->parent)) {
      /* A child of a PXN event: its context is foreign too; never touch it. */
      if (!(ns_sess.cfg.event_mask & (1u << type))) return NULL;
      flags = NS_RF_PXN;
    } else {
      ctx = ns_ctx_from_ptr(context);
      if (!ctx) {
        atomic_fetch_add_explicit(&ns_cnt.bad_contexts, 1, memory_order_relaxed);
        return NULL;
      }
      if (!(ctx->mask & (1u << type))) return NULL; /* per-communicator filter */
      if ((1u << type) & NS_DETAIL_BOUNDARY_TYPES) ns_detail_apply(ctx);
      ctx_index = ctx->index;
      comm = ctx->serial;
    }
    if (a->parent && !parent_ours) flags |= NS_RF_PARENT_LOST;
  }

  /* C */
  size_t slen[NS_REC_STRS];
  const ns_type_layout* lay = &ns_type_layouts[type];
  uint32_t sbytes = 0;
  for (unsigned i = 0; i < lay->strs; i++) {
    const char* s = a->str[i];
    slen[i] = s ? strnlen(s, NS_STR_MAX + 1) : 0;
    if (slen[i] > NS_STR_MAX) {
      slen[i] = NS_STR_MAX;
      flags |= NS_RF_STR_TRUNC;
    }
    sbytes += 1 + (uint32_t)slen[i];
  }
  uint32_t nwords = NS_ENT_START_NUMS + lay->nums + (sbytes + 7) / 8;
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, nwords) : NULL;
  if (!w) {
    ns_count_dropped(ring, type);
    if (ctx) atomic_fetch_add_explicit(&ctx->dropped[type], 1, memory_order_relaxed);
    return NULL;
  }
  /* D */
  uint64_t id = ns_ring_next_id(ring);
  uint64_t group_id = a->group && ns_handle_ok(a->group) ? ns_handle_id(a->group) : 0;
  w[NS_ENT_W0] = ns_ent_w0(NS_ENT_START, type, flags, ctx_index, nwords);
  w[NS_ENT_TICK] = ns_clock_ticks();
  w[NS_ENT_ID] = id;
  w[NS_ENT_COMM_AUX] = ns_ent_comm_aux(comm, origin_pid);
  w[NS_ENT_START_PARENT] = parent_code;
  uint64_t* nums = &w[NS_ENT_START_NUMS];
  for (unsigned i = 0; i < lay->nums; i++) nums[i] = a->num[i];
  if (a->group && a->group_num < lay->nums) nums[a->group_num] = group_id;
  uint8_t* sp = (uint8_t*)&nums[lay->nums];
  for (unsigned i = 0; i < lay->strs; i++) {
    if (!a->str[i]) {
      *sp++ = NS_STR_NULL;
      continue;
    }
    *sp++ = (uint8_t)slen[i];
    memcpy(sp, a->str[i], slen[i]);
    sp += slen[i];
  }
  ns_ring_commit(ring);
  ns_ring_prefetch_next(ring);
  return ns_handle_make(id, type, flags & NS_RF_PXN);
}
