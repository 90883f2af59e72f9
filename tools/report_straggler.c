/* ncclscope CLI: who arrives last at each collective (see report_straggler.h).
 * Open collectives live in an open-addressing table (linear probing,
 * backward-shift deletion) that grows up to NS_STRAG_MAX_OPEN entries. */
#include "report_straggler.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RANKS_TRACKED 65536u /* per-rank counters of larger communicators are not kept */

typedef struct {
  uint8_t used;
  int host;
  int func;
  uint64_t comm_id, seq;
  uint32_t nranks, seen;
  int32_t last_rank;
  uint64_t first_ts, last_ts, second_ts; /* earliest, latest and second latest arrival */
} open_coll;

typedef struct {
  uint64_t comm_id;
  uint32_t nranks, ntracked;
  uint64_t compared, partial;
  uint64_t spread_sum_ns, spread_max_ns;
  uint64_t* last_count; /* per rank: times it arrived last */
  uint64_t* gap_sum_ns; /* per rank: sum of (last - second last) when it was last */
} comm_stats;

struct ns_strag {
  open_coll* tab;
  size_t cap, n; /* cap: power of two */
  comm_stats* comms;
  size_t ncomms, capcomms;
  uint64_t not_compared, dropped_full, other_host;
};

ns_strag* ns_strag_new(void) {
  ns_strag* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cap = 1024;
  s->tab = calloc(s->cap, sizeof *s->tab);
  if (!s->tab) {
    free(s);
    return NULL;
  }
  return s;
}

void ns_strag_free(ns_strag* s) {
  if (!s) return;
  for (size_t i = 0; i < s->ncomms; i++) {
    free(s->comms[i].last_count);
    free(s->comms[i].gap_sum_ns);
  }
  free(s->comms);
  free(s->tab);
  free(s);
}

static size_t slot_of(const ns_strag* s, uint64_t comm_id, int func, uint64_t seq) {
  uint64_t h = comm_id ^ (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)func << 56);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return (size_t)h & (s->cap - 1);
}

static int grow(ns_strag* s) {
  size_t nc = s->cap * 2;
  open_coll* nt = calloc(nc, sizeof *nt);
  if (!nt) return -1;
  open_coll* old = s->tab;
  size_t oc = s->cap;
  s->tab = nt;
  s->cap = nc;
  for (size_t i = 0; i < oc; i++) {
    if (!old[i].used) continue;
    size_t k = slot_of(s, old[i].comm_id, old[i].func, old[i].seq);
    while (nt[k].used) k = (k + 1) & (nc - 1);
    nt[k] = old[i];
  }
  free(old);
  return 0;
}

/* Backward-shift deletion keeps every probe chain unbroken. */
static void remove_at(ns_strag* s, size_t i) {
  size_t mask = s->cap - 1;
  s->tab[i].used = 0;
  s->n--;
  for (size_t j = (i + 1) & mask; s->tab[j].used; j = (j + 1) & mask) {
    size_t home = slot_of(s, s->tab[j].comm_id, s->tab[j].func, s->tab[j].seq);
    /* move j into the hole at i if its home is not in the cyclic range (i, j] */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      s->tab[i] = s->tab[j];
      s->tab[j].used = 0;
      i = j;
    }
  }
}

static comm_stats* comm_of(ns_strag* s, uint64_t comm_id, uint32_t nranks) {
  for (size_t i = 0; i < s->ncomms; i++)
    if (s->comms[i].comm_id == comm_id) return &s->comms[i];
  if (s->ncomms == s->capcomms) {
    size_t nc = s->capcomms ? s->capcomms * 2 : 8;
    comm_stats* c = realloc(s->comms, nc * sizeof *c);
    if (!c) return NULL;
    s->comms = c;
    s->capcomms = nc;
  }
  comm_stats* c = &s->comms[s->ncomms];
  memset(c, 0, sizeof *c);
  c->comm_id = comm_id;
  c->nranks = nranks;
  c->ntracked = nranks < MAX_RANKS_TRACKED ? nranks : MAX_RANKS_TRACKED;
  c->last_count = calloc(c->ntracked ? c->ntracked : 1, sizeof *c->last_count);
  c->gap_sum_ns = calloc(c->ntracked ? c->ntracked : 1, sizeof *c->gap_sum_ns);
  if (!c->last_count || !c->gap_sum_ns) {
    free(c->last_count);
    free(c->gap_sum_ns);
    return NULL;
  }
  s->ncomms++;
  return c;
}

/* Folds a collective seen by at least two ranks into its communicator's stats. */
static void close_coll(ns_strag* s, const open_coll* o) {
  if (o->seen < 2) {
    s->not_compared++;
    return;
  }
  comm_stats* c = comm_of(s, o->comm_id, o->nranks);
  if (!c) {
    s->not_compared++;
    return;
  }
  c->compared++;
  if (o->seen < o->nranks) c->partial++;
  uint64_t spread = o->last_ts - o->first_ts;
  c->spread_sum_ns += spread;
  if (spread > c->spread_max_ns) c->spread_max_ns = spread;
  if (o->last_rank >= 0 && (uint32_t)o->last_rank < c->ntracked) {
    c->last_count[o->last_rank]++;
    c->gap_sum_ns[o->last_rank] += o->last_ts - o->second_ts;
  }
}

