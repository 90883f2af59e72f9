/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the detail decision (detail.h) applied to NCCL's mask and
 * recorded in the trace. Writer thread. */
#include "writer/detail_out.h"

#include <stdatomic.h>
#include <string.h>

#include "capture/context.h"
#include "config/config.h"
#include "trace/codec.h"
#include "writer/analysis_feed.h"
#include "writer/detail.h"

/* Every pass, not only at a change: an init racing a change may have
 * stored the mask of the moment before (it read the decision, then the
 * writer changed it and wrote every mask, then init stored its own).
 * Only at `ops` and `sampled`: at `full` the mask init stored never
 * changes, and the writer never touches NCCL's int at all. */
static void apply(int full) {
  if (ns_detail_configured() == NS_DETAIL_FULL) return;
  for (uint32_t i = 0; i < NS_MAX_CONTEXTS; i++) {
    ns_context* c = &ns_ctx_table[i];
    /* C1: acquire pairs with init's release: mask and nccl_mask are set. */
    if (atomic_load_explicit(&c->state, memory_order_acquire) != NS_CTX_ACTIVE || !c->nccl_mask) continue;
    int want = (int)ns_detail_mask(c->mask, full);
    if (__atomic_load_n(c->nccl_mask, __ATOMIC_RELAXED) != want) __atomic_store_n(c->nccl_mask, want, __ATOMIC_RELAXED);
  }
}

int ns_detail_out(ns_buf* out, uint64_t* seq, uint64_t now_ns) {
  int full, why;
  int changed = ns_detail_tick(now_ns, &full, &why);
  apply(ns_detail_full_now());
  if (!changed) return 0;
  ns_feed_detail(full, now_ns);
  size_t at = ns_block_begin(out);
  ns_props_u64(out, NS_P_TS, now_ns);
  ns_props_u64(out, NS_P_EVENT_MASK, ns_detail_mask(ns_sess.cfg.event_mask, full));
  ns_props_u64(out, NS_P_DETAIL_LEVEL, (uint64_t)ns_detail_configured());
  ns_props_u64(out, NS_P_DETAIL_FULL, (uint64_t)full);
  ns_props_u64(out, NS_P_DETAIL_REASON, (uint64_t)why);
  ns_block_end(out, at, NS_BLOCK_DETAIL, (*seq)++);
  return 1;
}

void ns_detail_out_counters(ns_buf* out, uint64_t now_ns) {
  ns_detail_counts n;
  ns_detail_counts_get(&n, now_ns);
  ns_props_u64(out, NS_P_DETAIL_SWITCHES, n.switches);
  ns_props_u64(out, NS_P_DETAIL_ESCALATIONS, n.escalations);
  ns_props_u64(out, NS_P_DETAIL_FULL_NS, n.full_ns);
}
