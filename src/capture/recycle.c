/* ncclscope: recycling event slots (see recycle.h). Writer thread only. */
#include "capture/recycle.h"

#include "capture/context.h"

void ns_recycle_release_context(uint32_t ctx_index) { ns_slab_release(ctx_index); }

static uint64_t hold_ns(unsigned type) {
  uint64_t h = (uint64_t)ns_sess.cfg.hold_ms * 1000000u;
  switch (type) {
    case NS_EV_GROUP_API: case NS_EV_COLL_API: case NS_EV_P2P_API: case NS_EV_GROUP:
    case NS_EV_COLL: case NS_EV_P2P: case NS_EV_CE_COLL:
      return h; /* children may start long after the stop */
    case NS_EV_PROXY_OP: case NS_EV_PROXY_STEP:
      return h / 10; /* children start while it runs; a little slack */
    default:
      return 0;
  }
}

void ns_recycle_run(uint64_t now, uint64_t* recycled, uint64_t* forced) {
  uint64_t max_age = (uint64_t)ns_sess.cfg.max_age_ms * 1000000u;
  for (uint32_t k = 0; k < NS_MAX_SLABS; k++) {
    ns_slab* sl = &ns_reg.slabs[k];
    /* Acquire: pairs with ns_slab_activate's release, so its `populated` is seen. */
    if (atomic_load_explicit(&sl->active, memory_order_acquire)) ns_slab_prefault(k);
    if (!sl->nlive) continue;
    int pressure = ns_slab_free_count(k) < sl->n / 8;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < sl->nlive; i++) {
      ns_slot* s = &sl->slots[sl->live[i]];
      int freed = 0;
      if (!atomic_load_explicit(&s->running, memory_order_relaxed)) {
        /* S4: acquire pairs with the release decrements of stop: every
         * stopper's use of the slot happens before we recycle it. */
        int32_t r = atomic_load_explicit(&s->refs, memory_order_acquire);
        unsigned type = NS_META_TYPE(atomic_load_explicit(&s->meta, memory_order_relaxed));
        int pinned = s->w_start_ns == NS_SLOT_PINNED; /* never aged out (age stays 0 below) */
        if (r == 0) {
          if (!s->w_zero_ns) s->w_zero_ns = now;
          if ((!pinned || pressure) && now - s->w_zero_ns >= hold_ns(type)) {
            int32_t zero = 0;
            freed = atomic_compare_exchange_strong_explicit(&s->refs, &zero, -1, memory_order_acq_rel,
                                                            memory_order_relaxed);
          }
        } else {
          s->w_zero_ns = 0;
          uint64_t age = now > s->w_start_ns ? now - s->w_start_ns : 0;
          if (age >= max_age || (pressure && age >= hold_ns(type))) {
            /* Children that never came: bounded by age, or by slab pressure. */
            atomic_exchange_explicit(&s->refs, -1, memory_order_acq_rel);
            freed = 1;
            (*forced)++;
          }
        }
      }
      if (freed) {
        ns_slab_free(k, s);
        (*recycled)++;
      } else {
        sl->live[keep++] = sl->live[i];
      }
    }
    sl->nlive = keep;
  }
}
