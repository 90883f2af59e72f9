/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the summary as JSON (summary.h), through the JSON
 * writer (util/json_writer.h); non-finite numbers are written as null. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/summary.h"
#include "util/json_writer.h"

/* One link row; kind: NULL for a ranked link, else what the row is. */
static void json_link(ns_json* j, const sum_link* l, const char* kind) {
  const ns_link_stats* s = &l->s;
  nsj_obj_begin(j);
  nsj_khex(j, "commId", l->comm_id);
  nsj_ki64(j, "rank", s->rank);
  nsj_ki64(j, "peer", s->peer);
  nsj_kbool(j, "isSend", s->is_send);
  nsj_ki64(j, "channel", s->channel);
  nsj_ku64(j, "steps", s->steps);
  nsj_ku64(j, "bytes", s->bytes);
  if (kind) nsj_kstr(j, "kind", kind);
  nsj_kstr(j, "noFit", s->nofit ? ns_link_nofit_reason(s->nofit) : NULL);
  nsj_ku64(j, "sizes", s->nsizes);
  nsj_key(j, "minPerSize");
  nsj_arr_begin(j);
  for (uint32_t k = 0; k < s->nsizes && k < NS_LINK_SIZES_SHOWN; k++) {
    nsj_obj_begin(j);
    nsj_ku64(j, "bytes", s->sizes[k].bytes);
    nsj_kf64(j, "minUs", s->sizes[k].min_us);
    nsj_ku64(j, "n", s->sizes[k].n);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
  const ns_regression* m[2] = {&s->min, &s->avg};
  const char* nm[2] = {"min", "avg"};
  for (int k = 0; k < 2; k++) {
    nsj_key(j, nm[k]);
    nsj_obj_begin(j);
    nsj_ku64(j, "points", m[k]->n);
    nsj_kbool(j, "ok", m[k]->ok);
    nsj_kf64(j, "latencyUs", m[k]->latency_us);
    nsj_kf64(j, "bandwidthGBs", m[k]->bandwidth_gbs);
    nsj_kf64(j, "r2", m[k]->r2);
    nsj_obj_end(j);
  }
  nsj_obj_end(j);
}

static void json_collective(ns_json* j, ns_row_acc* r) {
  row_figures f = ns_sum_figures(r);
  nsj_obj_begin(j);
  nsj_kstr(j, "func", r->func_name);
  nsj_ku64(j, "nranks", r->nranks);
  nsj_ku64(j, "bytes", r->bytes);
  nsj_ku64(j, "count", r->count_elems);
  nsj_kstr(j, "dtype", r->dtype);
  nsj_khex(j, "commId", r->comm_id);
  if (r->root >= 0) nsj_ki64(j, "root", r->root);
  nsj_kstr(j, "algo", r->algo);
  nsj_kstr(j, "proto", r->proto);
  nsj_ku64(j, "ranks", r->ranks);
  nsj_ku64(j, "calls", r->calls);
  nsj_ku64(j, "callsPerRankMin", r->calls_min);
  nsj_ku64(j, "callsPerRankMax", r->calls_max);
  nsj_ku64(j, "warmupCalls", r->warmup);
  nsj_ku64(j, "timedCalls", r->calls - r->warmup);
  nsj_kf64(j, "timeUs", f.mean_ns / 1e3);
  nsj_kf64(j, "p50Us", f.p50_ns / 1e3);
  nsj_kf64(j, "p90Us", r->calls > r->warmup ? ns_pct_get(&r->pct, 0.9) / 1e3 : 0);
  nsj_kf64(j, "p99Us", f.p99_ns / 1e3);
  nsj_kf64(j, "maxUs", (double)r->pct.max / 1e3);
  nsj_kf64(j, "algbwGBs", f.algbw);
  nsj_kf64(j, "busbwGBs", f.busbw);
  nsj_kf64(j, "busbwP50GBs", f.busbw_p50);
  nsj_kf64(j, "busbwP99GBs", f.busbw_p99);
  nsj_kstr(j, "basis", ns_sum_basis_name(r->basis_max));
  nsj_ku64(j, "batchOps", r->batch_ops);
  nsj_obj_end(j);
}

static void json_clock(ns_json* j, const sum_clock* k) {
  const ns_clock_fit* f = &k->fit;
  const uint64_t* v = k->verdicts;
  nsj_obj_begin(j);
  nsj_khex(j, "commId", k->comm_id);
  nsj_ki64(j, "rank", k->rank);
  nsj_kstr(j, "gpu", k->gpu);
  nsj_ku64(j, "samples", f->samples);
  nsj_kus(j, "gpuClockOffsetUs", f->offset_ns); /* exact, from integer ns */
  int known = ns_sum_drift_known(f);
  nsj_kf64(j, "gpuClockDriftPpm", known ? f->drift_ppm : NAN);
  nsj_kf64(j, "gpuClockDriftErrPpm", known ? f->drift_err_ppm : NAN);
  nsj_kf64(j, "gpuClockErrorUs", f->error_ns / 1e3);
  nsj_kus(j, "refUs", (int64_t)f->ref_cpu_ns);
  nsj_ku64(j, "resets", f->resets);
  nsj_ku64(j, "rejectedSamples", f->rejected);
  nsj_ku64(j, "opsPtimerOwn", v[NS_PT_OWN]);
  nsj_key(j, "opsPtimerForeign");
  nsj_obj_begin(j);
  nsj_ku64(j, "drift", v[NS_PT_DRIFT]);
  nsj_ku64(j, "overrun", v[NS_PT_OVERRUN]);
  nsj_ku64(j, "causal", v[NS_PT_CAUSAL]);
  nsj_obj_end(j);
  nsj_obj_end(j);
}

static void json_tag(ns_json* j, const ns_tag_stats* t) {
  nsj_obj_begin(j);
  nsj_khex(j, "commId", t->comm_id);
  if (t->other) {
    nsj_kstr(j, "tag", "other");
  } else {
    nsj_ku64_str(j, "tag", t->tag); /* a string: a 64-bit tag is past a double's 2^53 */
  }
  nsj_ku64(j, "ranks", t->ranks);
  nsj_ku64(j, "ops", t->ops);
  nsj_ku64(j, "bytes", t->bytes);
  nsj_ku64(j, "timedOps", t->timed);
  nsj_kus(j, "totalTimeUs", (int64_t)t->dur_ns_sum);
  nsj_obj_end(j);
}

static void json_recording(ns_json* j, const ns_summary_recording* r) {
  /* its steps not analysed are the top-level stepsNotAnalysed */
  nsj_key(j, "recording");
  nsj_obj_begin(j);
  nsj_ku64(j, "events", r->events);
  nsj_ku64(j, "recordsDropped", r->records_dropped);
  nsj_ku64(j, "bytesLostToWriteErrors", r->bytes_lost);
  nsj_ku64(j, "blocksLost", r->blocks_lost);
  nsj_ku64(j, "writeErrors", r->write_errors);
  nsj_kbool(j, "complete", !r->records_dropped && !r->bytes_lost);
  nsj_obj_end(j);
}

int ns_summary_json(ns_summary* sm, const ns_summary_options* opt, FILE* out) {
  ns_json* j = nsj_new(out);
  if (!j) return -1;
  size_t max_links = ns_sum_max_links(opt);
  if (max_links > sm->max_links) max_links = sm->max_links;
  size_t nr = 0;
  sum_row* rows = ns_sum_sorted_rows(sm, &nr);
  nsj_obj_begin(j);
  nsj_key(j, "collectives");
  nsj_arr_begin(j);
  for (size_t i = 0; rows && i < nr; i++) json_collective(j, &rows[i].row);
  nsj_arr_end(j);
  nsj_key(j, "slowestLinks");
  nsj_arr_begin(j);
  for (size_t i = 0; i < sm->nranked_kept && i < max_links; i++) json_link(j, &sm->ranked[i], NULL);
  nsj_arr_end(j);
  /* how many rows slowestLinks would have without the max_links cut (report.html says what it omits) */
  nsj_ku64(j, "rankedLinks", sm->nranked);
  nsj_key(j, "otherLinks");
  nsj_arr_begin(j);
  for (size_t i = 0; i < sm->nother_kept && i < max_links; i++)
    json_link(j, &sm->other[i], ns_sum_link_kind(&sm->other[i].s));
  nsj_arr_end(j);
  nsj_ku64(j, "stepsNotAnalysed", sm->steps_unanalysed);
  nsj_key(j, "clocks");
  nsj_arr_begin(j);
  for (size_t i = 0; i < sm->nclocks; i++) json_clock(j, &sm->clocks[i]);
  nsj_arr_end(j);
  nsj_key(j, "tags");
  nsj_arr_begin(j);
  size_t nt = 0;
  const ns_tag_stats* t = ns_sum_sorted_tags(sm, &nt);
  for (size_t i = 0; i < nt; i++) json_tag(j, &t[i]);
  nsj_arr_end(j);
  if (opt && opt->recording) json_recording(j, opt->recording);
  nsj_obj_end(j);
  nsj_line_end(j);
  int rc = nsj_free(j);
  return rc || ferror(out) ? -1 : 0;
}

int ns_analysis_summary_json(ns_analysis* const* list, size_t n, const ns_summary_options* opt, FILE* out) {
  ns_summary* sm = ns_sum_of(list, n, opt);
  int rc = sm ? ns_summary_json(sm, opt, out) : -1;
  ns_summary_free(sm);
  return rc;
}
