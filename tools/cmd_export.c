/* ncclscope CLI: `ncclscope export DIR --format jsonl|chrome -o FILE`.
 * Files are exported one after another into one output, written to a
 * temporary file renamed into place at the end (a failed export never leaves
 * a half-written FILE). Messages go to stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_metrics.h"
#include "trace_dir.h"

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope export DIR [--format jsonl|chrome] [-o FILE] [--max-open N]\n"
          "\n"
          "Converts every *.nstrace file of the dump directory DIR (one per process)\n"
          "into one output file.\n"
          "\n"
          "  -f, --format jsonl   JSON Lines, one record per event, state and lifecycle\n"
          "                       call (schema: docs/cli.md) [default]\n"
          "  -f, --format chrome  Trace Event JSON for ui.perfetto.dev / chrome://tracing\n"
          "  -o, --output FILE    output file; '-' or absent: standard output\n"
          "  --max-open N         most events open (started, not stopped) at once per\n"
          "                       trace; beyond it the oldest are written unfinished\n"
          "                       (\"incomplete\":true). About 600 bytes each [2000000]\n"
          "  -h, --help           this text\n"
          "\n"
          "Damaged traces (a process killed mid-run) are exported up to the last\n"
          "complete block; the cut is reported on stderr. Exit status: 0 if at least\n"
          "one trace was readable, 1 if none was, 2 on bad arguments.\n");
}

static const ns_format* format_named(const char* name) {
  if (strcmp(name, "jsonl") == 0) return &ns_format_jsonl;
  if (strcmp(name, "chrome") == 0 || strcmp(name, "perfetto") == 0) return &ns_format_chrome;
  return NULL;
}

static void report_file(const char* path, const ns_walk_result* r, size_t max_open) {
  const ns_reader_stats* s = &r->reader;
  if (s->bytes_cut)
    fprintf(stderr, "ncclscope: warning: %s: %" PRIu64 " of %" PRIu64 " bytes cut (%s); exported what precedes\n",
            path, s->bytes_cut, s->file_size, s->stop_reason);
  else if (!s->clean_end)
    fprintf(stderr, "ncclscope: note: %s: no end marker (the process was killed, or is still running)\n", path);
  else if (s->end_how == NS_END_EXIT)
    fprintf(stderr, "ncclscope: note: %s: the process exited without finalizing its communicators; the trace was "
                    "ended at exit\n", path);
  else if (s->end_how == NS_END_SIGNAL)
    fprintf(stderr, "ncclscope: note: %s: the process was ended by signal %d; the trace was ended in its handler\n",
            path, s->end_signal);
  if (s->seq_gaps) fprintf(stderr, "ncclscope: warning: %s: %" PRIu64 " block(s) missing\n", path, s->seq_gaps);
  if (r->events_incomplete)
    fprintf(stderr, "ncclscope: note: %s: %" PRIu64 " event(s) never stopped (exported with \"incomplete\":true)\n",
            path, r->events_incomplete);
  if (r->evicted_open)
    fprintf(stderr,
            "ncclscope: warning: %s: more than %zu events open at once: %" PRIu64 " of them (oldest first) were "
            "written unfinished (\"incomplete\":true); their later stops and states count as orphans; "
            "--max-open raises the cap\n",
            path, max_open, r->evicted_open);
  if (r->orphan_stops || r->orphan_states)
    fprintf(stderr, "ncclscope: note: %s: %" PRIu64 " stop(s) and %" PRIu64 " state(s) of events whose start is missing\n",
            path, r->orphan_stops, r->orphan_states);
}

/* Counts COMM_INIT items: the number of (process, rank) pairs. */
static void count_comm(void* self, ns_wfile* f, const ns_item* it) {
  (void)f;
  if (it->kind == NS_ITEM_COMM_INIT) ((ns_export_totals*)self)->ranks++;
}

