/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope bench/tests: what a trace holds, as one JSON line.
 *
 * ns-trace-stats PATH...   (trace files or dump directories)
 *
 * Reads every trace with the streaming reader and prints, summed over the
 * files: file bytes, valid and cut bytes, blocks, records by kind and by
 * type, sequence gaps, how many files ended cleanly, the last stop reason,
 * and the plugin's own process counters (the COUNTERS block: events,
 * dropped, dropped_ring, dropped_handles, bad_handles, write_errors, per
 * type events/dropped). Used by bench/run.sh (bytes per record) and by the
 * fault tests (recorded + dropped = started). Single-threaded.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ncclscope/trace_reader.h"

typedef struct {
  uint64_t files, clean, file_size, bytes_ok, bytes_cut, blocks, records, seq_gaps, unreadable;
  uint64_t kind[4];
  uint64_t starts_by_type[NS_EV_COUNT];
  uint64_t records_by_type[NS_EV_COUNT];
  uint64_t pxn_starts_by_type[NS_EV_COUNT];
  uint64_t counters_seen, closed, repeated;
  uint64_t events, dropped, dropped_ring, dropped_handles, bad_handles, write_errors, pxn_events, parent_lost;
  uint64_t bytes_lost, bytes_skipped;
  uint64_t type_events[NS_EV_COUNT], type_dropped[NS_EV_COUNT];
  uint64_t comms, finis;
  char stop_reason[300];
} totals;

static uint64_t prop(const ns_props_info* p, unsigned key) { return key < NS_MAX_PROP_KEY && p->has[key] ? p->u[key] : 0; }

static int endsWith(const char* s, const char* suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static void readOne(const char* path, totals* t) {
  char err[256];
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  t->files++;
  if (!r) {
    t->unreadable++;
    snprintf(t->stop_reason, sizeof t->stop_reason, "%s", err);
    return;
  }
  ns_item it;
  while (ns_reader_next(r, &it)) {
    switch (it.kind) {
      case NS_ITEM_RECORD:
        if (it.record->kind < 4) t->kind[it.record->kind]++;
        /* records_by_type counts NCCL's calls: a REPEATED record stands for
         * `arg` identical state calls; CLOSED is the plugin's, no call */
        if (it.record->kind == NS_REC_STATE && it.record->state == NS_ST_CLOSED) {
          t->closed++;
        } else if (it.record->type < NS_EV_COUNT) {
          int repeated = it.record->kind == NS_REC_STATE && it.record->state == NS_ST_REPEATED;
          t->records_by_type[it.record->type] += repeated ? it.record->arg : 1;
          if (repeated) t->repeated += it.record->arg;
        }
        if (it.record->kind == NS_REC_START && it.record->type < NS_EV_COUNT) {
          t->starts_by_type[it.record->type]++;
          if (it.record->flags & NS_RF_PXN) t->pxn_starts_by_type[it.record->type]++;
        }
        break;
      case NS_ITEM_COMM_INIT: t->comms++; break;
      case NS_ITEM_COMM_FINI: t->finis++; break;
      case NS_ITEM_COUNTERS: {
        const ns_props_info* p = it.props;
        t->counters_seen++;
        t->events += prop(p, 50), t->dropped += prop(p, 51), t->dropped_ring += prop(p, 52);
        t->dropped_handles += prop(p, 53), t->bad_handles += prop(p, 54), t->pxn_events += prop(p, 55);
        t->write_errors += prop(p, 57), t->parent_lost += prop(p, 58), t->bytes_lost += prop(p, 59);
        for (unsigned k = 0; k < NS_EV_COUNT; k++) {
          t->type_events[k] += prop(p, 100 + k);
          t->type_dropped[k] += prop(p, 120 + k);
        }
        break;
      }
      default: break;
    }
  }
  ns_reader_stats s;
  ns_reader_get_stats(r, &s);
  t->file_size += s.file_size, t->bytes_ok += s.bytes_ok, t->bytes_cut += s.bytes_cut;
  t->bytes_skipped += s.bytes_skipped;
  t->blocks += s.blocks, t->records += s.records, t->seq_gaps += s.seq_gaps, t->clean += s.clean_end != 0;
  if (s.stop_reason[0]) snprintf(t->stop_reason, sizeof t->stop_reason, "%s", s.stop_reason);
  ns_reader_close(r);
}

static void readPath(const char* path, totals* t) {
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    readOne(path, t);
    return;
  }
  DIR* d = opendir(path);
  if (!d) return;
  for (struct dirent* e; (e = readdir(d));) {
    if (!endsWith(e->d_name, NS_TRACE_FILE_SUFFIX)) continue;
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", path, e->d_name);
    readOne(full, t);
  }
  closedir(d);
}

static void printArray(const char* name, const uint64_t* v) {
  printf(",\"%s\":[", name);
  for (unsigned k = 0; k < NS_EV_COUNT; k++) printf("%s%llu", k ? "," : "", (unsigned long long)v[k]);
  printf("]");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ns-trace-stats TRACE_OR_DIR...\n");
    return 2;
  }
  totals t;
  memset(&t, 0, sizeof t);
  for (int i = 1; i < argc; i++) readPath(argv[i], &t);
  for (char* c = t.stop_reason; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '\'';
  printf("{\"files\":%llu,\"unreadable\":%llu,\"clean_end\":%llu,\"file_size\":%llu,\"bytes_ok\":%llu,"
         "\"bytes_cut\":%llu,\"blocks\":%llu,\"records\":%llu,\"starts\":%llu,\"stops\":%llu,\"states\":%llu,"
         "\"seq_gaps\":%llu,\"comms\":%llu,\"finis\":%llu,\"counters_blocks\":%llu,\"events\":%llu,\"dropped\":%llu,"
         "\"dropped_ring\":%llu,\"dropped_handles\":%llu,\"bad_handles\":%llu,\"write_errors\":%llu,"
         "\"pxn_events\":%llu,\"parent_lost\":%llu,\"closed\":%llu,\"repeated\":%llu,\"bytes_lost\":%llu,"
         "\"bytes_skipped\":%llu,\"stop_reason\":\"%s\"",
         (unsigned long long)t.files, (unsigned long long)t.unreadable, (unsigned long long)t.clean,
         (unsigned long long)t.file_size, (unsigned long long)t.bytes_ok, (unsigned long long)t.bytes_cut,
         (unsigned long long)t.blocks, (unsigned long long)t.records, (unsigned long long)t.kind[NS_REC_START],
         (unsigned long long)t.kind[NS_REC_STOP], (unsigned long long)t.kind[NS_REC_STATE],
         (unsigned long long)t.seq_gaps, (unsigned long long)t.comms, (unsigned long long)t.finis,
         (unsigned long long)t.counters_seen, (unsigned long long)t.events, (unsigned long long)t.dropped,
         (unsigned long long)t.dropped_ring, (unsigned long long)t.dropped_handles,
         (unsigned long long)t.bad_handles, (unsigned long long)t.write_errors, (unsigned long long)t.pxn_events,
         (unsigned long long)t.parent_lost, (unsigned long long)t.closed, (unsigned long long)t.repeated,
         (unsigned long long)t.bytes_lost, (unsigned long long)t.bytes_skipped, t.stop_reason);
  printArray("starts_by_type", t.starts_by_type);
  printArray("records_by_type", t.records_by_type);
  printArray("pxn_starts_by_type", t.pxn_starts_by_type);
  printArray("type_events", t.type_events);
  printArray("type_dropped", t.type_dropped);
  printf("}\n");
  return t.files && !t.unreadable ? 0 : 1;
}
