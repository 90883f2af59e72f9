/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: counting what the hot path could not record or could not use. */
#ifndef NCCLSCOPE_CAPTURE_DROPS_H
#define NCCLSCOPE_CAPTURE_DROPS_H

#include "ring/ring.h"
#include "capture/context.h"

/* A full ring counts in its own producer-owned counter (relaxed load/store:
 * only this thread writes it, the writer reads it relaxed); a thread with no
 * ring (ring == NULL) counts in the shared process counter (relaxed RMW). */
static inline void ns_count_dropped(ns_ring* ring, uint32_t type) {
  if (ring)
    atomic_store_explicit(&ring->dropped[type],
                          atomic_load_explicit(&ring->dropped[type], memory_order_relaxed) + 1,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(&ns_cnt.dropped_unringed[type], 1, memory_order_relaxed);
}

#endif
