/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope export DIR --format jsonl|chrome|perfetto|otf2 -o FILE`.
 * Files are exported one after another into one output, written to a
 * temporary file renamed into place at the end (a failed export never leaves
 * a half-written FILE). Messages go to stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "export_metrics.h"
#include "kineto_merge.h"
#include "trace_dir.h"
#include "util/safefile.h"

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope export DIR [--format jsonl|chrome|perfetto|otf2] [-o FILE] [--force] [--max-open N] [--no-compress]\n"
          "                        [--types LIST] [--ranks LIST] [--comm IDS] [--from US] [--to US]\n"
          "\n"
          "Converts every *.nstrace file of the dump directory DIR (one per process)\n"
          "into one output file.\n"
          "\n"
          "  -f, --format jsonl   JSON Lines, one record per event, state and lifecycle\n"
          "                       call (schema: docs/cli.md) [default]\n"
          "  -f, --format chrome  Trace Event JSON for ui.perfetto.dev / chrome://tracing\n"
          "  -f, --format perfetto  Perfetto's protobuf trace for ui.perfetto.dev and\n"
          "                       trace_processor: the tracks of chrome, deflated in\n"
          "                       bundles (compressed_packets) as Perfetto writes them\n"
          "  --no-compress        perfetto: packets as they are (about 5 times larger)\n"
#ifdef NCCLSCOPE_HAVE_OTF2
          "  -f, --format otf2    an OTF2 archive for Vampir and the Score-P tools: -o names\n"
          "                       its directory (open DIR/traces.otf2); --force replaces one\n"
#else
          "  -f, --format otf2    not available: this ncclscope was built without OTF2\n"
          "                       support (install libotf2-trace-dev and rebuild)\n"
#endif
          "  -o, --output FILE    output file; '-' or absent: standard output\n"
          "  --max-open N         most events open (started, not stopped) at once per\n"
          "                       trace; beyond it the oldest are written unfinished\n"
          "                       (\"incomplete\":true). About 600 bytes each [2000000]\n"
          "  --types LIST         only these event types (Coll,ProxyOp,... as NCCLSCOPE_EVENT_MASK)\n"
          "  --ranks LIST         only these ranks (0,2-5; -1: PXN work for other processes)\n"
          "  --comm IDS           only these communicator ids (0x... or decimal, comma-separated)\n"
          "  --from US, --to US   only events that start in [US, US] (microseconds, as `ts`)\n"
          "  --merge-kineto TRACE.json[.gz]  chrome: written into this PyTorch profiler\n"
          "                       (Kineto) trace, on its clock, NCCL kernels linked\n"
          "  --merge-unaligned    merge even when the trace cannot be aligned (another\n"
          "                       host or run, no time base), marked \"unaligned\"\n"
          "  -h, --help           this text\n"
          "\n"
          "Damaged traces are exported block by block around the damage, which is\n"
          "reported on stderr. A chrome output over 256 MB is warned about. The\n"
          "perfetto format is not written to a terminal. Exit status: 0 done, 1\n"
          "nothing exported, 2 bad arguments or a filter no event matches, 3 a\n"
          "trace file yielded nothing (docs/cli.md).\n");
}

static const ns_format* format_named(const char* name) {
  if (strcmp(name, "jsonl") == 0) return &ns_format_jsonl;
  if (strcmp(name, "chrome") == 0) return &ns_format_chrome;
  if (strcmp(name, "perfetto") == 0) return &ns_format_perfetto;
#ifdef NCCLSCOPE_HAVE_OTF2
  if (strcmp(name, "otf2") == 0) return &ns_format_otf2;
#endif
  return NULL;
}

/* How a format that writes a directory writes it; NULL for file formats. */
static const ns_dir_output* dir_output(const ns_format* fmt) {
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
      int w = snprintf(why + at, sizeof why - at, "%s%s %" PRIu64, at ? ", " : "", ns_close_reason_name(k),
                       st->closed[k]);
      if (w > 0 && (size_t)w < sizeof why - at) at += (size_t)w;
    }
    fprintf(stderr,
            "ncclscope: note: %s: %" PRIu64 " event(s) never stopped (exported with \"incomplete\":true and "
            "\"incompleteReason\"%s%s%s)\n",
            path, r->events_incomplete, closed ? "; closed by the plugin: " : "", why,
            r->events_incomplete > closed ? "; the rest still open when the trace ended" : "");
  }
  if (st->evicted_open)
    fprintf(stderr,
            "ncclscope: warning: %s: more than %zu events open at once: %" PRIu64 " of them (oldest first) were "
            "written unfinished (\"incomplete\":true); their later stops and states count as orphans; "
            "--max-open raises the cap\n",
            path, max_open, st->evicted_open);
  if (st->orphan_stops || st->orphan_states)
    fprintf(stderr, "ncclscope: note: %s: %" PRIu64 " stop(s) and %" PRIu64 " state(s) of events whose start is missing\n",
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

static double progress_delay_s(void) {
  const char* v = getenv("NCCLSCOPE_PROGRESS_MS");
  char* end;
  long ms = v && *v ? strtol(v, &end, 10) : -1;
  return v && *v && !*end && ms >= 0 && ms <= 3600000 ? (double)ms / 1000.0 : 1.0;
}

/* Above this, a Chrome JSON export warns and suggests perfetto (NCCLSCOPE_CHROME_WARN_MB: another bound). */
static off_t chrome_warn_bytes(void) {
  const char* v = getenv("NCCLSCOPE_CHROME_WARN_MB");
  char* end;
  long mb = v && *v ? strtol(v, &end, 10) : -1;
  return (off_t)(v && *v && !*end && mb >= 0 && mb <= 1 << 20 ? mb : 256) << 20;
}

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
  const ns_dir_output* dir_out = dir_output(fmt);
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
    fprintf(stderr, "ncclscope: out of memory\n");
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
    fprintf(stderr, "ncclscope: no event of the %" PRIu64 " in %s matches the filter (--types, --ranks, --comm, "
                    "--from, --to); nothing written\n", totals->events, dir);
    rc = NS_EXIT_USAGE;
    goto close_out;
  }
  rc = empty ? NS_EXIT_PARTIAL : NS_EXIT_OK;
  if (totals->files_damaged || empty)
    fprintf(stderr, "ncclscope: warning: %d of %zu trace file(s) damaged, %d yielded nothing; see above%s\n",
            totals->files_damaged, list.n, empty, empty ? " (exit status 3)" : "");

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

/* Calls fn on every comma-separated item of v; 0, or -1 at the first bad one. */
static int each_item(const char* v, int (*fn)(char* item, ns_export_filter* f), ns_export_filter* f) {
  char buf[1024];
  if (strlen(v) >= sizeof buf) return -1;
  strcpy(buf, v);
  int n = 0;
  char* save = NULL;
  for (char* t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++)
    if (fn(t, f) != 0) return -1;
  return n ? 0 : -1;
}

/* "3" or "2-5"; -1 names PXN work for other processes. */
static int rank_item(char* t, ns_export_filter* f) {
  char* end;
  long a = strtol(t, &end, 10), b = a;
  if (end == t) return -1;
  if (*end == '-') {
    char* e2;
    b = strtol(end + 1, &e2, 10);
    if (e2 == end + 1 || *e2) return -1;
  } else if (*end) {
    return -1;
  }
  if (a < -1 || b < a || b > 1 << 20) return -1;
  for (long r = a; r <= b; r++) {
    if (f->nranks == NS_FILTER_MAX) return -1;
    f->ranks[f->nranks++] = (int32_t)r;
  }
  return 0;
}

static int comm_item(char* t, ns_export_filter* f) {
  char* end;
  errno = 0;
  unsigned long long id = strtoull(t, &end, 0);
  if (errno || end == t || *end || *t == '-' || f->ncomms == NS_FILTER_MAX) return -1;
  f->comms[f->ncomms++] = id;
  return 0;
}

static int type_item(char* t, ns_export_filter* f) {
  if (strncmp(t, "ncclProfile", 11) == 0) t += 11;
  for (unsigned k = 0; k < NS_EV_COUNT; k++)
    if (strcasecmp(t, ns_event_short_name(k)) == 0) {
      f->types |= 1u << k;
      return 0;
    }
  return -1;
}

/* Microseconds (the export's `ts`) -> ns. */
static int parse_us(const char* v, uint64_t* ns) {
  char* end;
  double us = strtod(v, &end);
  if (end == v || *end || !(us >= 0) || us > 1.8e13) return -1;
  *ns = (uint64_t)(us * 1000.0 + 0.5);
  return 0;
}

int ns_cmd_export(int argc, char** argv) {
  const char* dir = NULL;
  const char* out = NULL;
  const ns_format* fmt = &ns_format_jsonl;
  ns_export_options opts = {0};
  int no_compress = 0;
  const char* kineto = NULL;
  int unaligned = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--no-compress") == 0) {
      no_compress = 1;
    } else if (strcmp(a, "--force") == 0) {
      opts.force = 1;
    } else if (strcmp(a, "--merge-unaligned") == 0) {
      unaligned = 1;
    } else if (strcmp(a, "--merge-kineto") == 0 || strncmp(a, "--merge-kineto=", 15) == 0) {
      kineto = a[14] == '=' ? a + 15 : (i + 1 < argc ? argv[++i] : NULL);
      if (!kineto || !*kineto) {
        fprintf(stderr, "ncclscope export: --merge-kineto needs a trace file (TRACE.json or TRACE.json.gz)\n");
        return NS_EXIT_USAGE;
      }
    } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
      const char* v = a[1] == '-' && a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        fprintf(stderr, "ncclscope export: %s needs a value (jsonl, chrome or perfetto)\n", a);
        return NS_EXIT_USAGE;
      }
      fmt = format_named(v);
#ifndef NCCLSCOPE_HAVE_OTF2
      if (!fmt && strcmp(v, "otf2") == 0) {
        fprintf(stderr, "ncclscope export: this ncclscope was built without OTF2 support: install "
                        "libotf2-trace-dev and rebuild\n");
        return NS_EXIT_USAGE;
      }
#endif
      if (!fmt) {
        fprintf(stderr, "ncclscope export: unknown format '%s' (use jsonl, chrome, perfetto or otf2)\n", v);
        return NS_EXIT_USAGE;
      }
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strncmp(a, "--output=", 9) == 0) {
      const char* v = a[1] == '-' && a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        fprintf(stderr, "ncclscope export: %s needs a file name\n", a);
        return NS_EXIT_USAGE;
      }
      out = v;
    } else if (strcmp(a, "--max-open") == 0 || strncmp(a, "--max-open=", 11) == 0) {
      const char* v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
      char* end = NULL;
      unsigned long long n = v ? strtoull(v, &end, 10) : 0;
      if (!v || end == v || *end || n < 1 || n > (1ull << 40) || v[0] == '-') {
        fprintf(stderr, "ncclscope export: --max-open wants a number of events >= 1, not '%s'\n", v ? v : "");
        return NS_EXIT_USAGE;
      }
      opts.max_open = (size_t)n;
    } else if (!strcmp(a, "--types") || !strcmp(a, "--ranks") || !strcmp(a, "--comm") || !strcmp(a, "--from") ||
               !strcmp(a, "--to")) {
      const char* v = i + 1 < argc ? argv[++i] : NULL;
      int bad = !v;
      if (!bad && a[2] == 't' && a[3] == 'y') bad = each_item(v, type_item, &opts.filter) != 0;
      else if (!bad && a[2] == 'r') bad = each_item(v, rank_item, &opts.filter) != 0;
      else if (!bad && a[2] == 'c') bad = each_item(v, comm_item, &opts.filter) != 0;
      else if (!bad && a[2] == 'f') bad = parse_us(v, &opts.filter.from_ns) != 0, opts.filter.has_from = 1;
      else if (!bad) bad = parse_us(v, &opts.filter.to_ns) != 0, opts.filter.has_to = 1;
      if (bad) {
        fprintf(stderr, "ncclscope export: bad value for %s: '%s' (see --help)\n", a, v ? v : "");
        return NS_EXIT_USAGE;
      }
    } else if (ns_cli_dir_arg("export", a, &dir, usage) != NS_EXIT_OK) {
      return NS_EXIT_USAGE;
    }
  }
  if (ns_cli_dir_given("export", dir, usage) != NS_EXIT_OK) return NS_EXIT_USAGE;
  if (opts.filter.has_from && opts.filter.has_to && opts.filter.from_ns > opts.filter.to_ns) {
    fprintf(stderr, "ncclscope export: --from is after --to: no event can match\n");
    return NS_EXIT_USAGE;
  }
  if (fmt == &ns_format_perfetto && (!out || strcmp(out, "-") == 0) && isatty(STDOUT_FILENO)) {
    fprintf(stderr, "ncclscope export: the perfetto format is binary: not written to a terminal;\n"
                    "  name a file with -o trace.pftrace (or redirect standard output)\n");
    return NS_EXIT_USAGE;
  }
  if (kineto || unaligned) {
    if (!kineto || fmt != &ns_format_chrome) {
      fprintf(stderr, "ncclscope export: %s\n", !kineto ? "--merge-unaligned goes with --merge-kineto TRACE"
                                                         : "--merge-kineto writes --format chrome (Trace Event JSON, "
                                                           "as the PyTorch profiler's trace is)");
      return NS_EXIT_USAGE;
    }
    return ns_kineto_export(dir, kineto, unaligned, out, &opts);
  }
  if (dir_output(fmt) && (!out || strcmp(out, "-") == 0)) {
    fprintf(stderr, "ncclscope export: --format %s writes a directory: name it with -o DIR\n", fmt->name);
    return NS_EXIT_USAGE;
  }
  if (no_compress && fmt == &ns_format_perfetto) fmt = &ns_format_perfetto_plain;
  return ns_export_dir(dir, fmt, out, NULL, &opts, NULL);
}
