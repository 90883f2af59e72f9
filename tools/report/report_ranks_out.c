/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: text and JSON (report_ranks_out.h). */
#include "report/report_ranks_out.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report/report_ranks_judge.h"

static const char* func_name(int16_t f) { return ns_func_name(f); }

static void rank_where(const ns_xr* x, const ns_xrank_rank* r, char* buf, size_t len) {
  if (r->file < 0) snprintf(buf, len, "?");
  else snprintf(buf, len, "%.200s:%u", x->files[r->file].host, x->files[r->file].pid);
}

/* "0-6,9" for the ranks of c in state st ("none" when none). */
void ns_xrank_rank_list(const ns_xrank_comm* c, int st, char* buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (uint32_t r = 0; r < c->nranks && at + 24 < len; r++) {
    if (c->state[r] != st) continue;
    uint32_t e = r;
    while (e + 1 < c->nranks && c->state[e + 1] == st) e++;
    at += (size_t)snprintf(buf + at, len - at, at ? ",%u" : "%u", r);
    if (e > r) at += (size_t)snprintf(buf + at, len - at, "-%u", e);
    r = e;
  }
  if (!at) snprintf(buf, len, "none");
}

void ns_xrank_hangs_text(const ns_xr* x, FILE* out) {
  fprintf(out, "\n# hangs: collectives some ranks never posted or never finished (flight records and traces)\n");
  if (x->fr_files || x->fr_bad)
    fprintf(out, "#   %" PRIu64 " flight record(s) read%s\n", x->fr_files, x->fr_bad ? ", some unreadable (skipped)" : "");
  if (!x->nhangs) {
    fprintf(out, "  none\n");
    return;
  }
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    if (!c->hang) continue;
    char lst[1024];
    fprintf(out, "  communicator 0x%016" PRIx64 "%s%s%s, %u ranks: %s seq %" PRIu64 "%s\n", c->comm_id,
            c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", c->nranks, func_name(c->hang_func), c->hang_seq,
            c->hang_by_fr ? "" : " (from the traces: no flight record saw it stuck)");
    ns_xrank_rank_list(c, NS_XRANK_S_NEVER, lst, sizeof lst);
    fprintf(out, "    never posted it:    %s\n", lst);
    ns_xrank_rank_list(c, NS_XRANK_S_STUCK, lst, sizeof lst);
    fprintf(out, "    stuck in it:        %s", lst);
    if (c->hang_waited > 0) fprintf(out, " (in flight %.1f s when a flight record was written)", c->hang_waited);
    ns_xrank_rank_list(c, NS_XRANK_S_DONE, lst, sizeof lst);
    fprintf(out, "\n    finished it:        %s\n", lst);
    ns_xrank_rank_list(c, NS_XRANK_S_UNKNOWN, lst, sizeof lst);
    if (strcmp(lst, "none")) fprintf(out, "    no record of:       %s\n", lst);
    int shown = 0;
    for (uint32_t r = 0; r < c->nranks && shown < 64; r++) {
      const ns_xrank_rank* rk = &c->ranks[r];
      if (c->state[r] == NS_XRANK_S_DONE && c->nranks > 16) continue;
      char where[300], lastop[64] = "none";
      rank_where(x, rk, where, sizeof where);
      if (rk->has_last) snprintf(lastop, sizeof lastop, "%s seq %" PRIu64, func_name(rk->last_func), rk->last_seq);
      static const char* const names[] = {"no record", "never posted", "stuck", "finished"};
      fprintf(out, "    rank %-5u %-28s %-12s last completed: %s\n", r, where, names[c->state[r]], lastop);
      if (rk->waits_for[0]) fprintf(out, "               waits for: %s\n", rk->waits_for);
      shown++;
    }
    if (c->hang_candidates > 1)
      fprintf(out, "    (%" PRIu64 " later collectives of this communicator were left incomplete too)\n",
              c->hang_candidates - 1);
  }
}

static int by_lateness(const void* a, const void* b, void* ranks) {
  const ns_xrank_rank* r = ranks;
  double p = r[*(const uint32_t*)a].median_ns, q = r[*(const uint32_t*)b].median_ns;
  return p > q ? -1 : p < q;
}

/* The ranks of c that have lateness, most late first; NULL when none. */
static uint32_t* ranked(const ns_xrank_comm* c, uint32_t* n) {
  uint32_t* o = malloc((c->nranks ? c->nranks : 1) * sizeof *o);
  *n = 0;
  if (!o) return NULL;
  for (uint32_t r = 0; r < c->nranks; r++)
    if (c->ranks[r].n) o[(*n)++] = r;
  qsort_r(o, *n, sizeof *o, by_lateness, c->ranks);
  return o;
}

