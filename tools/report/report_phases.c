/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, `report`: GPU time by kernel phase (report_phases.h). */
#include "report/report_phases.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/idmap.h"

#define NS_NPHASES 3
static const char* const phase_names[NS_NPHASES] = {"initial_sync", "compute", "final_sync"};

typedef struct {
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  uint64_t ns[NS_NPHASES]; /* GPU time per phase */
  uint64_t n[NS_NPHASES];  /* phases timed */
} ph_rank;

typedef struct {
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
} ph_serial;

typedef struct {
  uint32_t serial;
  uint32_t phase;
  uint64_t start; /* pTimer */
} ph_open;

/* A communicator's judgement (ns_phases_finish). */
typedef struct {
  size_t first, n; /* its ranks: ranks[first, first + n) */
  double median;   /* the median rank's initial-sync share */
  int32_t waits;   /* a rank that waits for its peers, -1 none */
  int32_t last;    /* a rank its peers wait for, -1 none */
} ph_comm;

struct ns_phases {
  ph_rank* ranks;
  size_t nranks, capranks;
  ns_idmap rank_index; /* hash of (comm_id, rank) -> index + 1 (the next odd key on a collision) */
  ph_serial* serials;  /* of the file being read, by serial */
  size_t nserials;
  ph_open* open; /* phases started, not stopped, of the file being read */
  size_t nopen, capopen;
  uint32_t* free_open; /* slots of `open` to reuse */
  size_t nfree, capfree;
  ns_idmap open_index; /* event id -> slot + 1 */
  ph_comm* comms;
  size_t ncomms;
};

ns_phases* ns_phases_new(void) {
  ns_phases* p = calloc(1, sizeof *p);
  if (!p) return NULL;
  ns_idmap_init(&p->rank_index);
  ns_idmap_init(&p->open_index);
  return p;
}

void ns_phases_free(ns_phases* p) {
  if (!p) return;
  free(p->ranks);
  free(p->serials);
  free(p->open);
  free(p->free_open);
  free(p->comms);
  ns_idmap_free(&p->rank_index);
  ns_idmap_free(&p->open_index);
  free(p);
}

void ns_phases_comm(ns_phases* p, const ns_comm_info* ci) {
  if (ci->comm == 0 || ci->comm > (1u << 24)) return;
  ph_serial* table = ns_array_reach(p->serials, &p->nserials, ci->comm, sizeof *p->serials, 16);
  if (!table) return;
  p->serials = table;
  p->serials[ci->comm] = (ph_serial){ci->comm_id, ci->rank, ci->nranks};
}

/* The entry of (comm_id, rank), added when new; NULL when out of memory. */
static ph_rank* rank_of(ns_phases* p, const ph_serial* s) {
  uint64_t h = (s->comm_id * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)s->rank) | 1;
  for (;; h += 2) {
    uint64_t* at = ns_idmap_get(&p->rank_index, h);
    if (!at) break;
    ph_rank* r = &p->ranks[*at - 1];
    if (r->comm_id == s->comm_id && r->rank == s->rank) return r;
  }
  ph_rank* ranks = ns_array_room(p->ranks, &p->capranks, p->nranks, sizeof *p->ranks, 64);
  if (!ranks) return NULL;
  p->ranks = ranks;
  int inserted;
  uint64_t* slot = ns_idmap_put(&p->rank_index, h, &inserted);
  if (!slot) return NULL;
  ph_rank* r = &p->ranks[p->nranks];
  memset(r, 0, sizeof *r);
  r->comm_id = s->comm_id;
  r->rank = s->rank;
  r->nranks = s->nranks;
  *slot = ++p->nranks;
  return r;
}

