/* ncclscope analysis: instance lifetime, configuration, the in-flight event
 * table, communicators and the clock queries.
 *
 * Runs on the one thread that owns the instance: the plugin's writer thread
 * or the CLI's main thread. Never on NCCL's threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

void ns_analysis_config_default(ns_analysis_config* cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->window_sec = 5.0;
  cfg->window_ops = 0;
  cfg->grace_ns = 20000000ull;
  cfg->max_age_ns = 10000000000ull;
  cfg->timer_quantum_ns = 2048;
  cfg->max_drift_ppm = 500.0;
  cfg->clock_slack_ns = 0.0;
  cfg->clock_max_age_sec = 120.0;
}

void ns_analysis_config_from_env(ns_analysis_config* cfg) {
  const char* s = getenv("NCCLSCOPE_WINDOW_SEC");
  if (s && *s) {
    char* end = NULL;
    double v = strtod(s, &end);
    if (end != s && v > 0 && v < 1e6) cfg->window_sec = v;
  }
  s = getenv("NCCLSCOPE_WINDOW_OPS");
  if (s && *s) {
    char* end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (end != s) cfg->window_ops = v;
  }
}

ns_analysis* ns_analysis_create(const ns_analysis_config* cfg) {
  ns_analysis* a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (cfg)
    a->cfg = *cfg;
  else
    ns_analysis_config_default(&a->cfg);
  if (a->cfg.grace_ns == 0) a->cfg.grace_ns = 1;
  if (a->cfg.max_age_ns < a->cfg.grace_ns) a->cfg.max_age_ns = a->cfg.grace_ns * 10;
  a->nbuckets = 1024;
  a->buckets = malloc(a->nbuckets * sizeof *a->buckets);
  if (!a->buckets) {
    free(a);
    return NULL;
  }
  memset(a->buckets, 0xff, a->nbuckets * sizeof *a->buckets);
  a->free_head = -1;
  return a;
}

void ns_analysis_destroy(ns_analysis* a) {
  if (!a) return;
  for (size_t i = 0; i < a->ncomms; i++) {
    if (!a->comms[i]) continue;
    ns_cf_free(&a->comms[i]->clock);
    free(a->comms[i]);
  }
  free(a->comms);
  for (size_t i = 0; i < a->nwins; i++) ns_aggr_free(&a->wins[i].ag);
  free(a->wins);
  ns_aggr_free(&a->total);
  for (size_t i = 0; i < a->nrows; i++) ns_pct_free(&a->rows[i].pct);
  free(a->rows);
  free(a->nodes);
  free(a->buckets);
  free(a);
}

ns_comm_state* ns_an_comm(ns_analysis* a, uint32_t comm, int create) {
  if (comm < a->ncomms && a->comms[comm]) return a->comms[comm];
  if (!create || comm > (1u << 24)) return NULL;
  if (comm >= a->ncomms) {
    size_t n = a->ncomms ? a->ncomms : 8;
    while (n <= comm) n *= 2;
    ns_comm_state** c = realloc(a->comms, n * sizeof *c);
    if (!c) return NULL;
    memset(c + a->ncomms, 0, (n - a->ncomms) * sizeof *c);
    a->comms = c;
    a->ncomms = n;
  }
  ns_comm_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->comm = comm;
  s->rank = -1;
  if (ns_cf_init(&s->clock, a->cfg.timer_quantum_ns, a->cfg.max_drift_ppm, a->cfg.clock_slack_ns,
                 a->cfg.clock_max_age_sec) != 0) {
    free(s);
    return NULL;
  }
  a->comms[comm] = s;
  return s;
}

void ns_analysis_comm(ns_analysis* a, const ns_comm_info* ci) {
  ns_comm_state* s = ns_an_comm(a, ci->comm, 1);
  if (!s) return;
  s->known = 1;
  s->comm_id = ci->comm_id;
  s->rank = ci->rank;
  s->nranks = ci->nranks;
  if (ci->has_name) {
    size_t len = strnlen(ci->comm_name, sizeof s->name - 1);
    memcpy(s->name, ci->comm_name, len);
    s->name[len] = '\0';
  }
}

/* ---- in-flight table ---- */
static size_t hash_id(const ns_analysis* a, uint64_t id) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdull;
  id ^= id >> 29;
  return (size_t)id & (a->nbuckets - 1);
}

static void rehash(ns_analysis* a, size_t nb) {
  int32_t* b = malloc(nb * sizeof *b);
  if (!b) return; /* keep the old table: longer chains, still correct */
  memset(b, 0xff, nb * sizeof *b);
  free(a->buckets);
  a->buckets = b;
  a->nbuckets = nb;
  for (size_t i = 0; i < a->nnodes_cap; i++) {
    ns_node* n = &a->nodes[i];
    if (n->id == 0) continue;
    size_t h = hash_id(a, n->id);
    n->next = a->buckets[h];
    a->buckets[h] = (int32_t)i;
  }
}

