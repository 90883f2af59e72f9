/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope report DIR [--json FILE] [--text FILE] [--html FILE]`.
 *
 * Reads every trace file of the dump directory and the flight records
 * beside them (report_read.c), then prints the merged summary: the
 * nccl-tests style table per collective, the slowest links, the GPU clock
 * fits, and the cross-rank view (report_ranks.h: hosts' clocks aligned,
 * hangs, lateness per rank, who arrived last). The text goes to standard
 * output and, like the JSON, into DIR/summary.txt and DIR/summary.json
 * unless other files are named ("-": standard output); DIR/report.html is
 * the page with the same data drawn (report_html.c); report_write.c writes
 * them. Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "traces/trace_dir.h"

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope report DIR [--json FILE] [--text FILE] [--html FILE] [--links N] [--wide] [-q]\n"
          "\n"
          "Analyses every *.nstrace file of the dump directory DIR and prints a summary:\n"
          "per collective and size, as nccl-tests does, the number of calls, mean/p50/p99\n"
          "time, algbw and busbw (GB/s) and what the time is based on (gpu: kernel pTimers,\n"
          "exec: last proxy/kernel child stop, enqueue: Coll start/stop; ops that shared a\n"
          "kernel batch count as one call of the batch); the slowest links (latency and\n"
          "bandwidth fitted to send step times of one channel, from 3+ sizes), then the rows\n"
          "that are no link estimate; the GPU clock fit per communicator with its error\n"
          "bound; the hosts' clocks aligned (CLOCK_REALTIME anchors, refined from the\n"
          "collectives); hangs: from the flight records (flightrec-*.json) and the traces,\n"
          "the collectives some ranks never posted or never finished, with each rank's\n"
          "state and last completed collective; every rank's lateness (median, p99) with\n"
          "the stragglers named; and which rank called each collective last.\n"
          "Definitions: docs/metrics.md.\n"
          "\n"
          "  --text FILE   write the text summary there [DIR/summary.txt]\n"
          "  --json FILE   write the JSON summary there [DIR/summary.json]\n"
          "  --html FILE   write the page (charts of the same data, self-contained) there [DIR/report.html]\n"
          "  --links N     slowest links listed [10]\n"
          "  --wide        the collectives table per algorithm, protocol and rank count, every figure,\n"
          "                and lines as long as they come (else folded to 120 columns)\n"
          "  -q, --quiet   do not print the summary on standard output\n"
          "  -h, --help    this text\n"
          "\n"
          "Exit status: 0 if at least one trace was readable (or there is no trace and the\n"
          "flight records are read alone), 1 if none was or an output file cannot be\n"
          "written, 2 on bad arguments or a directory that mixes traces of different runs\n"
          "(two SLURM job ids, or one communicator rank in two traces), 3 if some trace\n"
          "file yielded nothing.\n");
}

int ns_cmd_report(int argc, char** argv) {
  const char* dir = NULL;
  ns_report_options o = {.print = stdout, .max_links = 10};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      o.print = NULL;
    } else if (strcmp(a, "--wide") == 0) {
      o.wide = 1;
    } else if (strcmp(a, "--json") == 0 || strcmp(a, "--text") == 0 || strcmp(a, "--html") == 0 ||
               strcmp(a, "--links") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "ncclscope report: %s needs a value\n", a);
        return NS_EXIT_USAGE;
      }
      const char* v = argv[++i];
      if (a[2] == 'j') {
        o.json_path = v;
      } else if (a[2] == 't') {
        o.text_path = v;
      } else if (a[2] == 'h') {
        o.html_path = v;
      } else {
        char* end = NULL;
        long n = strtol(v, &end, 10);
        if (end == v || *end || n < 1 || n > 100000) {
          fprintf(stderr, "ncclscope report: --links wants a number 1..100000, not '%s'\n", v);
          return NS_EXIT_USAGE;
        }
        o.max_links = (size_t)n;
      }
    } else if (ns_cli_dir_arg("report", a, &dir, usage) != NS_EXIT_OK) {
      return NS_EXIT_USAGE;
    }
  }
  if (ns_cli_dir_given("report", dir, usage) != NS_EXIT_OK) return NS_EXIT_USAGE;
  if (o.text_path && strcmp(o.text_path, "-") == 0) o.print = NULL; /* the text goes there once */
  return ns_report_dir(dir, &o);
}
