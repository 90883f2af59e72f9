/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope report` as a function (ns_report_dir, report.h):
 * a dump directory read. One ns_analysis per trace file (event ids and comm
 * serials are per file), each added to the summary, the detail, the phases,
 * the losses and the cross-rank view (report_ranks.h) and destroyed before
 * the next file is read; the flight records beside them read into the
 * cross-rank view; a directory that mixes traces of different runs refused.
 * Then the outputs are written (report_write.h) and the exit status says
 * what was found. Memory: one analysis at a time (bounded, see
 * docs/metrics.md) plus the summary and the cross-rank view.
 * Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_vars.h"
#include "ncclscope/config_vars.h"
#include "report/report.h"
#include "report/report_detail.h"
#include "report/report_events.h"
#include "report/report_loss.h"
#include "report/report_phases.h"
#include "report/report_ranks.h"
#include "report/report_write.h"
#include "traces/trace_analysis.h"
#include "traces/trace_dir.h"

/* One communicator rank a trace holds, to tell traces of different runs apart. */
typedef struct {
  uint64_t comm_id;
  int32_t rank;
  uint32_t file; /* index in the directory's list */
} comm_rank;

typedef struct {
  ns_xr* xr;
  int file;            /* the cross-rank index of the file being analysed, -1 before its PROCESS block */
  ns_file_losses* fl;  /* its losses entry */
  uint32_t list_index; /* the file's index in the directory's list */
  comm_rank* cr;       /* every (communicator, rank) of more than one rank seen, for mixed_runs */
  size_t ncr, capcr;
  char job[64]; /* the first SLURM job id seen, and the file it came from */
  uint32_t job_file;
  int other_job; /* a trace of another SLURM job: its index + 1 */
  char other[64];
  ns_report_detail detail;
  ns_phases* phases;
} report_ctx;

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
  ns_analysis_config_offline(&cfg);                         /* count events as `ncclscope export` does */
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

  ns_report_data data = {.sum = sum,
                         .xr = ctx.xr,
                         .losses = fl,
                         .nlosses = nfl,
                         .events = &events,
                         .dir = dir,
                         .loss = ns_report_loss_of(fl, nfl),
                         .detail = &ctx.detail,
                         .phases = ctx.phases};
  rc = ns_report_write(&data, o, &opt) ? NS_EXIT_FAIL : NS_EXIT_OK;
  if (rc == NS_EXIT_OK && empty) rc = NS_EXIT_PARTIAL;
  if ((rc == NS_EXIT_OK || rc == NS_EXIT_PARTIAL) && ctx.xr && (ns_xr_hangs(ctx.xr) || ns_xr_mismatches(ctx.xr)))
    rc = NS_EXIT_VERDICT; /* a hang or a mismatch: what a job's epilog branches on */
  if (o->print) ns_report_print(&data, o, &opt);

free_sum:
  ns_summary_free(sum);
  free(fl);
  free(ctx.cr);
  ns_xr_free(ctx.xr);
  ns_phases_free(ctx.phases);
  ns_trace_list_free(&list);
  return rc;
}
