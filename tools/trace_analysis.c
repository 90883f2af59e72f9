/* ncclscope CLI: one analysis over one trace file (see trace_analysis.h).
 * Memory is what the analysis keeps (bounded by the events in flight, see
 * docs/metrics.md) plus the reader's one block and string table. */
#include "trace_analysis.h"

#include <stdio.h>

ns_analysis* ns_analyze_file(const char* path, const ns_analysis_config* cfg, ns_reader_stats* stats, char* err,
                             size_t errlen) {
  ns_reader* r = ns_reader_open(path, err, errlen);
  if (!r) return NULL;
  ns_analysis* a = ns_analysis_create(cfg);
  if (!a) {
    snprintf(err, errlen, "%s: out of memory", path);
    ns_reader_close(r);
    return NULL;
  }
  ns_item it;
  while (ns_reader_next(r, &it)) {
    if (it.kind == NS_ITEM_COMM_INIT) {
      ns_analysis_comm(a, it.comm);
    } else if (it.kind == NS_ITEM_RECORD) {
      const char* strs[NS_REC_STRS];
      for (int i = 0; i < NS_REC_STRS; i++) strs[i] = ns_reader_string(r, it.record->str[i]);
      ns_analysis_record(a, it.record, strs);
    }
  }
  ns_analysis_flush(a);
  if (stats) ns_reader_get_stats(r, stats);
  ns_reader_close(r);
  return a;
}
