/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the events section of `ncclscope report` (see report_events.h). */
#include "report/report_events.h"

#include <inttypes.h>

void ns_events_add(ns_asm_stats* sum, const ns_asm_stats* one) {
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    sum->events[t] += one->events[t];
    sum->never_stopped[t] += one->never_stopped[t];
    sum->with_parent[t] += one->with_parent[t];
    sum->raw_parent[t] += one->raw_parent[t];
    sum->parent_lost[t] += one->parent_lost[t];
    sum->pxn[t] += one->pxn[t];
    sum->hierarchy_digest[t] += one->hierarchy_digest[t];
  }
  sum->lost_parents += one->lost_parents;
  sum->orphan_stops += one->orphan_stops;
  sum->orphan_states += one->orphan_states;
}

void ns_events_text(const ns_asm_stats* s, FILE* out) {
  fprintf(out, "\n# events per type, as assembled (`ncclscope export` writes the same ones)\n");
  fprintf(out, "# %-24s %12s %13s %12s %11s %10s\n", "type", "events", "never stopped", "with parent",
          "parent lost", "PXN");
  for (unsigned t = 0; t < NS_EV_COUNT; t++)
    if (s->events[t])
      fprintf(out, "  %-24s %12" PRIu64 " %13" PRIu64 " %12" PRIu64 " %11" PRIu64 " %10" PRIu64 "\n",
              ns_event_type_name(t), s->events[t], s->never_stopped[t], s->with_parent[t] + s->raw_parent[t],
              s->parent_lost[t], s->pxn[t]);
  if (s->lost_parents || s->orphan_stops || s->orphan_states)
    fprintf(out, "  (%" PRIu64 " parents named but never started; %" PRIu64 " stops and %" PRIu64
                 " states of events never started)\n",
            s->lost_parents, s->orphan_stops, s->orphan_states);
}

void ns_events_json(const ns_asm_stats* s, ns_json* j) {
  nsj_arr_begin(j);
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    if (!s->events[t]) continue;
    nsj_obj_begin(j);
    nsj_kstr(j, "type", ns_event_type_name(t));
    nsj_ku64(j, "events", s->events[t]);
    nsj_ku64(j, "neverStopped", s->never_stopped[t]);
    nsj_ku64(j, "withParent", s->with_parent[t]);
    nsj_ku64(j, "rawParent", s->raw_parent[t]);
    nsj_ku64(j, "parentLost", s->parent_lost[t]);
    nsj_ku64(j, "pxn", s->pxn[t]);
    nsj_khex(j, "hierarchyDigest", s->hierarchy_digest[t]);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}
