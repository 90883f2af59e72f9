/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, `report`: the recording's losses (report_loss.h). */
#include "report/report_loss.h"

#include <string.h>

/* The recording losses table: per process, what the plugin itself counted
 * as recorded and lost (its COUNTERS block). */
void ns_report_losses_text(const ns_file_losses* fl, size_t n, FILE* out) {
  fprintf(out, "\n# recording losses per process (the plugin's own counters, written at its last finalize)\n");
  fprintf(out, "# %-30s %12s %10s %10s %10s %11s %11s %12s\n", "process", "events", "dropped", "ring", "handles",
          "bad handles", "parent lost", "write errors");
  size_t missing = 0;
  for (size_t i = 0; i < n; i++) {
    if (!fl[i].has) {
      missing++;
      continue;
    }
    const uint64_t* u = fl[i].counters.u;
    char who[300];
    snprintf(who, sizeof who, "%.200s:%u", fl[i].host, fl[i].pid);
    fprintf(out, "  %-30s %12llu %10llu %10llu %10llu %11llu %11llu %12llu\n", who, (unsigned long long)u[NS_P_EVENTS],
            (unsigned long long)u[NS_P_DROPPED], (unsigned long long)u[NS_P_DROPPED_RING],
            (unsigned long long)u[NS_P_DROPPED_HANDLES], (unsigned long long)u[NS_P_BAD_HANDLES],
            (unsigned long long)u[NS_P_PARENT_LOST], (unsigned long long)u[NS_P_WRITE_ERRORS]);
  }
  if (missing) fprintf(out, "  (%zu process(es) without counters: they did not finalize cleanly)\n", missing);
}

ns_report_loss ns_report_loss_of(const ns_file_losses* fl, size_t n) {
  ns_report_loss l;
  memset(&l, 0, sizeof l);
  for (size_t i = 0; i < n; i++) {
    const ns_file_losses* f = &fl[i];
    l.processes++;
    l.in_trace += f->events_in_trace;
    l.dropped += f->starts_dropped;
    l.blocks_damaged += f->blocks_damaged;
    l.blocks_missing += f->blocks_missing;
    l.bytes_cut += f->bytes_cut;
    l.without_end += !f->clean_end;
    if (!f->has) {
      l.without_counters++;
      continue;
    }
    const uint64_t* u = f->counters.u;
    uint64_t recorded = u[NS_P_EVENTS];
    uint64_t absent = recorded > f->events_in_trace ? recorded - f->events_in_trace : 0;
    int write_failed = u[NS_P_WRITE_ERRORS] || u[NS_P_BYTES_LOST];
    if (!write_failed && (f->blocks_damaged || f->blocks_missing || f->bytes_cut))
      l.lost_damaged += absent;
    else
      l.lost_write += absent;
    l.steps_unanalysed += u[NS_P_STEPS_UNANALYSED];
    l.bytes_lost += u[NS_P_BYTES_LOST];
    l.write_errors += u[NS_P_WRITE_ERRORS];
  }
  l.seen = l.in_trace + l.dropped + l.lost_write + l.lost_damaged;
  l.complete = !l.dropped && !l.lost_write && !l.lost_damaged && !l.bytes_lost && !l.blocks_damaged &&
               !l.blocks_missing && !l.bytes_cut && !l.without_end && !l.without_counters;
  return l;
}

/* summary.txt's first lines: how much of what the plugin saw the traces hold. */
void ns_report_loss_text(const ns_report_loss* l, FILE* out) {
  double pct = l->seen ? 100.0 * (double)l->in_trace / (double)l->seen : 100.0;
  if (l->complete) {
    fprintf(out, "# recording: complete: the traces hold all %llu events the plugin saw (%llu process(es))\n",
            (unsigned long long)l->seen, (unsigned long long)l->processes);
  } else {
    fprintf(out, "# recording: INCOMPLETE: the traces hold %.1f %% of the events seen%s\n", pct,
            l->without_counters ? " (at least: some processes left no counters)" : "");
  }
  fprintf(out, "#   events seen %llu = in the trace %llu + dropped (ring full) %llu + lost to write errors %llu",
          (unsigned long long)l->seen, (unsigned long long)l->in_trace, (unsigned long long)l->dropped,
          (unsigned long long)l->lost_write);
  if (l->lost_damaged) fprintf(out, " + lost in damaged blocks %llu", (unsigned long long)l->lost_damaged);
  fputc('\n', out);
  if (l->complete && !l->steps_unanalysed) {
    fputc('\n', out);
    return;
  }
  fprintf(out,
          "#   bytes lost to write errors %llu (%llu write error(s)); blocks damaged %llu, missing %llu; "
          "torn tail %llu bytes\n",
          (unsigned long long)l->bytes_lost, (unsigned long long)l->write_errors, (unsigned long long)l->blocks_damaged,
          (unsigned long long)l->blocks_missing, (unsigned long long)l->bytes_cut);
  fprintf(out,
          "#   processes without an end marker %llu of %llu (without counters %llu); ProxySteps not in the\n"
          "#   plugin's own live analysis %llu (this report analyses every step in the trace)\n\n",
          (unsigned long long)l->without_end, (unsigned long long)l->processes, (unsigned long long)l->without_counters,
          (unsigned long long)l->steps_unanalysed);
}

void ns_report_loss_json(const ns_report_loss* l, ns_json* j) {
  nsj_obj_begin(j);
  nsj_ku64(j, "eventsSeen", l->seen);
  nsj_ku64(j, "eventsInTrace", l->in_trace);
  nsj_ku64(j, "eventsDropped", l->dropped);
  nsj_ku64(j, "eventsLostToWriteErrors", l->lost_write);
  nsj_ku64(j, "eventsLostInDamagedBlocks", l->lost_damaged);
  nsj_ku64(j, "stepsNotAnalysed", l->steps_unanalysed);
  nsj_ku64(j, "bytesLostToWriteErrors", l->bytes_lost);
  nsj_ku64(j, "writeErrors", l->write_errors);
  nsj_ku64(j, "blocksDamaged", l->blocks_damaged);
  nsj_ku64(j, "blocksMissing", l->blocks_missing);
  nsj_ku64(j, "bytesCut", l->bytes_cut);
  nsj_ku64(j, "processes", l->processes);
  nsj_ku64(j, "processesWithoutEnd", l->without_end);
  nsj_ku64(j, "processesWithoutCounters", l->without_counters);
  nsj_kbool(j, "complete", l->complete);
  nsj_obj_end(j);
}
