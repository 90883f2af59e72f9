/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a dump directory's traces exported into one output. Files
 * are exported one after another, written to a temporary file renamed into
 * place at the end (a failed export never leaves a half-written output), and
 * each file's damage and unfinished events reported on stderr. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_vars.h"
#include "export/export.h"
#include "export/export_metrics.h"
#include "ncclscope/config_vars.h"
#include "traces/trace_dir.h"
#include "util/safefile.h"

const ns_dir_output* ns_format_dir_output(const ns_format* fmt) {
#ifdef NCCLSCOPE_HAVE_OTF2
  if (fmt == &ns_format_otf2) return &ns_otf2_dir;
#endif
  (void)fmt;
  return NULL;
}

/* Per-file warnings; 1 when the file yielded nothing. */
static int report_file(const char* path, const ns_walk_result* r, size_t max_open) {
  int nothing = ns_file_health_print("ncclscope", path, &r->health);
  const ns_asm_stats* st = &r->assembled;
  if (r->events_incomplete) {
    /* what closed them: the plugin's reasons (events NCCL never stops), else the end of the data */
    char why[256] = "";
    size_t at = 0;
    uint64_t closed = 0;
    for (unsigned k = 1; k < NS_CLOSE_REASONS; k++) {
      if (!st->closed[k]) continue;
      closed += st->closed[k];
      int w =
          snprintf(why + at, sizeof why - at, "%s%s %" PRIu64, at ? ", " : "", ns_close_reason_name(k), st->closed[k]);
      if (w > 0 && (size_t)w < sizeof why - at) at += (size_t)w;
    }
    fprintf(stderr,
            "ncclscope: note: %s: %" PRIu64
            " event(s) never stopped (exported with \"incomplete\":true and "
            "\"incompleteReason\"%s%s%s)\n",
            path, r->events_incomplete, closed ? "; closed by the plugin: " : "", why,
            r->events_incomplete > closed ? "; the rest still open when the trace ended" : "");
  }
  if (st->evicted_open)
    fprintf(stderr,
            "ncclscope: warning: %s: more than %zu events open at once: %" PRIu64
            " of them (oldest first) were "
            "written unfinished (\"incomplete\":true); their later stops and states count as orphans; "
            "--max-open raises the cap\n",
            path, max_open, st->evicted_open);
  if (st->orphan_stops || st->orphan_states)
    fprintf(stderr,
            "ncclscope: note: %s: %" PRIu64 " stop(s) and %" PRIu64 " state(s) of events whose start is missing\n",
            path, st->orphan_stops, st->orphan_states);
  return nothing;
}

/* A progress line on stderr (a terminal only) once an export has run a
 * second (NCCLSCOPE_PROGRESS_MS: another delay, for tests). */
typedef struct {
  const ns_trace_list* list;
  double t0, last, after_s;
  int shown;
} progress;

static double progress_delay_s(void) { return ns_cli_var(NS_CFG_NCCLSCOPE_PROGRESS_MS) / 1000.0; }