static void text_lateness(const ns_xr* x, FILE* out) {
  fprintf(out, "\n# lateness per rank: arrival (kernel start, else Coll start) minus the collective's median arrival,\n"
               "# on clocks aligned across hosts; median and p99 over the run (outlier: median >= %.0f us and > %.0f\n"
               "# robust deviations above the median rank); arrival +-: the median bound of its arrivals (its GPU\n"
               "# clock fit's error; 'host': Coll start times, as exact as the host's clock alignment). A GPU whose\n"
               "# kernels always start late has a fit as wide as that delay; the collectives' ends, which the ranks\n"
               "# reach together, then place its clock inside that bound (summary.json: gpuClockRefinedUs)\n",
          NS_XR_LATE_FLOOR_NS / 1e3, NS_XR_LATE_MADS);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    uint32_t n;
    uint32_t* o = c->ops_late ? ranked(c, &n) : NULL;
    if (!o) continue;
    char outl[512];
    size_t at = 0;
    outl[0] = 0;
    for (uint32_t k = 0; k < n && at + 16 < sizeof outl; k++)
      if (c->ranks[o[k]].outlier) at += (size_t)snprintf(outl + at, sizeof outl - at, "%s%u", at ? "," : "", o[k]);
    fprintf(out, "  communicator 0x%016" PRIx64 "%s%s%s, %u ranks, %" PRIu64 " collectives: %s%s\n", c->comm_id,
            c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", c->nranks, c->ops_late,
            at ? "straggler(s): rank " : "no straggler", outl);
    fprintf(out, "    %6s %-28s %12s %12s %10s %14s\n", "rank", "host:pid", "median(us)", "p99(us)", "last",
            "arrival +-(us)");
    for (uint32_t k = 0; k < n && k < 16; k++) {
      const ns_xrank_rank* rk = &c->ranks[o[k]];
      char where[300];
      rank_where(x, rk, where, sizeof where);
      char bound[32];
      if (!(rk->bound_median_ns > 0)) snprintf(bound, sizeof bound, "host");
      else if (!isfinite(rk->bound_median_ns)) snprintf(bound, sizeof bound, "unbounded");
      else snprintf(bound, sizeof bound, "%.2f", rk->bound_median_ns / 1e3);
      fprintf(out, "    %6u %-28s %12.2f %12.2f %10" PRIu64 " %14s%s\n", o[k], where, rk->median_ns / 1e3,
              rk->p99_ns / 1e3, rk->last_count, bound, rk->outlier ? "  <- straggler" : "");
    }
    if (n > 16) fprintf(out, "    ... %u more ranks (summary.json has all)\n", n - 16);
    free(o);
  }
}

/* The rank most often last, or -1. */
static int32_t top_rank(const ns_xrank_comm* c) {
  int32_t best = -1;
  for (uint32_t r = 0; r < c->nranks; r++)
    if (c->ranks[r].last_count && (best < 0 || c->ranks[r].last_count > c->ranks[best].last_count)) best = (int32_t)r;
  return best;
}

static void text_cross(const ns_xr* x, FILE* out) {
  fprintf(out, "\n# cross-rank arrival (kernel start, else Coll start; aligned clocks): which rank was last at each collective\n");
  fprintf(out, "# %-18s %6s %9s %9s %7s %13s %15s %14s\n", "commId", "nranks", "compared", "last rank", "share",
          "mean gap(us)", "mean spread(us)", "max spread(us)");
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    int32_t r = top_rank(c);
    if (r < 0 || !c->compared) continue;
    fprintf(out, "  0x%016" PRIx64 " %6u %9" PRIu64 " %9d %6.1f%% %13.2f %15.2f %14.2f\n", c->comm_id, c->nranks,
            c->compared, r, 100.0 * (double)c->ranks[r].last_count / (double)c->compared,
            (double)c->ranks[r].gap_sum_ns / (double)c->ranks[r].last_count / 1e3,
            (double)c->spread_sum_ns / (double)c->compared / 1e3, (double)c->spread_max_ns / 1e3);
  }
}

void ns_xr_text(const ns_xr* x, int wide, FILE* out) {
  ns_hosts_text(x->hosts, wide, out);
  if (!x->nhangs) ns_xrank_hangs_text(x, out);
  ns_xrank_mismatches_tail_text(x, out);
  text_lateness(x, out);
  text_cross(x, out);
}

/* Opens a communicator's object: its id, its name (when `named`), its size. */
static void json_comm_begin(ns_json* j, const ns_xrank_comm* c, int named) {
  nsj_obj_begin(j);
  nsj_khex(j, "commId", c->comm_id);
  if (named) nsj_kstr(j, "name", c->name);
  nsj_ku64(j, "nranks", c->nranks);
}