void ns_phases_record(ns_phases* p, const ns_record* r) {
  if (r->type != NS_EV_KERNEL_PHASE) return;
  if (r->kind == NS_REC_START) {
    uint64_t phase = r->num[NS_KERNEL_PHASE_PHASE];
    if (phase >= NS_NPHASES || r->comm >= p->nserials || !p->serials[r->comm].nranks) return;
    int inserted;
    uint64_t* v = ns_idmap_put(&p->open_index, r->id, &inserted);
    if (!v) return;
    if (inserted) { /* a slot of its own; an id started again keeps its slot, the newer start wins */
      uint32_t slot;
      if (p->nfree) {
        slot = p->free_open[--p->nfree];
      } else {
        ph_open* open = ns_array_room(p->open, &p->capopen, p->nopen, sizeof *p->open, 64);
        if (!open) {
          ns_idmap_del(&p->open_index, r->id);
          return;
        }
        p->open = open;
        slot = (uint32_t)p->nopen++;
      }
      *v = (uint64_t)slot + 1;
    }
    p->open[*v - 1] = (ph_open){r->comm, (uint32_t)phase, r->num[NS_KERNEL_PHASE_PTIMER]};
  } else if (r->kind == NS_REC_STATE && r->state == NS_ST_KERNEL_PHASE_STOP) {
    uint64_t* v = ns_idmap_get(&p->open_index, r->id);
    if (!v) return;
    uint32_t slot = (uint32_t)(*v - 1);
    ns_idmap_del(&p->open_index, r->id);
    uint32_t* free_open = ns_array_room(p->free_open, &p->capfree, p->nfree, sizeof *p->free_open, 64);
    if (free_open) p->free_open = free_open, p->free_open[p->nfree++] = slot;
    const ph_open* o = &p->open[slot];
    if (r->arg <= o->start) return; /* no time, or a timer that went back: nothing to add */
    ph_rank* k = rank_of(p, &p->serials[o->serial]);
    if (!k) return;
    k->ns[o->phase] += r->arg - o->start;
    k->n[o->phase]++;
  }
}

void ns_phases_file_end(ns_phases* p) {
  if (p->nserials) memset(p->serials, 0, p->nserials * sizeof *p->serials);
  ns_idmap_free(&p->open_index);
  ns_idmap_init(&p->open_index);
  p->nopen = p->nfree = 0;
}

static double init_share(const ph_rank* r) {
  uint64_t t = r->ns[0] + r->ns[1] + r->ns[2];
  return t ? (double)r->ns[0] / (double)t : 0;
}

static int by_comm_rank(const void* a, const void* b) {
  const ph_rank *p = a, *q = b;
  if (p->comm_id != q->comm_id) return p->comm_id < q->comm_id ? -1 : 1;
  return p->rank < q->rank ? -1 : p->rank > q->rank;
}

static int by_double(const void* a, const void* b) {
  double p = *(const double*)a, q = *(const double*)b;
  return p < q ? -1 : p > q;
}

static void judge(ph_comm* c, const ph_rank* r, double* scratch) {
  c->waits = c->last = -1;
  if (c->n < 2) return;
  for (size_t i = 0; i < c->n; i++) scratch[i] = init_share(&r[i]);
  qsort(scratch, c->n, sizeof *scratch, by_double);
  c->median = c->n % 2 ? scratch[c->n / 2] : (scratch[c->n / 2 - 1] + scratch[c->n / 2]) / 2;
  double least = scratch[0], second_least = scratch[1], most = scratch[c->n - 1], second_most = scratch[c->n - 2];
  for (size_t i = 0; i < c->n; i++) {
    double s = init_share(&r[i]);
    if (s == most && c->waits < 0) c->waits = (int32_t)i;
    if (s == least && c->last < 0) c->last = (int32_t)i;
  }
  if (!(most >= NS_PHASE_WAITS && most - c->median >= NS_PHASE_GAP && most - second_most >= NS_PHASE_GAP / 2))
    c->waits = -1;
  if (!(c->median >= NS_PHASE_PEERS_WAIT && c->median - least >= NS_PHASE_GAP &&
        second_least - least >= NS_PHASE_GAP / 2))
    c->last = -1;
  /* a rank that waits spends longer in its kernels than the median rank, not less: the ranks of a
   * collective end it together, and it started first */
  for (size_t i = 0; i < c->n; i++) scratch[i] = (double)(r[i].ns[0] + r[i].ns[1] + r[i].ns[2]);
  qsort(scratch, c->n, sizeof *scratch, by_double);
  double median_ns = c->n % 2 ? scratch[c->n / 2] : (scratch[c->n / 2 - 1] + scratch[c->n / 2]) / 2;
  if (c->waits >= 0 && (double)(r[c->waits].ns[0] + r[c->waits].ns[1] + r[c->waits].ns[2]) < median_ns) c->waits = -1;
}