/* Makes sure k nodes can be created without moving the pool. */
static int reserve(ns_analysis* a, size_t k) {
  if (a->live_nodes + k <= a->nnodes_cap) return 0;
  size_t nc = a->nnodes_cap ? a->nnodes_cap * 2 : 256;
  if (nc > (size_t)INT32_MAX) return -1;
  ns_node* nn = realloc(a->nodes, nc * sizeof *nn);
  if (!nn) return -1;
  memset(nn + a->nnodes_cap, 0, (nc - a->nnodes_cap) * sizeof *nn);
  for (size_t i = nc; i-- > a->nnodes_cap;) {
    nn[i].next = a->free_head;
    a->free_head = (int32_t)i;
  }
  a->nodes = nn;
  a->nnodes_cap = nc;
  if (a->nbuckets < nc) rehash(a, a->nbuckets * 2 < nc ? nc : a->nbuckets * 2);
  return 0;
}

ns_node* ns_an_find(ns_analysis* a, uint64_t id) {
  if (id == 0 || !a->nodes) return NULL;
  for (int32_t i = a->buckets[hash_id(a, id)]; i >= 0; i = a->nodes[i].next)
    if (a->nodes[i].id == id) return &a->nodes[i];
  return NULL;
}

ns_node* ns_an_get(ns_analysis* a, uint64_t id, uint64_t ts) {
  ns_node* n = ns_an_find(a, id);
  if (n || id == 0) return n;
  if (a->free_head < 0 && reserve(a, 1) != 0) return NULL;
  if (a->free_head < 0) return NULL;
  int32_t i = a->free_head;
  n = &a->nodes[i];
  a->free_head = n->next;
  memset(n, 0, sizeof *n);
  n->id = id;
  n->first_seen = n->last_activity = ts;
  size_t h = hash_id(a, id);
  n->next = a->buckets[h];
  a->buckets[h] = i;
  a->live_nodes++;
  a->st.inflight = a->live_nodes;
  if (a->live_nodes > a->st.inflight_peak) a->st.inflight_peak = a->live_nodes;
  return n;
}

void ns_an_remove(ns_analysis* a, ns_node* n) {
  int32_t idx = (int32_t)(n - a->nodes);
  int32_t* p = &a->buckets[hash_id(a, n->id)];
  while (*p >= 0 && *p != idx) p = &a->nodes[*p].next;
  if (*p == idx) *p = n->next;
  n->id = 0;
  n->next = a->free_head;
  a->free_head = idx;
  a->live_nodes--;
  a->st.inflight = a->live_nodes;
}

/* ---- feeding ----
 * A scan visits every slot of the node table, so it costs the table's
 * capacity, however few nodes are due. It runs at most once per ms of trace
 * time, and only once the records since the last scan pay for it
 * (SCAN_SLOTS_PER_RECORD slot visits each) or, when records are few, after
 * SCAN_MAX_DELAY_GRACES grace periods. Thousands of never-stopped events
 * (lost stops) then cost O(records) instead of O(records x open events):
 * bench/analysis_open.c measured analysis 21x slower beside 10,000 open
 * events and 140x beside 100,000 before (65,000 records/s, less than a busy
 * rank produces). The price: an op may be finalized, and a window closed,
 * up to 5 grace periods (100 ms) late while records are scarce. */
#define SCAN_SLOTS_PER_RECORD 16
#define SCAN_MAX_DELAY_GRACES 5

static int scan_due(const ns_analysis* a) {
  uint64_t since = a->now - a->last_scan;
  if (since < 1000000ull) return 0;
  return a->records_since_scan * SCAN_SLOTS_PER_RECORD >= a->nnodes_cap ||
         since >= SCAN_MAX_DELAY_GRACES * a->cfg.grace_ns;
}

static void scan(ns_analysis* a) {
  a->last_scan = a->now;
  a->records_since_scan = 0;
  ns_an_scan(a, 0);
  ns_win_scan(a, 0);
}

void ns_analysis_record(ns_analysis* a, const ns_record* r, const char* const strs[NS_REC_STRS]) {
  static const char* const none[NS_REC_STRS] = {NULL, NULL, NULL, NULL};
  a->st.records++;
  a->records_since_scan++;
  if (reserve(a, 3) != 0) return; /* out of memory: drop (counted in records only) */
  ns_an_handle(a, r, strs ? strs : none);
  if (r->ts > a->now) a->now = r->ts;
  if (scan_due(a)) scan(a);
}

void ns_analysis_tick(ns_analysis* a, uint64_t now_ns) {
  if (now_ns > a->now) a->now = now_ns;
  if (scan_due(a)) scan(a);
}

void ns_analysis_flush(ns_analysis* a) {
  ns_an_scan(a, 1);
  ns_win_scan(a, 1);
}

void ns_analysis_get_stats(const ns_analysis* a, ns_analysis_stats* out) { *out = a->st; }

/* ---- clock queries ---- */
int ns_analysis_clock_fit(ns_analysis* a, uint32_t comm, ns_clock_fit* out) {
  memset(out, 0, sizeof *out);
  ns_comm_state* s = ns_an_comm(a, comm, 0);
  if (!s) return 0;
  ns_cf_get(&s->clock, out);
  return out->valid;
}

int ns_analysis_gpu_to_cpu(ns_analysis* a, uint32_t comm, uint64_t ptimer, uint64_t* cpu_ns, double* err_ns) {
  ns_comm_state* s = ns_an_comm(a, comm, 0);
  if (!s) return 0;
  return ns_cf_convert(&s->clock, ptimer, cpu_ns, err_ns);
}