void ns_strag_op(ns_strag* s, int host, const ns_op_result* op) {
  if (op->type != NS_EV_COLL || op->nranks < 2 || (op->flags & NS_OPF_NO_START)) return;
  if (s->n * 2 >= s->cap && (s->n >= NS_STRAG_MAX_OPEN || grow(s) != 0)) {
    /* full: only collectives already open are still matched */
    size_t k = slot_of(s, op->comm_id, op->func, op->seq);
    while (s->tab[k].used && !(s->tab[k].comm_id == op->comm_id && s->tab[k].func == op->func &&
                               s->tab[k].seq == op->seq))
      k = (k + 1) & (s->cap - 1);
    if (!s->tab[k].used) {
      s->dropped_full++;
      return;
    }
  }
  size_t k = slot_of(s, op->comm_id, op->func, op->seq);
  while (s->tab[k].used &&
         !(s->tab[k].comm_id == op->comm_id && s->tab[k].func == op->func && s->tab[k].seq == op->seq))
    k = (k + 1) & (s->cap - 1);
  open_coll* o = &s->tab[k];
  uint64_t t = op->gpu_start_ns ? op->gpu_start_ns : op->start_ns; /* see the header: arrival */
  if (!o->used) {
    *o = (open_coll){.used = 1, .host = host, .func = op->func, .comm_id = op->comm_id, .seq = op->seq,
                     .nranks = op->nranks, .seen = 1, .last_rank = op->rank, .first_ts = t, .last_ts = t,
                     .second_ts = t};
    s->n++;
  } else if (o->host != host) {
    s->other_host++;
    return;
  } else {
    o->seen++;
    if (t < o->first_ts) o->first_ts = t;
    if (t >= o->last_ts) {
      o->second_ts = o->last_ts;
      o->last_ts = t;
      o->last_rank = op->rank;
    } else if (t > o->second_ts || o->seen == 2) {
      o->second_ts = t;
    }
  }
  if (o->seen >= o->nranks) {
    open_coll done = *o;
    remove_at(s, k);
    close_coll(s, &done);
  }
}

void ns_strag_finish(ns_strag* s) {
  for (size_t i = 0; i < s->cap; i++)
    if (s->tab[i].used) close_coll(s, &s->tab[i]);
  memset(s->tab, 0, s->cap * sizeof *s->tab);
  s->n = 0;
}

/* The rank most often last, or -1. */
static int32_t top_rank(const comm_stats* c) {
  int32_t best = -1;
  for (uint32_t r = 0; r < c->ntracked; r++)
    if (c->last_count[r] && (best < 0 || c->last_count[r] > c->last_count[best])) best = (int32_t)r;
  return best;
}

void ns_strag_text(const ns_strag* s, FILE* out) {
  fprintf(out, "\n# cross-rank arrival (kernel start, else Coll start; host clock): which rank was last at each collective\n");
  fprintf(out, "# %-18s %6s %9s %9s %7s %13s %15s %14s\n", "commId", "nranks", "compared", "last rank", "share",
          "mean gap(us)", "mean spread(us)", "max spread(us)");
  for (size_t i = 0; i < s->ncomms; i++) {
    const comm_stats* c = &s->comms[i];
    int32_t r = top_rank(c);
    if (r < 0 || !c->compared) continue;
    fprintf(out, "  0x%016llx %6u %9llu %9d %6.1f%% %13.2f %15.2f %14.2f\n", (unsigned long long)c->comm_id,
            c->nranks, (unsigned long long)c->compared, r, 100.0 * (double)c->last_count[r] / (double)c->compared,
            (double)c->gap_sum_ns[r] / (double)c->last_count[r] / 1e3,
            (double)c->spread_sum_ns / (double)c->compared / 1e3, (double)c->spread_max_ns / 1e3);
  }
  if (s->dropped_full || s->other_host)
    fprintf(out, "  (not compared: %llu collectives beyond the open-table limit, %llu arrivals on another host)\n",
            (unsigned long long)s->dropped_full, (unsigned long long)s->other_host);
}

void ns_strag_json(const ns_strag* s, FILE* out) {
  fputc('[', out);
  int first = 1;
  for (size_t i = 0; i < s->ncomms; i++) {
    const comm_stats* c = &s->comms[i];
    int32_t r = top_rank(c);
    if (r < 0 || !c->compared) continue;
    fprintf(out,
            "%s{\"commId\":\"0x%llx\",\"nranks\":%u,\"compared\":%llu,\"partial\":%llu,\"lastRank\":%d,"
            "\"lastShare\":%.6g,\"meanGapUs\":%.6g,\"meanSpreadUs\":%.6g,\"maxSpreadUs\":%.6g,\"lastCounts\":[",
            first ? "" : ",", (unsigned long long)c->comm_id, c->nranks, (unsigned long long)c->compared,
            (unsigned long long)c->partial, r, (double)c->last_count[r] / (double)c->compared,
            (double)c->gap_sum_ns[r] / (double)c->last_count[r] / 1e3,
            (double)c->spread_sum_ns / (double)c->compared / 1e3, (double)c->spread_max_ns / 1e3);
    for (uint32_t k = 0; k < c->ntracked; k++) fprintf(out, "%s%llu", k ? "," : "", (unsigned long long)c->last_count[k]);
    fputs("]}", out);
    first = 0;
  }
  fputc(']', out);
}