/* Above this, a Chrome JSON export warns and suggests perfetto (NCCLSCOPE_CHROME_WARN_MB: another bound). */
static off_t chrome_warn_bytes(void) { return (off_t)ns_cli_var(NS_CFG_NCCLSCOPE_CHROME_WARN_MB) << 20; }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void show_progress(void* user, int index, uint64_t offset) {
  progress* p = user;
  double now = now_s();
  if (now - p->t0 < p->after_s || (p->shown && now - p->last < 0.25)) return;
  p->last = now;
  p->shown = 1;
  fprintf(stderr, "\rncclscope: file %d of %zu, %.1f MB read, %.0f s   ", index + 1, p->list->n, (double)offset / 1e6,
          now - p->t0);
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
    return NS_EXIT_FAIL;
  }
  totals->files_found = (int)list.n;
  if (list.n == 0) {
    fprintf(stderr, "ncclscope: no trace files (*.nstrace) in %s\n", dir);
    ns_trace_list_free(&list);
    return NS_EXIT_FAIL;
  }

  ns_out o;
  FILE* out = NULL;
  char tmp_dir[4096] = "";
  const ns_dir_output* dir_out = ns_format_dir_output(fmt);
  if (dir_out) {
    int reserve_rc = dir_out->reserve(out_path, opts && opts->force, tmp_dir, sizeof tmp_dir, err, sizeof err);
    if (reserve_rc != NS_EXIT_OK) {
      fprintf(stderr, "ncclscope: %s\n", err);
      ns_trace_list_free(&list);
      return reserve_rc;
    }
  } else if (ns_out_open(&o, out_path ? out_path : "-", ns_cli_file_mode(), err, sizeof err) != 0) {
    fprintf(stderr, "ncclscope: cannot write %s\n", err);
    ns_trace_list_free(&list);
    return NS_EXIT_FAIL;
  } else {
    out = o.f;
  }
  int rc = NS_EXIT_FAIL;
  ns_export_metrics* metrics = NULL;
  ns_sink sink;
  void* state = dir_out ? dir_out->make(tmp_dir, &sink) : fmt->make(out, &sink);
  ns_walk* w = state ? ns_walk_new(&sink) : NULL;
  if (!w) {
    if (state || !dir_out) fprintf(stderr, "ncclscope: out of memory\n"); /* a directory's make said why */
    goto close_out;
  }
  *(ns_walk**)state = w;
  if (opts) ns_walk_set_max_open(w, opts->max_open);
  if (opts) ns_walk_set_filter(w, &opts->filter);
  progress pr = {.list = &list, .t0 = now_s(), .after_s = progress_delay_s()};
  if (isatty(2)) ns_walk_set_progress(w, show_progress, &pr);
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

  int empty = 0; /* files that yielded nothing: unreadable, or no record and no communicator */
  for (size_t i = 0; i < list.n; i++) {
    ns_walk_result res;
    if (ns_walk_file(w, (int)i, list.paths[i], &res, err, sizeof err)) {
      fprintf(stderr, "ncclscope: warning: skipped %s\n", err);
      empty++;
      continue;
    }
    totals->files_read++;
    if (res.reader.damaged || res.reader.seq_gaps || res.reader.blocks_duplicate) totals->files_damaged++;
    totals->events += res.events_done;
    totals->incomplete += res.events_incomplete + res.assembled.evicted_open;
    for (int t = 0; t < NS_EV_COUNT; t++) totals->events_by_type[t] += res.events_by_type[t];
    empty += report_file(list.paths[i], &res, ns_walk_max_open(w));
  }
  if (pr.shown) fputs("\n", stderr);
  int filtered_out = opts && ns_walk_selected(w) == 0 &&
                     (opts->filter.types || opts->filter.nranks || opts->filter.ncomms || opts->filter.has_from ||
                      opts->filter.has_to);
  ns_walk_free(w);
  ns_export_metrics_free(metrics);
  metrics = NULL;
  int finish_rc = fmt->finish(state);
  state = NULL;
  if (finish_rc) fprintf(stderr, "ncclscope: error while finishing the output\n");
  if (finish_rc && dir_out) goto close_out; /* an archive that did not close is not kept */
  if (out && ferror(out)) {
    fprintf(stderr, "ncclscope: write error on %s\n", o.is_stdout ? "standard output" : o.shown);
    goto close_out;
  }
  if (empty == (int)list.n) {
    fprintf(stderr, "ncclscope: none of the %zu trace file(s) in %s yielded anything\n", list.n, dir);
    goto close_out;
  }
  if (filtered_out) {
    fprintf(stderr,
            "ncclscope: no event of the %" PRIu64
            " in %s matches the filter (--types, --ranks, --comm, "
            "--from, --to); nothing written\n",
            totals->events, dir);
    rc = NS_EXIT_USAGE;
    goto close_out;
  }
  rc = empty ? NS_EXIT_PARTIAL : NS_EXIT_OK;
  if (totals->files_damaged || empty)
    fprintf(stderr, "ncclscope: warning: %d of %zu trace file(s) damaged, %d yielded nothing; see above%s\n",
            totals->files_damaged, list.n, empty, empty ? " (exit status 4)" : "");

close_out:
  ns_export_metrics_free(metrics);
  if (state) fmt->finish(state);
  if (dir_out) {
    if (rc != NS_EXIT_FAIL && rc != NS_EXIT_USAGE &&
        dir_out->commit(tmp_dir, out_path, opts && opts->force, err, sizeof err) != 0) {
      fprintf(stderr, "ncclscope: %s\n", err);
      rc = NS_EXIT_FAIL;
    }
    if (rc == NS_EXIT_FAIL || rc == NS_EXIT_USAGE) dir_out->discard(tmp_dir);
  } else if (rc == NS_EXIT_FAIL || rc == NS_EXIT_USAGE) {
    ns_out_abort(&o);
  } else {
    off_t size = o.is_stdout ? -1 : ftello(out);
    if (ns_out_commit(&o, err, sizeof err) != 0) {
      fprintf(stderr, "ncclscope: cannot write %s\n", err);
      rc = NS_EXIT_FAIL;
    } else if (fmt == &ns_format_chrome && size > chrome_warn_bytes()) {
      fprintf(stderr,
              "ncclscope: warning: %s is %.0f MB of Trace Event JSON, more than a browser opens comfortably;\n"
              "  --format perfetto writes the same tracks 15-25 times smaller (ui.perfetto.dev opens it), or\n"
              "  narrow it down: --types, --ranks, --comm, --from/--to\n",
              out_path, (double)size / 1e6);
    }
  }
  ns_trace_list_free(&list);
  return rc;
}
