/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the detail decision (detail.h) applied to NCCL's mask and
 * recorded in the trace. Writer thread. */
#include "writer/detail_out.h"

#include <string.h>

#include "capture/context.h"
#include "config/config.h"
#include "session/session.h"
#include "trace/codec.h"
#include "writer/analysis_feed.h"
#include "writer/detail.h"

int ns_detail_out(ns_buf* out, uint64_t* seq, uint64_t now_ns) {
  int full, why;
  uint64_t since_ns;
  /* the hot path puts the decision into NCCL's mask at the next group's boundary (ns_detail_apply) */
  if (!ns_detail_tick(now_ns, &full, &why, &since_ns)) return 0;
  ns_feed_detail(full, since_ns);
  size_t at = ns_block_begin(out);
  ns_props_u64(out, NS_P_TS, since_ns);
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