void ns_phases_finish(ns_phases* p) {
  if (!p->nranks) return;
  qsort(p->ranks, p->nranks, sizeof *p->ranks, by_comm_rank); /* rank_index is stale from here */
  free(p->comms);
  p->comms = calloc(p->nranks, sizeof *p->comms);
  double* scratch = malloc(p->nranks * sizeof *scratch);
  p->ncomms = 0;
  for (size_t i = 0; p->comms && scratch && i < p->nranks;) {
    size_t j = i;
    while (j < p->nranks && p->ranks[j].comm_id == p->ranks[i].comm_id) j++;
    ph_comm* c = &p->comms[p->ncomms++];
    c->first = i;
    c->n = j - i;
    judge(c, &p->ranks[i], scratch);
    i = j;
  }
  free(scratch);
}

size_t ns_phases_verdict_text(const ns_phases* p, FILE* out) {
  size_t lines = 0;
  for (size_t i = 0; i < p->ncomms; i++) {
    const ph_comm* c = &p->comms[i];
    const ph_rank* r = &p->ranks[c->first];
    if (c->waits >= 0) {
      fprintf(out,
              "# verdict: rank %d of communicator 0x%016" PRIx64
              " waits for its peers: %.0f %% of its GPU time\n"
              "#   in initial_sync (the median rank %.0f %%): they reach the collectives late\n",
              r[c->waits].rank, r[c->waits].comm_id, 100 * init_share(&r[c->waits]), 100 * c->median);
      lines++;
    }
    if (c->last >= 0) {
      fprintf(out,
              "# verdict: rank %d of communicator 0x%016" PRIx64
              " is waited for: the median rank spends %.0f %%\n"
              "#   of its GPU time in initial_sync, this one %.0f %%: it reaches the collectives last\n",
              r[c->last].rank, r[c->last].comm_id, 100 * c->median, 100 * init_share(&r[c->last]));
      lines++;
    }
  }
  return lines;
}

void ns_phases_text(const ns_phases* p, FILE* out) {
  if (!p->ncomms) return;
  fprintf(out,
          "\n# kernel phases per rank (KernelPhase, NCCL 2.31+): its collectives' GPU time in initial_sync\n"
          "# (waiting for the peers), compute and final_sync; shares of their sum\n");
  fprintf(out, "# %-18s %6s %12s %8s %8s %8s %8s\n", "commId", "rank", "GPU ms", "init %", "compute%", "final %",
          "phases");
  for (size_t i = 0; i < p->ncomms; i++) {
    const ph_comm* c = &p->comms[i];
    for (size_t k = 0; k < c->n; k++) {
      const ph_rank* r = &p->ranks[c->first + k];
      uint64_t t = r->ns[0] + r->ns[1] + r->ns[2];
      double d = t ? (double)t : 1;
      fprintf(out, "  0x%016" PRIx64 " %6d %12.3f %8.1f %8.1f %8.1f %8" PRIu64 "%s\n", r->comm_id, r->rank,
              (double)t / 1e6, 100 * (double)r->ns[0] / d, 100 * (double)r->ns[1] / d, 100 * (double)r->ns[2] / d,
              r->n[0] + r->n[1] + r->n[2],
              (int32_t)k == c->waits  ? "  <- waits"
              : (int32_t)k == c->last ? "  <- waited for"
                                      : "");
    }
  }
}

void ns_phases_json(const ns_phases* p, ns_json* j) {
  nsj_key(j, "kernelPhases");
  nsj_arr_begin(j);
  for (size_t i = 0; i < p->ncomms; i++) {
    const ph_comm* c = &p->comms[i];
    const ph_rank* r = &p->ranks[c->first];
    nsj_obj_begin(j);
    nsj_khex(j, "commId", r->comm_id);
    nsj_kf64(j, "medianInitialSyncShare", c->median);
    if (c->waits >= 0) nsj_ki64(j, "waitsForPeers", r[c->waits].rank);
    if (c->last >= 0) nsj_ki64(j, "waitedFor", r[c->last].rank);
    nsj_key(j, "ranks");
    nsj_arr_begin(j);
    for (size_t k = 0; k < c->n; k++) {
      nsj_obj_begin(j);
      nsj_ki64(j, "rank", r[k].rank);
      for (int ph = 0; ph < NS_NPHASES; ph++) {
        char key[48];
        snprintf(key, sizeof key, "%sNs", phase_names[ph]);
        nsj_ku64(j, key, r[k].ns[ph]);
      }
      nsj_ku64(j, "phases", r[k].n[0] + r[k].n[1] + r[k].n[2]);
      nsj_obj_end(j);
    }
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}