int ns_export_dir(const char* dir, const ns_format* fmt, const char* out_path, const ns_export_ext* extra,
                  const ns_export_options* opts, ns_export_totals* totals) {
  char err[1024];
  ns_export_totals local;
  if (!totals) totals = &local;
  memset(totals, 0, sizeof *totals);
  ns_trace_list list;
  if (ns_trace_dir_list(dir, &list, err, sizeof err)) {
    fprintf(stderr, "ncclscope: cannot read the dump directory %s\n", err);
    return 1;
  }
  totals->files_found = (int)list.n;
  if (list.n == 0) {
    fprintf(stderr, "ncclscope: no trace files (*.nstrace) in %s\n", dir);
    ns_trace_list_free(&list);
    return 1;
  }

  int to_stdout = !out_path || strcmp(out_path, "-") == 0;
  char tmp[4096] = "";
  FILE* out = stdout;
  if (!to_stdout) {
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    out = fopen(tmp, "w");
    if (!out) {
      fprintf(stderr, "ncclscope: cannot write %s: %s\n", tmp, strerror(errno));
      ns_trace_list_free(&list);
      return 1;
    }
  }
  int rc = 1;
  ns_export_metrics* metrics = NULL;
  ns_sink sink;
  void* state = fmt->make(out, &sink);
  ns_walk* w = state ? ns_walk_new(&sink) : NULL;
  if (!w) {
    fprintf(stderr, "ncclscope: out of memory\n");
    goto close_out;
  }
  *(ns_walk**)state = w;
  if (opts) ns_walk_set_max_open(w, opts->max_open);
  ns_export_ext counter = {.self = totals, .item = count_comm};
  ns_walk_add_ext(w, &counter);
  metrics = ns_export_metrics_new(ns_walk_max_open(w));
  if (metrics) {
    ns_export_ext mx;
    ns_export_metrics_ext(metrics, &mx);
    ns_walk_add_ext(w, &mx);
  } else {
    fprintf(stderr, "ncclscope: warning: out of memory; exporting without derived metrics\n");
  }
  if (extra) ns_walk_add_ext(w, extra);

  for (size_t i = 0; i < list.n; i++) {
    ns_walk_result res;
    if (ns_walk_file(w, (int)i, list.paths[i], &res, err, sizeof err)) {
      fprintf(stderr, "ncclscope: warning: skipped %s\n", err);
      continue;
    }
    totals->files_read++;
    if (res.reader.bytes_cut || res.reader.seq_gaps) totals->files_damaged++;
    totals->events += res.events_done;
    totals->incomplete += res.events_incomplete + res.evicted_open;
    for (int t = 0; t < NS_EV_COUNT; t++) totals->events_by_type[t] += res.events_by_type[t];
    report_file(list.paths[i], &res, ns_walk_max_open(w));
  }
  ns_walk_free(w);
  ns_export_metrics_free(metrics);
  metrics = NULL;
  int finish_rc = fmt->finish(state);
  state = NULL;
  if (finish_rc) fprintf(stderr, "ncclscope: error while finishing the output\n");
  if (ferror(out)) {
    fprintf(stderr, "ncclscope: write error on %s\n", to_stdout ? "standard output" : tmp);
    goto close_out;
  }
  rc = totals->files_read ? 0 : 1;
  if (!rc && totals->files_damaged)
    fprintf(stderr, "ncclscope: warning: %d of %d trace file(s) damaged; see above\n", totals->files_damaged,
            totals->files_found);
  if (!totals->files_read) fprintf(stderr, "ncclscope: none of the %d trace file(s) in %s is readable\n",
                                   totals->files_found, dir);

close_out:
  ns_export_metrics_free(metrics);
  if (state) fmt->finish(state);
  if (!to_stdout) {
    if (fclose(out) != 0 && !rc) {
      fprintf(stderr, "ncclscope: cannot write %s: %s\n", tmp, strerror(errno));
      rc = 1;
    }
    if (!rc && rename(tmp, out_path) != 0) {
      fprintf(stderr, "ncclscope: cannot rename %s to %s: %s\n", tmp, out_path, strerror(errno));
      rc = 1;
    }
    if (rc) remove(tmp);
  } else {
    fflush(stdout);
  }
  ns_trace_list_free(&list);
  return rc;
}

int ns_cmd_export(int argc, char** argv) {
  const char* dir = NULL;
  const char* out = NULL;
  const ns_format* fmt = &ns_format_jsonl;
  ns_export_options opts = {0};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
      const char* v = a[1] == '-' && a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        fprintf(stderr, "ncclscope export: %s needs a value (jsonl or chrome)\n", a);
        return 2;
      }
      fmt = format_named(v);
      if (!fmt) {
        fprintf(stderr, "ncclscope export: unknown format '%s' (use jsonl or chrome)\n", v);
        return 2;
      }
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strncmp(a, "--output=", 9) == 0) {
      const char* v = a[1] == '-' && a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        fprintf(stderr, "ncclscope export: %s needs a file name\n", a);
        return 2;
      }
      out = v;
    } else if (strcmp(a, "--max-open") == 0 || strncmp(a, "--max-open=", 11) == 0) {
      const char* v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
      char* end = NULL;
      unsigned long long n = v ? strtoull(v, &end, 10) : 0;
      if (!v || end == v || *end || n < 1 || n > (1ull << 40) || v[0] == '-') {
        fprintf(stderr, "ncclscope export: --max-open wants a number of events >= 1, not '%s'\n", v ? v : "");
        return 2;
      }
      opts.max_open = (size_t)n;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "ncclscope export: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    } else if (!dir) {
      dir = a;
    } else {
      fprintf(stderr, "ncclscope export: one directory only ('%s' and '%s')\n", dir, a);
      return 2;
    }
  }
  if (!dir) {
    fprintf(stderr, "ncclscope export: missing the dump directory\n");
    usage(stderr);
    return 2;
  }
  return ns_export_dir(dir, fmt, out, NULL, &opts, NULL);
}
