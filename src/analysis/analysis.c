/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: instance lifetime, configuration,
 * feeding the event assembler and the periodic scans.
 *
 * Runs on the one thread that owns the instance: the plugin's writer thread
 * or the CLI's main thread. Never on NCCL's threads.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "ncclscope/config_vars.h"

void ns_analysis_config_default(ns_analysis_config* cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->window_sec = ns_config_vars()[NS_CFG_NCCLSCOPE_WINDOW_SEC].def;
  cfg->window_ops = (uint64_t)ns_config_vars()[NS_CFG_NCCLSCOPE_WINDOW_OPS].def;
  cfg->grace_ns = 20000000ull;
  cfg->max_age_ns = 10000000000ull;
  cfg->timer_quantum_ns = 2048;
  cfg->max_drift_ppm = 500.0;
  cfg->clock_slack_ns = 0.0;
  cfg->clock_max_age_sec = 120.0;
  cfg->running_max_age_ns = 10000000000ull;
  cfg->kernel_wait_ns = 1000000000ull;
}

void ns_analysis_config_offline(ns_analysis_config* cfg) {
  cfg->running_max_age_ns = 0;
  cfg->kernel_wait_ns = NS_ASM_WAIT_NS;
  cfg->max_open = NS_ASM_OPEN_MAX;
  cfg->max_held = NS_ASM_HELD_MAX;
  cfg->keep_op_verdicts = 1;
}

/* cfg with its bounds made consistent (ns_analysis_create's). */
static ns_analysis_config settled(const ns_analysis_config* cfg) {
  ns_analysis_config c;
  if (cfg)
    c = *cfg;
  else
    ns_analysis_config_default(&c);
  if (c.grace_ns == 0) c.grace_ns = 1;
  if (c.max_age_ns < c.grace_ns) c.max_age_ns = c.grace_ns * 10;
  return c;
}

size_t ns_analysis_event_bytes(void) { return sizeof(ns_an_event); }

void ns_analysis_assembler_config(const ns_analysis_config* cfg, ns_asm_config* ac) {
  ns_analysis_config c = settled(cfg);
  /* An op is final once its children are done and nothing happened to it
   * for grace_ns; it waits at most kernel_wait_ns (never less than 5 grace
   * periods) for expected KernelCh children that do not come. */
  ns_asm_config_default(ac);
  ac->grace_ns = c.grace_ns;
  ac->expect_wait_ns = c.kernel_wait_ns > 5 * c.grace_ns ? c.kernel_wait_ns : 5 * c.grace_ns;
  ac->orphan_wait_ns = c.max_age_ns;
  ac->max_age_ns = c.running_max_age_ns;
  ac->max_open = c.max_open;
  ac->max_held = c.max_held;
  ac->user_bytes = sizeof(ns_an_event);
}

static ns_analysis* create(const ns_analysis_config* cfg) {
  ns_analysis* a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->cfg = settled(cfg);
  ns_idmap_init(&a->link_index);
  ns_idmap_init(&a->batch_of);
  ns_idmap_init(&a->open_plans);
  ns_idmap_init(&a->plan_pending);
  ns_idmap_init(&a->conn_last_stop);
  ns_idmap_init(&a->late_index);
  return a;
}

ns_analysis* ns_analysis_create(const ns_analysis_config* cfg) {
  ns_analysis* a = create(cfg);
  if (!a) return NULL;
  ns_asm_config ac;
  ns_analysis_assembler_config(&a->cfg, &ac);
  ns_an_sink(a, &ac.sink);
  a->as = ns_asm_new(&ac);
  if (!a->as) {
    free(a);
    return NULL;
  }
  a->owns_as = 1;
  return a;
}

ns_analysis* ns_analysis_create_on(const ns_analysis_config* cfg, ns_asm* as, ns_asm_sink* sink) {
  ns_analysis* a = as ? create(cfg) : NULL;
  if (!a) return NULL;
  a->as = as;
  ns_an_sink(a, sink);
  return a;
}

