/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope report DIR [--json FILE] [--text FILE] [--html FILE]`.
 *
 * Runs one ns_analysis per trace file of the dump directory (event ids and
 * comm serials are per file), reads the flight records beside them, then
 * prints the merged summary: the nccl-tests style table per collective, the
 * slowest links, the GPU clock fits, and the cross-rank view
 * (report_ranks.h: hosts' clocks aligned, hangs, lateness per rank, who
 * arrived last). The text goes
 * to standard output and, like the JSON, into DIR/summary.txt and
 * DIR/summary.json unless other files are named ("-": standard output);
 * DIR/report.html is the page with the same data drawn (report_html.c).
 * Files are written to an unpredictable temporary name beside them and
 * renamed (safefile.h). Memory: one analysis at a time (bounded, see
 * docs/metrics.md), each added to the summary and destroyed before the next
 * file is read, plus the cross-rank view (report_ranks.h). Single-threaded. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_vars.h"
#include "export/event_details.h"
#include "export/export.h"
#include "util/json_writer.h"
#include "ncclscope/config_vars.h"
#include "report/report.h"
#include "report/report_detail.h"
#include "report/report_events.h"
#include "report/report_html.h"
#include "report/report_loss.h"
#include "report/report_phases.h"
#include "report/report_ranks.h"
#include "report/report_ranks_out.h"
#include "report/text_fold.h"
#include "traces/trace_analysis.h"
#include "traces/trace_dir.h"
#include "util/safefile.h"

#define NS_REPORT_LOSSES 0x100u /* sections bit (beside NS_SUMMARY_*): the recording losses table */
#define NS_REPORT_EVENTS 0x200u /* sections bit: the events per type, as assembled */

/* One communicator rank a trace holds, to tell traces of different runs apart. */
typedef struct {
  uint64_t comm_id;
  int32_t rank;
  uint32_t file; /* index in the directory's list */
} comm_rank;

typedef struct {
  ns_xr* xr;
  int file;         /* the cross-rank index of the file being analysed, -1 before its PROCESS block */
  ns_file_losses* fl;  /* its losses entry */
  uint32_t list_index; /* the file's index in the directory's list */
  comm_rank* cr;    /* every (communicator, rank) of more than one rank seen, for mixed_runs */
  size_t ncr, capcr;
  char job[64];     /* the first SLURM job id seen, and the file it came from */
  uint32_t job_file;
  int other_job;    /* a trace of another SLURM job: its index + 1 */
  char other[64];
  ns_report_detail detail;
  ns_phases* phases;
} report_ctx;

/* Everything a summary writer needs. */
typedef struct {
  ns_summary* sum;
  const ns_xr* xr;
  const ns_file_losses* losses;
  size_t nlosses;
  const ns_asm_stats* events;
  const char* dir;
  ns_report_loss loss;
  const ns_report_detail* detail;
  const ns_phases* phases;
} report_data;

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

static void on_op(void* user, const ns_op_result* op) {
  report_ctx* c = user;
  ns_detail_op(&c->detail, op);
  if (c->xr && c->file >= 0) ns_xr_op(c->xr, c->file, op);
}

/* Every item of a trace before the analysis sees it: the process (host, pid,
 * the first clock anchor), communicators, clock anchors. */
static void on_item(void* user, const ns_item* it) {
  report_ctx* c = user;
  if (it->kind == NS_ITEM_RECORD) {
    c->fl->events_in_trace += it->record->kind == NS_REC_START;
    if (c->phases) ns_phases_record(c->phases, it->record);
  } else if (it->kind == NS_ITEM_COMM_FINI) {
    c->fl->starts_dropped += it->props->u[NS_P_DROPPED];
  } else if (it->kind == NS_ITEM_DETAIL || it->kind == NS_ITEM_COUNTERS) {
    ns_detail_item(&c->detail, it);
    if (it->kind == NS_ITEM_COUNTERS) { /* the process's counters: the last block counts */
      c->fl->has = 1;
      c->fl->counters = *it->props;
    }
  } else if (it->kind == NS_ITEM_PROCESS) {
    ns_detail_trace(&c->detail);
    const char* job = it->process->slurm_job;
    if (job[0] && !c->job[0]) {
      snprintf(c->job, sizeof c->job, "%s", job);
      c->job_file = c->list_index;
    } else if (job[0] && strcmp(job, c->job) != 0 && !c->other_job) {
      c->other_job = (int)c->list_index + 1;
      snprintf(c->other, sizeof c->other, "%s", job);
    }
    snprintf(c->fl->host, sizeof c->fl->host, "%s", it->process->hostname);
    c->fl->pid = it->process->pid;
    if (c->xr && c->file < 0) c->file = ns_xr_file(c->xr, it->process);
  } else if (it->kind == NS_ITEM_COMM_INIT) {
    if (it->comm->nranks > 1 && c->ncr < SIZE_MAX / 2) {
      if (c->ncr == c->capcr) {
        size_t cap = c->capcr ? 2 * c->capcr : 256;
        comm_rank* n = realloc(c->cr, cap * sizeof *n);
        if (n) c->cr = n, c->capcr = cap;
      }
      if (c->ncr < c->capcr) c->cr[c->ncr++] = (comm_rank){it->comm->comm_id, it->comm->rank, c->list_index};
    }
    if (c->xr && c->file >= 0) ns_xr_comm(c->xr, c->file, it->comm);
    if (c->phases) ns_phases_comm(c->phases, it->comm);
  } else if (it->kind == NS_ITEM_ANCHOR && c->xr && c->file >= 0) {
    uint64_t ts = it->props->u[NS_P_TS];
    ns_xr_anchor(c->xr, c->file, ts, (int64_t)ts + (int64_t)it->props->u[NS_P_REALTIME_OFFSET_NS]);
  }
}

static int by_comm_rank(const void* pa, const void* pb) {
  const comm_rank *a = pa, *b = pb;
  if (a->comm_id != b->comm_id) return a->comm_id < b->comm_id ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return a->file < b->file ? -1 : a->file > b->file;
}

/* Whether the directory mixes traces of different runs: two SLURM job ids, or one rank of one
 * communicator in two trace files (a communicator's id is drawn anew for every run; one process
 * writes one trace). Says which files on stderr. */
static int mixed_runs(report_ctx* c, const ns_trace_list* list, const char* dir) {
  const char* why = NULL;
  uint32_t f1 = 0, f2 = 0;
  char what[160] = "";
  if (c->other_job) {
    why = "traces of two SLURM jobs";
    f1 = c->job_file, f2 = (uint32_t)c->other_job - 1;
    snprintf(what, sizeof what, "job %s and job %s", c->job, c->other);
  } else if (c->ncr > 1) {
    qsort(c->cr, c->ncr, sizeof *c->cr, by_comm_rank);
    for (size_t i = 1; i < c->ncr && !why; i++)
      if (c->cr[i].comm_id == c->cr[i - 1].comm_id && c->cr[i].rank == c->cr[i - 1].rank &&
          c->cr[i].file != c->cr[i - 1].file) {
        why = "traces of two runs";
        f1 = c->cr[i - 1].file, f2 = c->cr[i].file;
        snprintf(what, sizeof what, "both hold rank %d of communicator 0x%016llx", c->cr[i].rank,
                 (unsigned long long)c->cr[i].comm_id);
      }
  }
  if (!why) return 0;
  fprintf(stderr,
          "ncclscope report: %s holds %s, which one report cannot merge: %s and %s (%s).\n"
          "  Give each run a dump directory of its own (NCCLSCOPE_DUMP_DIR), or move one run's files out.\n",
          dir, why, list->paths[f1], list->paths[f2], what);
  return 1;
}

/* How many flight records (flightrec-*.json) the directory has. */
static size_t count_flightrecs(const char* dir) {
  ns_trace_list fr;
  char err[1024];
  if (ns_dir_list(dir, "flightrec-", ".json", &fr, err, sizeof err) != 0) return 0;
  size_t n = fr.n;
  ns_trace_list_free(&fr);
  return n;
}

/* The flight records of the directory into the cross-rank view; unreadable ones are warned about. */
static void read_flightrecs(const char* dir, ns_xr* xr) {
  ns_trace_list fr;
  char err[1024];
  if (!xr || ns_dir_list(dir, "flightrec-", ".json", &fr, err, sizeof err) != 0) return;
  for (size_t i = 0; i < fr.n; i++)
    if (ns_xr_flightrec(xr, fr.paths[i], err, sizeof err) != 0)
      fprintf(stderr, "ncclscope report: warning: skipped the flight record %s\n", err);
  ns_trace_list_free(&fr);
}

/* Everything of the report into out (text). */
static int write_text_wide(const report_data* d, const ns_summary_options* opt, FILE* out) {
  ns_report_loss_text(&d->loss, out);
  size_t verdicts = d->xr ? ns_xr_verdict_lines(d->xr, out) : 0;
  if (d->phases) verdicts += ns_phases_verdict_text(d->phases, out);
  if (!verdicts) fprintf(out, "# verdict: no hang, no mismatch, no straggler\n");
  if (d->xr) ns_xr_verdict_sections(d->xr, out);
  fputc('\n', out);
  ns_detail_text(d->detail, out);
  int rc = ns_summary_text(d->sum, opt, out);
  if (d->xr) ns_xr_text(d->xr, opt->wide, out);
  if (d->phases) ns_phases_text(d->phases, out);
  ns_report_losses_text(d->losses, d->nlosses, out);
  ns_events_text(d->events, out);
  return rc || ferror(out) ? -1 : 0;
}

/* The same, folded to NS_REPORT_COLUMNS unless --wide. */
static int write_text(const report_data* d, const ns_summary_options* opt, FILE* out) {
  if (opt->wide) return write_text_wide(d, opt, out);
  char* buf = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (!mem) return -1;
  int rc = write_text_wide(d, opt, mem);
  if (fclose(mem) != 0) rc = -1;
  if (rc == 0) rc = ns_text_fold(out, buf, len, NS_REPORT_COLUMNS);
  free(buf);
  return rc;
}

/* The library's JSON object with the cross-rank members ("hosts", "hangs",
 * "lateness", "crossRank") and "processCounters" added: it is produced into
 * memory and its closing brace replaced. */
static int write_json(const report_data* d, const ns_summary_options* opt, FILE* out) {
  char* buf = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (!mem) return -1;
  int rc = ns_summary_json(d->sum, opt, mem);
  if (fclose(mem) != 0) rc = -1;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) len--;
  if (rc || len == 0 || buf[len - 1] != '}') {
    free(buf);
    return -1;
  }
  fwrite(buf, 1, len - 1, out);
  free(buf);
  static ns_json j; /* 64 KiB: not on the stack */
  nsj_init(&j, out);
  j.need_comma[0] = 1; /* members of the object begun above: each key after a comma */
  if (d->xr) ns_xr_json(d->xr, &j);
  if (d->phases) ns_phases_json(d->phases, &j);
  nsj_flush(&j);
  nsj_init(&j, out);
  nsj_ws(&j, ",\"processCounters\":");
  nsj_arr_begin(&j);
  for (size_t i = 0; i < d->nlosses; i++) {
    nsj_obj_begin(&j);
    nsj_kstr(&j, "host", d->losses[i].host);
    nsj_ku64(&j, "pid", d->losses[i].pid);
    if (d->losses[i].has) ns_write_counter_fields(&j, &d->losses[i].counters);
    else nsj_kbool(&j, "missing", 1);
    nsj_obj_end(&j);
  }
  nsj_arr_end(&j);
  nsj_flush(&j);
  fputs(",\"events\":", out);
  nsj_init(&j, out);
  ns_events_json(d->events, &j);
  nsj_flush(&j);
  fputs(",\"loss\":", out);
  nsj_init(&j, out);
  ns_report_loss_json(&d->loss, &j);
  nsj_flush(&j);
  fputs(",\"detail\":", out);
  nsj_init(&j, out);
  ns_detail_json(d->detail, &j);
  nsj_flush(&j);
  fputs("}\n", out);
  return ferror(out) ? -1 : 0;
}

/* report.html: the JSON made into memory, then the page around it. */
static int write_html(const report_data* d, const ns_summary_options* opt, FILE* out) {
  char* buf = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (!mem) return -1;
  int rc = write_json(d, opt, mem);
  if (fclose(mem) != 0) rc = -1;
  if (rc == 0) rc = ns_report_html(out, d->dir, buf, len);
  free(buf);
  return rc;
}

typedef int (*writer_fn)(const report_data*, const ns_summary_options*, FILE*);

/* An output named by the user (`-`: standard output) when path is set,
 * else NAME in the dump directory dirfd: a temporary file beside it renamed
 * over it, so a link planted at DIR/NAME is replaced, never followed. */
static int write_file(const char* path, int dirfd, const char* dir, const char* name, writer_fn fn,
                      const report_data* d, const ns_summary_options* opt) {
  char err[PATH_MAX + 256], shown[PATH_MAX + 64];
  ns_out o;
  int rc;
  if (path) {
    rc = ns_out_open(&o, path, ns_cli_file_mode(), err, sizeof err);
  } else {
    snprintf(shown, sizeof shown, "%s/%s", dir, name);
    rc = dirfd < 0 ? (snprintf(err, sizeof err, "%s: cannot open the directory", shown), -1)
                   : ns_out_open_at(&o, dirfd, name, shown, ns_cli_file_mode(), err, sizeof err);
  }
  if (rc != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s\n", err);
    return -1;
  }
  if (fn(d, opt, o.f) != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s: %s\n", o.shown, strerror(errno));
    ns_out_abort(&o);
    return -1;
  }
  if (ns_out_commit(&o, err, sizeof err) != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s\n", err);
    return -1;
  }
  return 0;
}

int ns_report_dir(const char* dir, const ns_report_options* o) {
  char err[1024];
  ns_trace_list list;
  if (ns_trace_dir_list(dir, &list, err, sizeof err)) {
    fprintf(stderr, "ncclscope report: cannot read the dump directory %s\n", err);
    return NS_EXIT_FAIL;
  }
  size_t nfr = count_flightrecs(dir);
  if (list.n == 0 && nfr == 0) {
    fprintf(stderr, "ncclscope report: no trace files (*.nstrace) in %s\n", dir);
    ns_trace_list_free(&list);
    return NS_EXIT_FAIL;
  }
  /* flight records alone (the traces lost with their hosts, or never written): the cross-rank view of them */
  if (list.n == 0)
    fprintf(stderr, "ncclscope report: no trace files (*.nstrace) in %s: its %zu flight record(s) alone\n", dir, nfr);
  int rc = 1;
  report_ctx ctx = {.xr = ns_xr_new(), .file = -1, .phases = ns_phases_new()};
  ns_asm_stats events;
  memset(&events, 0, sizeof events);
  ns_summary_options opt = {.max_links = o->max_links, .wide = o->wide};
  ns_summary* sum = ns_summary_new(&opt);
  ns_file_losses* fl = calloc(list.n ? list.n : 1, sizeof *fl);
  size_t nan = 0, nfl = 0;
  if (!sum || !fl) {
    fprintf(stderr, "ncclscope report: out of memory\n");
    goto free_sum;
  }
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  ns_analysis_config_offline(&cfg); /* count events as `ncclscope export` does */
  cfg.window_sec = ns_cli_var(NS_CFG_NCCLSCOPE_WINDOW_SEC); /* the plugin's windows */
  cfg.window_ops = (uint64_t)ns_cli_var(NS_CFG_NCCLSCOPE_WINDOW_OPS);
  cfg.on_op = on_op;
  cfg.user = &ctx;
  int empty = 0; /* files that yielded nothing */
  for (size_t i = 0; i < list.n; i++) {
    ctx.file = -1;
    ctx.list_index = (uint32_t)i;
    ctx.fl = &fl[nfl];
    memset(&fl[nfl], 0, sizeof fl[nfl]); /* a skipped file's counts do not carry over */
    snprintf(fl[nfl].host, sizeof fl[nfl].host, "?");
    ns_file_health health;
    ns_analysis* a = ns_analyze_file_items(list.paths[i], &cfg, on_item, &ctx, &health, err, sizeof err);
    if (!a) {
      if (ctx.xr) ns_xr_file_clock(ctx.xr, NULL); /* its ops keep the times they had */
      fprintf(stderr, "ncclscope report: warning: skipped %s\n", err);
      if (ctx.phases) ns_phases_file_end(ctx.phases);
      empty++;
      continue;
    }
    empty += ns_file_health_print("ncclscope report", list.paths[i], &health);
    fl[nfl].blocks_damaged = health.st.damaged - health.st.damaged_kept;
    fl[nfl].blocks_missing = health.st.seq_gaps;
    fl[nfl].bytes_cut = health.st.bytes_cut;
    fl[nfl].clean_end = health.st.clean_end;
    if (ctx.xr) ns_xr_file_clock(ctx.xr, a);
    /* Its record is complete only when nothing of it was lost: a Coll in a
     * damaged or missing block, or one a full ring dropped, would read as a
     * collective its ranks never posted (a hang, a mismatch that is none). */
    int complete = health.st.clean_end && !health.st.damaged && !health.st.seq_gaps && !health.st.bytes_cut &&
                   !fl[nfl].starts_dropped && !(fl[nfl].has && fl[nfl].counters.u[NS_P_DROPPED]);
    if (ctx.xr) ns_xr_file_end(ctx.xr, ctx.file, complete);
    if (ctx.phases) ns_phases_file_end(ctx.phases);
    nfl++;
    ns_asm_stats one;
    ns_analysis_event_stats(a, &one);
    ns_events_add(&events, &one);
    if (ns_summary_add(sum, a) != 0)
      fprintf(stderr, "ncclscope report: warning: out of memory: the summary misses part of %s\n", list.paths[i]);
    ns_analysis_destroy(a);
    nan++;
  }
  if (list.n && (nan == 0 || empty == (int)list.n)) {
    fprintf(stderr, "ncclscope report: none of the %zu trace file(s) in %s yielded anything\n", list.n, dir);
    goto free_sum;
  }
  if (mixed_runs(&ctx, &list, dir)) {
    rc = NS_EXIT_USAGE;
    goto free_sum;
  }
  read_flightrecs(dir, ctx.xr);
  if (ctx.xr) ns_xr_finish(ctx.xr);
  if (ctx.phases) ns_phases_finish(ctx.phases);

  report_data data = {.sum = sum,
                      .xr = ctx.xr,
                      .losses = fl,
                      .nlosses = nfl,
                      .events = &events,
                      .dir = dir,
                      .loss = ns_report_loss_of(fl, nfl),
                      .detail = &ctx.detail,
                      .phases = ctx.phases};
  rc = NS_EXIT_OK;
  int dirfd = -1;
  if (!o->text_path || !o->json_path || !o->html_path) dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (write_file(o->text_path, dirfd, dir, "summary.txt", write_text, &data, &opt)) rc = NS_EXIT_FAIL;
  if (write_file(o->json_path, dirfd, dir, "summary.json", write_json, &data, &opt)) rc = NS_EXIT_FAIL;
  if (write_file(o->html_path, dirfd, dir, "report.html", write_html, &data, &opt)) rc = NS_EXIT_FAIL;
  if (dirfd >= 0) close(dirfd);
  if (rc == NS_EXIT_OK && empty) rc = NS_EXIT_PARTIAL;
  if ((rc == NS_EXIT_OK || rc == NS_EXIT_PARTIAL) && ctx.xr && (ns_xr_hangs(ctx.xr) || ns_xr_mismatches(ctx.xr)))
    rc = NS_EXIT_VERDICT; /* a hang or a mismatch: what a job's epilog branches on */
  if (o->print) {
    FILE* out = o->print;
    if (!o->sections) {
      write_text(&data, &opt, out);
    } else {
      ns_summary_options popt = opt;
      popt.sections = o->sections;
      ns_summary_text(sum, &popt, out);
      if ((o->sections & NS_SUMMARY_CROSS_RANK) && ctx.xr) ns_xr_text(ctx.xr, o->wide, out);
      if (o->sections & NS_REPORT_LOSSES) ns_report_losses_text(fl, nfl, out);
      if (o->sections & NS_REPORT_EVENTS) ns_events_text(&events, out);
    }
    fflush(out);
  }

free_sum:
  ns_summary_free(sum);
  free(fl);
  free(ctx.cr);
  ns_xr_free(ctx.xr);
  ns_phases_free(ctx.phases);
  ns_trace_list_free(&list);
  return rc;
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
