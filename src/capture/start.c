/* ncclscope: startEvent, version-independent part (hot path, NCCL threads).
 *
 * Sequence (labels used in docs/memory-ordering.md):
 *  A  resolve the context (range check) or, for PXN, decide not to
 *  B  resolve the parent (range check) and, for a child of a PXN event,
 *     inherit PXN and the origin pid
 *  C  reserve ring space (full: drop, count, NULL handle)
 *  D  take a slot (exhausted: drop, count, NULL handle)
 *  E  the parent's id, if its slot still holds it (S5: a seqlock read of the
 *     generation); else the writer resolves the parent handle later
 *  F  fill the slot, write the START entry, publish it (R1)
 * C comes before D so a slot exists only if its START entry does: the
 * writer learns about every slot it must recycle from that entry.
 */
#include <string.h>

#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

static void count_drop(ns_context* ctx, _Atomic uint64_t* global, uint32_t type) {
  atomic_fetch_add_explicit(global, 1, memory_order_relaxed);
  if (ctx) atomic_fetch_add_explicit(&ctx->dropped[type], 1, memory_order_relaxed);
}

void* ns_capture_start(void* context, const ns_start_args* a) {
  uint32_t type = a->type;
  if (type >= NS_EV_COUNT) {
    atomic_fetch_add_explicit(&ns_cnt.unknown_types, 1, memory_order_relaxed);
    return NULL;
  }
  /* A, B */
  ns_context* ctx = NULL;
  ns_slot* parent = NULL;
  unsigned flags = 0, ctx_index = NS_CTX_NONE;
  uint32_t comm = 0, origin_pid = 0, slab;
  uint64_t parent_code = 0;
  if (type == NS_EV_PROXY_OP && (uint32_t)a->pid != ns_sess.pid) {
    /* PXN: context and parentObj are addresses in another process. */
    if (!ns_reg.base || !(ns_sess.cfg.event_mask & (1u << type))) return NULL;
    flags = NS_RF_PXN;
    origin_pid = (uint32_t)a->pid;
    slab = NS_PXN_SLAB;
    if (a->parent) {
      flags |= NS_RF_PARENT_RAW;
      parent_code = (uint64_t)(uintptr_t)a->parent;
    }
  } else {
    parent = a->parent ? ns_slot_from_handle(a->parent) : NULL;
    uint64_t pmeta = 0;
    /* E: the parent's id while its slot still holds it (S5); otherwise the
     * writer finds the parent by its handle among the events it recycled */
    uint64_t pid = parent ? ns_slot_read_id(parent, a->parent, &pmeta) : 0;
    if (parent && pid) {
      parent_code = pid;
    } else if (parent) {
      parent_code = (uint64_t)(uintptr_t)a->parent;
      flags |= NS_ENTF_PARENT_HANDLE;
      pmeta = 0;
    }
    if (parent && (NS_META_FLAGS(pmeta) & NS_RF_PXN)) {
      /* A child of a PXN event: its context is foreign too; never touch it. */
      if (!(ns_sess.cfg.event_mask & (1u << type))) return NULL;
      flags = NS_RF_PXN;
      origin_pid = atomic_load_explicit(&parent->origin_pid, memory_order_relaxed);
      slab = NS_PXN_SLAB;
    } else {
      ctx = ns_ctx_from_ptr(context);
      if (!ctx) {
        atomic_fetch_add_explicit(&ns_cnt.bad_contexts, 1, memory_order_relaxed);
        return NULL;
      }
      if (!(ctx->mask & (1u << type))) return NULL; /* per-communicator filter */
      slab = ctx->index;
      ctx_index = ctx->index;
      comm = ctx->serial;
    }
    if (a->parent && !parent) flags |= NS_RF_PARENT_LOST;
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
  uint32_t nwords = NS_ENT_HEAD_WORDS + 2 + lay->nums + (sbytes + 7) / 8;
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, nwords) : NULL;
  if (!w) {
    ns_count_dropped(ring, type);
    if (ctx) atomic_fetch_add_explicit(&ctx->dropped[type], 1, memory_order_relaxed);
    return NULL;
  }
  /* D */
  ns_slot* s = ns_slab_alloc(slab);
  if (!s) {
    count_drop(ctx, &ns_cnt.dropped_handles[type], type);
    return NULL; /* the reservation is abandoned: nothing was published */
  }
  uint64_t id = ns_ring_next_id(ring);
  /* F */
  atomic_store_explicit(&s->meta, ns_slot_meta(type, flags & NS_RF_PXN, ctx_index, comm), memory_order_relaxed);
  atomic_store_explicit(&s->origin_pid, origin_pid, memory_order_relaxed);
  atomic_store_explicit(&s->last_state, 0, memory_order_relaxed);
  atomic_store_explicit(&s->repeats, 0, memory_order_relaxed);
  void* handle = ns_slot_handle(s);
  atomic_store_explicit(&s->running, ns_running_tag(ns_handle_gen(handle)), memory_order_relaxed);
  /* S3: release: a child that reads this id (S5) also sees the fields
   * above; NCCL hands the handle to other threads after this store. */
  atomic_store_explicit(&s->id, id, memory_order_release);

  uint64_t group_id = 0;
  if (a->group) {
    ns_slot* g = ns_slot_from_handle(a->group);
    uint64_t gmeta;
    if (g) group_id = ns_slot_read_id(g, a->group, &gmeta);
  }
  w[0] = ns_ent_w0(NS_ENT_START, type, flags, ctx_index, nwords);
  w[1] = ns_clock_ticks();
  w[2] = id;
  w[3] = (uint64_t)comm | (uint64_t)origin_pid << 32;
  w[4] = parent_code;
  w[5] = (uint64_t)(uintptr_t)s;
  uint64_t* nums = &w[6];
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
  return handle;
}