static void json_hangs(const ns_xr* x, ns_json* j) {
  nsj_key(j, "hangs");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    if (!c->hang) continue;
    json_comm_begin(j, c, 1);
    nsj_kstr(j, "func", func_name(c->hang_func));
    nsj_ku64(j, "seq", c->hang_seq);
    nsj_kbool(j, "seenStuck", c->hang_by_fr);
    nsj_kf64(j, "waitedSec", c->hang_waited);
    nsj_ku64(j, "laterIncomplete", c->hang_candidates - 1);
    static const char* const keys[] = {"noRecord", "neverPosted", "stuck", "finished"};
    for (int st = 0; st < 4; st++) {
      nsj_key(j, keys[st]);
      nsj_arr_begin(j);
      for (uint32_t r = 0; r < c->nranks; r++)
        if (c->state[r] == st) nsj_u64(j, r);
      nsj_arr_end(j);
    }
    nsj_key(j, "ranks");
    nsj_arr_begin(j);
    for (uint32_t r = 0; r < c->nranks; r++) {
      const ns_xrank_rank* rk = &c->ranks[r];
      nsj_obj_begin(j);
      nsj_ku64(j, "rank", r);
      nsj_kstr(j, "state", keys[c->state[r]]);
      if (rk->file >= 0) {
        nsj_kstr(j, "host", x->files[rk->file].host);
        nsj_ku64(j, "pid", x->files[rk->file].pid);
      }
      nsj_key(j, "lastCompleted");
      if (rk->has_last) {
        nsj_obj_begin(j);
        nsj_kstr(j, "func", func_name(rk->last_func));
        nsj_ku64(j, "seq", rk->last_seq);
        nsj_obj_end(j);
      } else {
        nsj_null(j);
      }
      if (rk->waits_for[0]) nsj_kstr(j, "waitsFor", rk->waits_for);
      /* on the aligned timeline, us from the first rank's arrival at the stuck collective */
      if (c->hang_arr != INT64_MAX && c->posted && c->posted[r] != INT64_MIN) nsj_kf64(j, "postedUs", (double)(c->posted[r] - c->hang_arr) / 1e3);
      if (c->hang_arr != INT64_MAX && rk->has_last) nsj_kf64(j, "lastEndUs", (double)(rk->last_end - c->hang_arr) / 1e3);
      nsj_obj_end(j);
    }
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}

static void json_lateness(const ns_xr* x, ns_json* j) {
  nsj_key(j, "lateness");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    uint32_t n;
    uint32_t* o = c->ops_late ? ranked(c, &n) : NULL;
    if (!o) continue;
    json_comm_begin(j, c, 1);
    nsj_ku64(j, "collectives", c->ops_late);
    nsj_key(j, "outliers");
    nsj_arr_begin(j);
    for (uint32_t k = 0; k < n; k++)
      if (c->ranks[o[k]].outlier) nsj_u64(j, o[k]);
    nsj_arr_end(j);
    nsj_key(j, "ranks");
    nsj_arr_begin(j);
    for (uint32_t k = 0; k < n; k++) {
      const ns_xrank_rank* rk = &c->ranks[o[k]];
      nsj_obj_begin(j);
      nsj_ku64(j, "rank", o[k]);
      if (rk->file >= 0) nsj_kstr(j, "host", x->files[rk->file].host);
      nsj_ku64(j, "collectives", rk->n);
      nsj_kf64(j, "medianUs", rk->median_ns / 1e3);
      nsj_kf64(j, "p99Us", rk->p99_ns / 1e3);
      nsj_ku64(j, "lastCount", rk->last_count);
      nsj_kbool(j, "outlier", rk->outlier);
      /* how far its arrivals may be off (median): its GPU clock bound, 0 for host times, null unbounded */
      nsj_kf64(j, "arrivalBoundUs", rk->bound_median_ns / 1e3);
      if (rk->gpu_samples) {
        /* its GPU clock as the collectives' ends place it: the correction, and on how many ops it was taken */
        nsj_kf64(j, "gpuClockRefinedUs", rk->gpu_found_ns / 1e3);
        nsj_kf64(j, "gpuClockUncertaintyUs", rk->gpu_uncert_ns / 1e3);
        nsj_ku64(j, "gpuClockCollectives", rk->gpu_samples);
        nsj_ku64(j, "gpuClockOpsMoved", rk->gpu_moved);
      }
      nsj_obj_end(j);
    }
    nsj_arr_end(j);
    nsj_obj_end(j);
    free(o);
  }
  nsj_arr_end(j);
}

static void json_cross(const ns_xr* x, ns_json* j) {
  nsj_key(j, "crossRank");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    int32_t r = top_rank(c);
    if (r < 0 || !c->compared) continue;
    json_comm_begin(j, c, 0);
    nsj_ku64(j, "compared", c->compared);
    nsj_ku64(j, "partial", c->partial);
    nsj_ki64(j, "lastRank", r);
    nsj_kf64(j, "lastShare", (double)c->ranks[r].last_count / (double)c->compared);
    nsj_kf64(j, "meanGapUs", (double)c->ranks[r].gap_sum_ns / (double)c->ranks[r].last_count / 1e3);
    nsj_kf64(j, "meanSpreadUs", (double)c->spread_sum_ns / (double)c->compared / 1e3);
    nsj_kf64(j, "maxSpreadUs", (double)c->spread_max_ns / 1e3);
    nsj_key(j, "lastCounts");
    nsj_arr_begin(j);
    for (uint32_t k = 0; k < c->nranks; k++) nsj_u64(j, c->ranks[k].last_count);
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}

void ns_xr_json(const ns_xr* x, ns_json* j) {
  ns_hosts_json(x->hosts, j);
  json_hangs(x, j);
  ns_xrank_mismatches_json(x, j);
  ns_xrank_incomplete_json(x, j);
  json_lateness(x, j);
  json_cross(x, j);
}
