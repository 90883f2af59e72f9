/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope export DIR --format jsonl|chrome|perfetto|otf2 -o FILE`:
 * its arguments and filters; the export itself is export_dir.c's. Messages
 * go to stderr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli_vars.h"
#include "export/export.h"
#include "merge/kineto_merge.h"
#include "ncclscope/config_vars.h"
#include "util/numtext.h"

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope export DIR [--format jsonl|chrome|perfetto|otf2] [-o FILE] [--force] [--max-open N] "
          "[--no-compress]\n"
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
          "  --merge-kineto TRACE.json[.gz]  chrome, perfetto: merged with this PyTorch\n"
          "                       profiler (Kineto) trace, on its clock, NCCL kernels linked\n"
          "  --merge-unaligned    merge even when the trace cannot be aligned (another\n"
          "                       host or run, no time base), marked \"unaligned\"\n"
          "  --merge-max-mb N     memory the trace may take, its JSON (inflated) and an\n"
          "                       index of its events; a larger one is refused\n"
          "                       [NCCLSCOPE_MERGE_MAX_MB, 1024]\n"
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
  const char* max_mb = NULL; /* --merge-max-mb */
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
    } else if (strcmp(a, "--merge-max-mb") == 0 || strncmp(a, "--merge-max-mb=", 15) == 0) {
      max_mb = a[14] == '=' ? a + 15 : (i + 1 < argc ? argv[++i] : "");
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
  if (no_compress && fmt == &ns_format_perfetto) fmt = &ns_format_perfetto_plain;
  if (kineto || unaligned || max_mb) {
    if (!kineto || (fmt != &ns_format_chrome && fmt != &ns_format_perfetto && fmt != &ns_format_perfetto_plain)) {
      fprintf(stderr, "ncclscope export: %s\n",
              !kineto ? (unaligned ? "--merge-unaligned goes with --merge-kineto TRACE"
                                   : "--merge-max-mb goes with --merge-kineto TRACE")
                      : "--merge-kineto writes --format chrome (Trace Event JSON, "
                        "as the PyTorch profiler's trace is) or --format perfetto");
      return NS_EXIT_USAGE;
    }
    const ns_config_var* limit = &ns_config_vars()[NS_CFG_NCCLSCOPE_MERGE_MAX_MB];
    unsigned long long mb = max_mb ? 0 : (unsigned long long)ns_cli_var(NS_CFG_NCCLSCOPE_MERGE_MAX_MB);
    if (max_mb && ns_parse_count(max_mb, (unsigned long long)limit->lo, (unsigned long long)limit->hi, &mb) != 0) {
      fprintf(stderr, "ncclscope export: --merge-max-mb wants a number of MiB in [%.0f, %.0f], not '%s'\n", limit->lo,
              limit->hi, max_mb);
      return NS_EXIT_USAGE;
    }
    ns_kineto_input in = {.path = kineto, .unaligned = unaligned, .max_bytes = (size_t)mb << 20};
    return ns_kineto_export(dir, &in, fmt, out, &opts);
  }
  if (ns_format_dir_output(fmt) && (!out || strcmp(out, "-") == 0)) {
    fprintf(stderr, "ncclscope export: --format %s writes a directory: name it with -o DIR\n", fmt->name);
    return NS_EXIT_USAGE;
  }
  return ns_export_dir(dir, fmt, out, NULL, &opts, NULL);
}
