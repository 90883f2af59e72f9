/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope demo`. Runs the simulator (build/ncclscope-sim)
 * with the plugin (build/libnccl-profiler-ncclscope.so), both found next to
 * this binary (or, installed, the plugin in the library directory beside
 * bin/: NCCLSCOPE_BIN_TO_LIBDIR), exports the traces as a Perfetto trace and
 * JSON Lines, and prints a short summary saying what to open. The simulator is started with
 * fork/exec (no shell), with NCCLSCOPE_DUMP_DIR pointing at a fresh
 * directory. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "export/event_details.h"
#include "export/export.h"

#define DEMO_NET_GBPS "0.5"  /* Gbit/s per simulated link */
#define DEMO_NET_LAT_US "500" /* us per step */
#include "report/report.h"

#define TOP_FUNCS 32

typedef struct {
  char name[48];
  uint64_t count;
} func_count;

typedef struct {
  func_count funcs[TOP_FUNCS];
  int nfuncs;
} demo_stats;

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope demo [--out DIR] [--scenario NAME] [--procs N]\n"
          "\n"
          "Runs the NCCL simulator (ncclscope-sim) with the ncclscope plugin, both\n"
          "taken from the directory of this ncclscope binary, then exports the traces.\n"
          "Leaves in DIR: traces/ (the dump directory, one .nstrace per process),\n"
          "ncclscope.pftrace (a Perfetto trace: open it in ui.perfetto.dev), ncclscope.jsonl and\n"
          "sim.log; prints the report's bandwidth table and writes traces/summary.txt\n"
          "and traces/summary.json (ncclscope report). Needs no GPU and no NCCL.\n"
          "\n"
          "  --out DIR        where to put everything [./ncclscope-demo]\n"
          "  --scenario NAME  simulator scenario (ncclscope-sim --help lists them) [default]\n"
          "  --procs N        simulated processes [2]\n"
          "  -h, --help       this text\n");
}

/* Directory of the running executable, from /proc/self/exe. */
static int exe_dir(char* out, size_t n) {
  char buf[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len <= 0) return -1;
  buf[len] = '\0';
  char* slash = strrchr(buf, '/');
  if (!slash) return -1;
  *slash = '\0';
  snprintf(out, n, "%s", buf);
  return 0;
}

static int make_dir(const char* path) {
  if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
  fprintf(stderr, "ncclscope demo: cannot create %s: %s\n", path, strerror(errno));
  return -1;
}

/* Whether name is a file a previous demo left in the dump directory: a trace
 * (ncclscope-*.nstrace) or a summary (summary*.txt / summary*.json, written
 * by `ncclscope report` and by the plugin). */
static int demo_leftover(const char* name) {
  size_t n = strlen(name);
  if (strncmp(name, "ncclscope-", 10) == 0 && n >= 8 && strcmp(name + n - 8, ".nstrace") == 0) return 1;
  if (strncmp(name, "summary", 7) != 0 || n < 11) return 0;
  return strcmp(name + n - 4, ".txt") == 0 || strcmp(name + n - 5, ".json") == 0;
}

/* Removes the files a previous demo left in dir (see demo_leftover). */
static void clear_old_traces(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return;
  struct dirent* de;
  int removed = 0;
  while ((de = readdir(d)) != NULL) {
    if (!demo_leftover(de->d_name)) continue;
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    if (unlink(path) == 0) removed++;
  }
  closedir(d);
  if (removed) printf("(removed %d file(s) of a previous demo from %s)\n", removed, dir);
}

static int run_sim(const char* sim, const char* plugin, const char* scenario, const char* procs,
                   const char* dump, const char* log_path) {
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "ncclscope demo: fork: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    setenv("NCCLSCOPE_DUMP_DIR", dump, 1);
    /* The ideal NCCL until the plugin copes with every real release's quirks.
     * A slow fabric (DEMO_NET_GBPS, DEMO_NET_LAT_US): transfer times, from
     * about a millisecond at 1 KiB to tens of milliseconds at 4 MiB, dominate
     * the scheduling noise of 8 simulated ranks on 2 cores, so the table
     * reads like nccl-tests (time grows with size). */
    char* const args[] = {(char*)sim,       "--plugin",   (char*)plugin, "--nccl",          "ideal",
                          "--scenario",     (char*)scenario, "--procs",  (char*)procs,      "--net-gbps",
                          DEMO_NET_GBPS,    "--net-lat-us", DEMO_NET_LAT_US, NULL};
    execv(sim, args);
    fprintf(stderr, "ncclscope demo: cannot run %s: %s\n", sim, strerror(errno));
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status))
    fprintf(stderr, "ncclscope demo: the simulator exited with status %d; see %s\n", WEXITSTATUS(status), log_path);
  else
    fprintf(stderr, "ncclscope demo: the simulator was killed by signal %d; see %s\n", WTERMSIG(status), log_path);
  return -1;
}

/* Export observer: counts Coll/P2p events by func. */
static void count_funcs(void* self, ns_wfile* f, const ns_event* ev) {
  demo_stats* st = self;
  if (!ev->stopped || (ev->start.type != NS_EV_COLL && ev->start.type != NS_EV_P2P)) return;
  int has;
  const char* func = ns_event_func(f, ev, &has);
  if (!func) func = "(unnamed)";
  for (int i = 0; i < st->nfuncs; i++)
    if (strcmp(st->funcs[i].name, func) == 0) {
      st->funcs[i].count++;
      return;
    }
  if (st->nfuncs < TOP_FUNCS) {
    snprintf(st->funcs[st->nfuncs].name, sizeof st->funcs[0].name, "%s", func);
    st->funcs[st->nfuncs++].count = 1;
  }
}

static int by_count(const void* a, const void* b) {
  const func_count* x = a;
  const func_count* y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return strcmp(x->name, y->name);
}

static void print_summary(const char* out, const char* dump, const char* scenario, const ns_export_totals* t,
                          demo_stats* st) {
  printf("\nncclscope demo: simulated NCCL scenario '%s' recorded by the ncclscope plugin\n\n", scenario);
  printf("  processes     %d trace file(s) in %s\n", t->files_read, dump);
  printf("  ranks         %" PRIu64 " (process, communicator) pairs\n", t->ranks);
  printf("  events        %" PRIu64 "\n", t->events);
  printf("  by type      ");
  for (int ty = 0; ty < NS_EV_COUNT; ty++)
    if (t->events_by_type[ty])
      printf(" %s %" PRIu64, ns_event_type_name((unsigned)ty) + strlen("ncclProfile"), t->events_by_type[ty]);
  printf("\n");
  qsort(st->funcs, (size_t)st->nfuncs, sizeof st->funcs[0], by_count);
  printf("  top operations");
  for (int i = 0; i < st->nfuncs && i < 8; i++) printf("%s %s %" PRIu64, i ? "," : "", st->funcs[i].name, st->funcs[i].count);
  printf("\n\nWhat to open:\n");
  printf("  timeline   %s/ncclscope.pftrace\n", out);
  printf("             go to https://ui.perfetto.dev, click \"Open trace file\", pick that file\n");
  printf("             (for chrome://tracing: ncclscope export --format chrome). One process track per rank; the\n");
  printf("             \"ch N ...\" tracks show proxy and kernel work per channel; arrows\n");
  printf("             join each event to its parent.\n");
  printf("  records    %s/ncclscope.jsonl (one JSON object per event/state; docs/cli.md)\n", out);
  printf("  raw traces %s (ncclscope export %s --format perfetto|chrome|jsonl -o FILE)\n", dump, dump);
}

int ns_cmd_demo(int argc, char** argv) {
  const char* out = "ncclscope-demo";
  const char* scenario = "default";
  const char* procs = "2";
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    const char** slot = strcmp(a, "--out") == 0        ? &out
                        : strcmp(a, "--scenario") == 0 ? &scenario
                        : strcmp(a, "--procs") == 0    ? &procs
                                                       : NULL;
    if (!slot) {
      fprintf(stderr, "ncclscope demo: unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "ncclscope demo: %s needs a value\n", a);
      return 2;
    }
    *slot = argv[++i];
  }
  if (atoi(procs) < 1 || atoi(procs) > 64) {
    fprintf(stderr, "ncclscope demo: --procs must be 1..64\n");
    return 2;
  }

  char bin[PATH_MAX], sim[PATH_MAX + 32], plugin[PATH_MAX + 40 + sizeof NCCLSCOPE_BIN_TO_LIBDIR];
  if (exe_dir(bin, sizeof bin)) {
    fprintf(stderr, "ncclscope demo: cannot find the directory of this program (/proc/self/exe)\n");
    return 1;
  }
  snprintf(sim, sizeof sim, "%s/ncclscope-sim", bin);
  snprintf(plugin, sizeof plugin, "%s/libnccl-profiler-ncclscope.so", bin);
  if (access(plugin, R_OK) != 0) /* installed: PREFIX/bin and PREFIX/lib */
    snprintf(plugin, sizeof plugin, "%s/" NCCLSCOPE_BIN_TO_LIBDIR "/libnccl-profiler-ncclscope.so", bin);
  if (access(sim, X_OK) != 0 || access(plugin, R_OK) != 0) {
    fprintf(stderr,
            "ncclscope demo: needs %s and %s (beside this program in a build tree);\n"
            "build the whole project first: cmake -S . -B build && cmake --build build -j\n",
            sim, plugin);
    return 1;
  }

  char dump[PATH_MAX + 16], log_path[PATH_MAX + 16], pftrace_path[PATH_MAX + 32], jsonl_path[PATH_MAX + 32];
  if (make_dir(out)) return 1;
  snprintf(dump, sizeof dump, "%s/traces", out);
  if (make_dir(dump)) return 1;
  clear_old_traces(dump);
  snprintf(log_path, sizeof log_path, "%s/sim.log", out);
  snprintf(pftrace_path, sizeof pftrace_path, "%s/ncclscope.pftrace", out);
  snprintf(jsonl_path, sizeof jsonl_path, "%s/ncclscope.jsonl", out);

  printf("running %s --scenario %s --procs %s with the ncclscope plugin...\n", sim, scenario, procs);
  fflush(stdout);
  if (run_sim(sim, plugin, scenario, procs, dump, log_path)) return 1;

  demo_stats st;
  memset(&st, 0, sizeof st);
  ns_export_ext ext = {.self = &st, .event = count_funcs};
  ns_export_totals totals;
  if (ns_export_dir(dump, &ns_format_perfetto, pftrace_path, &ext, NULL, &totals)) return 1;
  memset(&st, 0, sizeof st);
  if (ns_export_dir(dump, &ns_format_jsonl, jsonl_path, &ext, NULL, &totals)) return 1;
  print_summary(out, dump, scenario, &totals, &st);
  /* the nccl-tests style table; the full report (links, clock fits, stragglers) goes to files */
  printf("\nWhat NCCL's collectives achieved (ncclscope report %s):\n\n", dump);
  fflush(stdout);
  ns_report_options ro = {.print = stdout, .sections = NS_SUMMARY_COLLECTIVES, .max_links = 10};
  if (ns_report_dir(dump, &ro)) return 1;
  printf("\n  full report %s/summary.txt (slowest links, GPU clock fits, stragglers), summary.json\n", dump);
  return 0;
}