void ns_analysis_destroy(ns_analysis* a) {
  if (!a) return;
  if (a->owns_as) ns_asm_free(a->as);
  ns_launch_free(a);
  ns_batch_free(a);
  ns_idmap_free(&a->conn_last_stop);
  ns_late_free(a);
  ns_pt_comms_free(a);
  ns_an_comms_free(a);
  for (size_t i = 0; i < a->nwins; i++) ns_aggr_free(&a->wins[i].ag);
  free(a->wins);
  ns_aggr_free(&a->total);
  for (size_t i = 0; i < a->nrows; i++) ns_pct_free(&a->rows[i].pct);
  free(a->rows);
  free(a);
}

/* ---- feeding ----
 * The assembler releases what is due in O(1) per record. What the analysis
 * scans itself (the launch links and the windows) is visited only once the
 * records since the last scan pay for it (SCAN_SLOTS_PER_RECORD visits
 * each), or, when records are few, after SCAN_MAX_DELAY_GRACES grace
 * periods, and at most once per ms of trace time. (Before the assembler,
 * the analysis scanned its whole event table here: bench/analysis_open.c
 * measured it 140x slower beside 100,000 never-stopped events.) */
#define SCAN_SLOTS_PER_RECORD 16
#define SCAN_MAX_DELAY_GRACES 5

static int scan_due(const ns_analysis* a) {
  uint64_t since = a->now - a->last_scan;
  if (since < 1000000ull) return 0;
  return a->records_since_scan * SCAN_SLOTS_PER_RECORD >= a->links_cap + a->nwins ||
         since >= SCAN_MAX_DELAY_GRACES * a->cfg.grace_ns;
}

static void scan(ns_analysis* a) {
  a->last_scan = a->now;
  a->records_since_scan = 0;
  /* Links live for 5 grace periods: a look once per grace period is enough
   * (a look every ms cost up to 7 % of the writer's instructions in a
   * 100 us cadence run, callgrind). */
  if (a->now - a->last_link_scan >= a->cfg.grace_ns) {
    a->last_link_scan = a->now;
    ns_launch_scan(a, 0);
  }
  ns_pt_scan(a, 0);
  ns_batch_scan(a, 0);
  ns_win_scan(a, 0);
}

/* A record taken: counted, its time. */
static void took(ns_analysis* a, const ns_record* r) {
  a->st.records++;
  a->records_since_scan++;
  if (r->ts > a->now) a->now = r->ts;
}

void ns_analysis_record(ns_analysis* a, const ns_record* r) {
  took(a, r);
  if (a->owns_as) ns_asm_record(a->as, r);
  if (scan_due(a)) scan(a);
}

void ns_analysis_fed(ns_analysis* a, const ns_record* r) {
  took(a, r);
  if (scan_due(a)) scan(a);
}

void ns_analysis_unanalysed(ns_analysis* a, const ns_record* r) {
  if (r->kind == NS_REC_START && r->type == NS_EV_PROXY_STEP) a->st.steps_unanalysed++;
}

void ns_analysis_tick(ns_analysis* a, uint64_t now_ns) {
  if (now_ns > a->now) a->now = now_ns;
  if (a->owns_as) ns_asm_advance(a->as, a->now); /* else its owner moves it on */
  if (scan_due(a)) scan(a);
}

void ns_analysis_flush(ns_analysis* a) {
  ns_pt_scan(a, 1); /* Broadcasts still without a Coll are drift sources for the ops flushed now */
  ns_asm_flush(a->as);
  ns_batch_scan(a, 1);
  ns_launch_scan(a, 1);
  ns_win_scan(a, 1);
}

void ns_analysis_get_stats(const ns_analysis* a, ns_analysis_stats* out) {
  ns_asm_stats st;
  ns_asm_get_stats(a->as, &st);
  *out = a->st;
  out->inflight = st.live;
  out->inflight_peak = st.peak_live;
}

void ns_analysis_event_stats(const ns_analysis* a, ns_asm_stats* out) { ns_asm_get_stats(a->as, out); }
