/* ncclscope CLI: who arrives last at each collective (see report_straggler.h).
 * Open collectives live in a pool of entries found through the id map
 * (src/util/idmap) by a 64-bit key of (commId, func, seq); the pool grows up
 * to NS_STRAG_MAX_OPEN entries. */
#include "report_straggler.h"

#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"

#define MAX_RANKS_TRACKED 65536u /* per-rank counters of larger communicators are not kept */

typedef struct {
  uint64_t key; /* 0: free */
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
  ns_idmap index;  /* key -> position + 1 in `open` */
  open_coll* open; /* pool; free entries have key 0 and are chained through `seen` */
  size_t cap, n;
  uint32_t free_head; /* position + 1 of a free entry, 0: none */
  comm_stats* comms;
  size_t ncomms, capcomms;
  uint64_t not_compared, dropped_full, other_host;
};

ns_strag* ns_strag_new(void) {
  ns_strag* s = calloc(1, sizeof *s);
  if (s) ns_idmap_init(&s->index);
  return s;
}

void ns_strag_free(ns_strag* s) {
  if (!s) return;
  for (size_t i = 0; i < s->ncomms; i++) {
    free(s->comms[i].last_count);
    free(s->comms[i].gap_sum_ns);
  }
  free(s->comms);
  free(s->open);
  ns_idmap_free(&s->index);
  free(s);
}

static uint64_t coll_key(uint64_t comm_id, int func, uint64_t seq) {
  uint64_t k = ns_idmap_mix(comm_id ^ ns_idmap_mix(seq ^ ((uint64_t)(uint32_t)func << 56)));
  return k ? k : 1;
}

/* A free pool entry, growing the pool up to NS_STRAG_MAX_OPEN; NULL when full. */
static open_coll* entry_new(ns_strag* s) {
  if (!s->free_head) {
    if (s->cap >= NS_STRAG_MAX_OPEN) return NULL;
    size_t nc = s->cap ? s->cap * 2 : 1024;
    open_coll* no = realloc(s->open, nc * sizeof *no);
    if (!no) return NULL;
    memset(no + s->cap, 0, (nc - s->cap) * sizeof *no);
    for (size_t i = nc; i-- > s->cap;) {
      no[i].seen = s->free_head;
      s->free_head = (uint32_t)i + 1;
    }
    s->open = no;
    s->cap = nc;
  }
  open_coll* o = &s->open[s->free_head - 1];
  s->free_head = o->seen;
  s->n++;
  return o;
}

static void entry_free(ns_strag* s, open_coll* o) {
  ns_idmap_del(&s->index, o->key);
  memset(o, 0, sizeof *o);
  o->seen = s->free_head;
  s->free_head = (uint32_t)(o - s->open) + 1;
  s->n--;
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
  uint64_t key = coll_key(op->comm_id, op->func, op->seq);
  uint64_t* at = ns_idmap_get(&s->index, key);
  open_coll* o = at ? &s->open[*at - 1] : NULL;
  if (o && !(o->comm_id == op->comm_id && o->func == op->func && o->seq == op->seq)) {
    s->dropped_full++; /* two collectives with one 64-bit key: this one is not compared */
    return;
  }
  uint64_t t = op->gpu_start_ns ? op->gpu_start_ns : op->start_ns; /* see the header: arrival */
  if (!o) {
    int inserted;
    o = entry_new(s);
    uint64_t* slot = o ? ns_idmap_put(&s->index, key, &inserted) : NULL;
    if (!slot) {
      if (o) entry_free(s, o);
      s->dropped_full++; /* full: only collectives already open are still matched */
      return;
    }
    *slot = (uint64_t)(o - s->open) + 1;
    *o = (open_coll){.key = key, .host = host, .func = op->func, .comm_id = op->comm_id, .seq = op->seq,
                     .nranks = op->nranks, .seen = 1, .last_rank = op->rank, .first_ts = t, .last_ts = t,
                     .second_ts = t};
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
    close_coll(s, o);
    entry_free(s, o);
  }
}

void ns_strag_finish(ns_strag* s) {
  for (size_t i = 0; i < s->cap; i++)
    if (s->open[i].key) {
      close_coll(s, &s->open[i]);
      entry_free(s, &s->open[i]);
    }
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
