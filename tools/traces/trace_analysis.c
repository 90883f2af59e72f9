/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: one analysis over one trace file (see trace_analysis.h).
 * Memory is what the analysis keeps (bounded by the events in flight, see
 * docs/metrics.md) plus the reader's one block and string table. */
#include "traces/trace_analysis.h"

#include <stdio.h>

/* Strings live as long as the reader, which outlives the flush below. */
static const char* reader_string(void* user, uint32_t id) { return ns_reader_string(user, id); }

ns_analysis* ns_analyze_file(const char* path, const ns_analysis_config* cfg, ns_file_health* health, char* err,
                             size_t errlen) {
  return ns_analyze_file_items(path, cfg, NULL, NULL, health, err, errlen);
}

ns_analysis* ns_analyze_file_items(const char* path, const ns_analysis_config* cfg, ns_item_hook on_item, void* user,
                                   ns_file_health* health, char* err, size_t errlen) {
  ns_reader* r = ns_reader_open(path, err, errlen);
  if (!r) return NULL;
  ns_analysis_config c;
  if (cfg)
    c = *cfg;
  else
    ns_analysis_config_default(&c);
  c.string = reader_string;
  c.string_user = r;
  ns_analysis* a = ns_analysis_create(&c);
  if (!a) {
    snprintf(err, errlen, "%s: out of memory", path);
    ns_reader_close(r);
    return NULL;
  }
  ns_item it;
  while (ns_reader_next(r, &it)) {
    if (on_item) on_item(user, &it);
    if (it.kind == NS_ITEM_COMM_INIT) {
      ns_analysis_comm(a, it.comm);
    } else if (it.kind == NS_ITEM_RECORD) {
      ns_analysis_record(a, it.record);
    }
  }
  ns_analysis_flush(a);
  if (health) ns_file_health_take(r, health);
  ns_reader_close(r);
  return a;
}
