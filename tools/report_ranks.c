/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the cross-rank view (report_ranks.h). Collectives of every
 * file and flight record go into a list per (communicator, rank); finish
 * sorts each list by (function, seq) and walks the collectives in that order,
 * each as its ranks' ops in rank order, by merging the lists (xr_cursor).
 *
 * Outliers (lateness): a rank is named when its median lateness is at least
 * NS_XR_LATE_FLOOR_NS and more than NS_XR_LATE_MADS robust deviations (1.4826
 * x the median absolute deviation of all ranks' medians) above the median
 * rank, over at least NS_XR_LATE_MIN_OPS collectives, and it arrived last
 * more often than chance (NS_XR_LAST_Z_MIN: with 8 ranks the deviation of
 * the medians is a poor scale, and one rank of a starved process stands out
 * by it alone); or, with the same
 * floor, when it arrived last at so many collectives that chance (each rank
 * last as often) is NS_XR_LAST_Z standard deviations away: on a loaded host
 * the ranks' medians scatter by milliseconds, and the deviation rule alone
 * misses a rank that is late at nearly every collective. The floor keeps the
 * launch jitter of a busy host (tens to a few hundred us) from naming anyone
 * when no rank is late. */
#include "report_ranks.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "report_clocks.h"
#include "util/idmap.h"

#define NS_XR_LATE_FLOOR_NS 200000.0
#define NS_XR_LATE_MADS 5.0
#define NS_XR_LATE_MIN_OPS 10
#define NS_XR_LAST_Z 8.0 /* ... or last at a collective far more often than chance (binomial z) */
#define NS_XR_LAST_Z_MIN 3.0 /* the deviation rule also wants a rank last more often than chance */
#define XR_FR_MAX_BYTES (256u << 20)
#define XR_GPU_SLACK_NS 1000000ull /* a GPU time this far outside its op's host times is not trusted */

/* xr_op.flags */
#define XR_DONE 0x1u     /* it completed */
#define XR_STUCK 0x2u    /* never finished: incomplete at the end of its trace, or in flight in a flight record */
#define XR_FR 0x4u       /* from a flight record */
#define XR_EPISODE 0x8u  /* a flight record's episode: in flight longer than the hang timeout */

/* One collective of one rank (its communicator and rank: the list it is in). 40 bytes. */
typedef struct {
  uint64_t seq;
  int64_t arr, end; /* trace ns of its host; 0: none */
  int32_t file;     /* index in files (trace or flight record) */
  float gpu_err_ns; /* arr/end are its GPU's times converted, within this bound (INFINITY: unbounded); 0: host times */
  int16_t func;
  uint16_t flags;
} xr_op;

/* An op of the file being read whose pTimers the final fit converts again (ns_xr_file_clock). */
typedef struct {
  uint32_t comm;       /* index in comms */
  int32_t rank;
  size_t op;           /* index in that rank's ops */
  uint32_t comm_serial; /* the file's communicator serial */
  uint64_t ptimer_start, ptimer_stop;
  uint64_t host_start, host_last, host_end; /* place() */
} xr_reconvert;

/* A rank whose ops the file being read added to (its list is trimmed to size at the file's end). */
typedef struct {
  uint32_t comm;
  int32_t rank;
} xr_touched;

typedef struct {
  char host[256];
  uint32_t pid;
  int host_idx;
  int clean_end;
  int is_fr;      /* a flight record, not a trace */
} xr_file;

typedef struct {
  xr_op* ops; /* its collectives from every file, sorted by (func, seq, trace before flight record) by finish */
  size_t nops, capops;
  int32_t touched_by; /* the last file that added to ops (xr_touched), -1 none */
  uint64_t n, last_count, gap_sum_ns;
  double* late;      /* each collective's lateness, ns (n of them once finished; room for nops) */
  float* late_bound; /* how far its arrival may be off: its GPU clock bound; 0 host time; INFINITY unbounded */
  double median_ns, p99_ns;
  int outlier;
  int32_t file;       /* a file of this rank (trace preferred), -1 none */
  int has_trace;      /* a trace with its COMM_INIT */
  int clean;          /* its record is complete: a trace with an END, or a flight record listing the comm */
  int16_t last_func;  /* the last collective it completed */
  uint64_t last_seq;
  int64_t last_end;
  int has_last;
  char waits_for[640]; /* its flight record's episode on the hang, if any */
  double bound_median_ns; /* the median of its arrivals' bounds (INFINITY: unbounded) */
  /* its GPU clock placed by the collectives' ends (refine_gpu_clocks) */
  double gpu_found_ns;  /* the correction the ends gave */
  double gpu_uncert_ns; /* its uncertainty */
  uint64_t gpu_samples; /* collectives it came from */
  uint64_t gpu_moved;   /* ops moved by it (those whose published bound allows it) */
} xr_rank;

typedef struct {
  uint64_t comm_id;
  uint32_t nranks;
  char name[64];
  xr_rank* ranks; /* nranks */
  uint64_t nops;  /* ops of all its ranks */
  /* crossRank */
  uint64_t compared, partial, spread_sum_ns, spread_max_ns;
  uint64_t ops_late; /* collectives with lateness (2+ arrivals) */
  /* the hang, if any */
  int hang;
  int16_t hang_func;
  uint64_t hang_seq;
  int64_t hang_arr;
  int hang_by_fr;
  double hang_waited;
  uint64_t hang_candidates;
  uint8_t* state; /* per rank: XR_S_* for the hang's collective */
  int64_t* posted; /* per rank: its arrival at the hang's collective (common ns), INT64_MIN none */
} xr_comm;

enum { XR_S_UNKNOWN = 0, XR_S_NEVER = 1, XR_S_STUCK = 2, XR_S_DONE = 3 };

typedef struct {
  uint32_t comm;
  int32_t rank;
  int16_t func;
  uint64_t seq;
  double waited;
  int cleared;
  uint32_t order; /* read before the episodes of a higher order */
  char waits_for[640];
} xr_episode;

struct ns_xr {
  xr_file* files;
  size_t nfiles, capfiles;
  ns_hosts* hosts;
  xr_comm* comms;
  size_t ncomms, capcomms;
  ns_idmap comm_index; /* comm_id -> index + 1 */
  xr_reconvert* reconv; /* of the file being read */
  size_t nreconv, capreconv;
  xr_touched* touched; /* of the file being read */
  size_t ntouched, captouched;
  xr_episode* eps; /* sorted by (comm, func, seq, rank) by finish */
  size_t neps, capeps;
  uint64_t fr_files, fr_bad, ops_no_comm;
  size_t nhangs;
};

static int grow(void** p, size_t* cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  void* np = realloc(*p, nc * size);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

ns_xr* ns_xr_new(void) {
  ns_xr* x = calloc(1, sizeof *x);
  if (!x) return NULL;
  ns_idmap_init(&x->comm_index);
  x->hosts = ns_hosts_new();
  if (!x->hosts) {
    free(x);
    return NULL;
  }
  return x;
}

void ns_xr_free(ns_xr* x) {
  if (!x) return;
  for (size_t i = 0; i < x->ncomms; i++) {
    for (uint32_t r = 0; r < x->comms[i].nranks; r++) {
      free(x->comms[i].ranks[r].ops);
      free(x->comms[i].ranks[r].late);
      free(x->comms[i].ranks[r].late_bound);
    }
    free(x->comms[i].ranks);
    free(x->comms[i].state);
    free(x->comms[i].posted);
  }
  free(x->comms);
  free(x->files);
  free(x->reconv);
  free(x->touched);
  free(x->eps);
  ns_hosts_free(x->hosts);
  ns_idmap_free(&x->comm_index);
  free(x);
}

static int add_file(ns_xr* x, const char* host, uint32_t pid, int is_fr) {
  if (grow((void**)&x->files, &x->capfiles, x->nfiles, sizeof *x->files)) return -1;
  xr_file* f = &x->files[x->nfiles];
  memset(f, 0, sizeof *f);
  snprintf(f->host, sizeof f->host, "%s", host);
  f->pid = pid;
  f->is_fr = is_fr;
  f->host_idx = ns_hosts_index(x->hosts, host);
  return (int)x->nfiles++;
}

int ns_xr_file(ns_xr* x, const ns_process_info* p) {
  int f = add_file(x, p ? p->hostname : "?", p ? p->pid : 0, 0);
  /* the PROCESS block is the first anchor: its start, in both clocks */
  if (f >= 0 && p) ns_xr_anchor(x, f, p->start_mono_ns, (int64_t)p->start_mono_ns + p->realtime_offset_ns);
  return f;
}

void ns_xr_file_end(ns_xr* x, int file, int clean_end) {
  if (file >= 0 && (size_t)file < x->nfiles) x->files[file].clean_end = clean_end;
}

void ns_xr_anchor(ns_xr* x, int file, uint64_t ts, int64_t real) {
  if (file >= 0 && (size_t)file < x->nfiles) ns_hosts_anchor(x->hosts, x->files[file].host_idx, ts, real);
}

/* The communicator with that id (made with nranks ranks); NULL when out of memory or nranks is 0. */
static xr_comm* comm_get(ns_xr* x, uint64_t comm_id, uint32_t nranks, uint32_t* idx) {
  uint64_t key = comm_id ? comm_id : 1;
  uint64_t* at = ns_idmap_get(&x->comm_index, key);
  if (at) {
    *idx = (uint32_t)(*at - 1);
    return &x->comms[*at - 1];
  }
  if (!nranks || nranks > (1u << 24)) return NULL;
  if (grow((void**)&x->comms, &x->capcomms, x->ncomms, sizeof *x->comms)) return NULL;
  xr_comm* c = &x->comms[x->ncomms];
  memset(c, 0, sizeof *c);
  c->ranks = calloc(nranks, sizeof *c->ranks);
  int inserted;
  uint64_t* slot = c->ranks ? ns_idmap_put(&x->comm_index, key, &inserted) : NULL;
  if (!slot) {
    free(c->ranks);
    return NULL;
  }
  for (uint32_t r = 0; r < nranks; r++) c->ranks[r].file = c->ranks[r].touched_by = -1;
  c->comm_id = comm_id;
  c->nranks = nranks;
  *slot = x->ncomms + 1;
  *idx = (uint32_t)x->ncomms++;
  return c;
}

void ns_xr_comm(ns_xr* x, int file, const ns_comm_info* ci) {
  uint32_t idx;
  xr_comm* c = comm_get(x, ci->comm_id, ci->nranks, &idx);
  if (!c || ci->rank < 0 || (uint32_t)ci->rank >= c->nranks) return;
  if (ci->has_name && !c->name[0]) snprintf(c->name, sizeof c->name, "%.63s", ci->comm_name);
  xr_rank* r = &c->ranks[ci->rank];
  r->file = file;
  r->has_trace = 1;
}

/* An op of rank `rank` of communicator `comm`; its index in the rank's ops, or -1 when out of memory. */
static ptrdiff_t add_op(ns_xr* x, uint32_t comm, int32_t rank, int32_t file, int func, uint64_t seq, uint16_t flags,
                        int64_t arr, int64_t end, float gpu_err_ns) {
  xr_comm* c = &x->comms[comm];
  xr_rank* r = &c->ranks[rank];
  if (r->touched_by != file) {
    if (grow((void**)&x->touched, &x->captouched, x->ntouched, sizeof *x->touched)) return -1;
    x->touched[x->ntouched++] = (xr_touched){.comm = comm, .rank = rank};
    r->touched_by = file;
  }
  if (grow((void**)&r->ops, &r->capops, r->nops, sizeof *r->ops)) return -1;
  r->ops[r->nops] = (xr_op){.seq = seq, .arr = arr, .end = end, .file = file, .gpu_err_ns = gpu_err_ns,
                            .func = (int16_t)func, .flags = flags};
  c->nops++;
  return (ptrdiff_t)r->nops++;
}

/* The end of a file: the lists it added to lose their spare room (a list doubles as it grows). */
static void trim_touched(ns_xr* x) {
  for (size_t i = 0; i < x->ntouched; i++) {
    xr_rank* r = &x->comms[x->touched[i].comm].ranks[x->touched[i].rank];
    if (r->capops > r->nops && r->nops) {
      xr_op* fit = realloc(r->ops, r->nops * sizeof *fit);
      if (fit) r->ops = fit, r->capops = r->nops;
    }
  }
  x->ntouched = 0;
}

/* An op's arrival and end: the GPU's times where they fall inside the
 * operation's host-side life, host_start to host_last (a GPU clock fit that
 * is not there yet can be off by seconds; then the host's own times are the
 * better guess: its start, and host_end). gpu_start 0: no GPU times. */
static void place(xr_op* o, uint64_t host_start, uint64_t host_last, uint64_t host_end, uint64_t gpu_start,
                  uint64_t gpu_stop, double gpu_err_ns) {
  int gpu_ok = gpu_start && gpu_start + XR_GPU_SLACK_NS >= host_start &&
               (!host_last || gpu_start <= host_last + XR_GPU_SLACK_NS) &&
               (!gpu_stop || !host_last || gpu_stop <= host_last + XR_GPU_SLACK_NS);
  o->arr = (int64_t)(gpu_ok ? gpu_start : host_start);
  o->end = (int64_t)(gpu_ok && gpu_stop ? gpu_stop : host_end);
  /* a bound of 0 is still a GPU time (0 marks host times): the timer quantum at least */
  o->gpu_err_ns = !gpu_ok ? 0.0f : isfinite(gpu_err_ns) ? (float)gpu_err_ns + 1.0f : INFINITY;
}

void ns_xr_op(ns_xr* x, int file, const ns_op_result* op) {
  if (op->type != NS_EV_COLL || (op->flags & NS_OPF_NO_START)) return;
  uint32_t idx;
  xr_comm* c = comm_get(x, op->comm_id, op->nranks, &idx);
  if (!c || op->rank < 0 || (uint32_t)op->rank >= c->nranks) {
    x->ops_no_comm++;
    return;
  }
  uint64_t host_last = op->exec_stop_ns > op->stop_ns ? op->exec_stop_ns : op->stop_ns;
  uint64_t host_end = op->exec_stop_ns ? op->exec_stop_ns : op->stop_ns;
  xr_op placed;
  place(&placed, op->start_ns, host_last, host_end, op->gpu_start_ns, op->gpu_stop_ns, op->gpu_err_ns);
  ptrdiff_t at = add_op(x, idx, op->rank, file, op->func, op->seq, (op->flags & NS_OPF_INCOMPLETE) ? XR_STUCK : XR_DONE,
                        placed.arr, placed.end, placed.gpu_err_ns);
  if (at < 0) return;
  /* converted with the fit as it stood when the op completed: once the file is read, again with the final one */
  if (op->ptimer_start && !grow((void**)&x->reconv, &x->capreconv, x->nreconv, sizeof *x->reconv))
    x->reconv[x->nreconv++] = (xr_reconvert){.comm = idx, .rank = op->rank, .op = (size_t)at, .comm_serial = op->comm,
                                             .ptimer_start = op->ptimer_start, .ptimer_stop = op->ptimer_stop,
                                             .host_start = op->start_ns, .host_last = host_last, .host_end = host_end};
}

void ns_xr_file_clock(ns_xr* x, ns_analysis* a) {
  for (size_t i = 0; a && i < x->nreconv; i++) {
    const xr_reconvert* c = &x->reconv[i];
    uint64_t t0, t1;
    double e0, e1;
    if (!ns_analysis_gpu_to_cpu(a, c->comm_serial, c->ptimer_start, &t0, &e0) ||
        !ns_analysis_gpu_to_cpu(a, c->comm_serial, c->ptimer_stop, &t1, &e1))
      continue;
    place(&x->comms[c->comm].ranks[c->rank].ops[c->op], c->host_start, c->host_last, c->host_end, t0, t1,
          e0 > e1 ? e0 : e1);
  }
  x->nreconv = 0;
  trim_touched(x);
}

/* ---- flight records ---- */

static uint64_t hex_id(const char* s) { return s ? strtoull(s, NULL, 16) : 0; }

int ns_xr_flightrec(ns_xr* x, const char* path, char* err, size_t errlen) {
  nsjr_doc* d = nsjr_parse_file(path, XR_FR_MAX_BYTES, err, errlen);
  const nsjr_val* root = nsjr_root(d);
  if (!d || strcmp(nsjr_kstr(root, "format", ""), "ncclscope-flightrec") != 0) {
    if (d) snprintf(err, errlen, "%s: not an ncclscope flight record", path);
    nsjr_free(d);
    x->fr_bad++;
    return -1;
  }
  int file = add_file(x, nsjr_kstr(root, "host", "?"), (uint32_t)nsjr_ku64(root, "pid", 0), 1);
  if (file < 0) {
    nsjr_free(d);
    return -1;
  }
  x->fr_files++;
  /* its own anchor: when it was written, in both clocks */
  uint64_t now = nsjr_ku64(root, "nowNs", 0);
  if (now) ns_xr_anchor(x, file, now, (int64_t)now + nsjr_ki64(root, "realtimeOffsetNs", 0));
  const nsjr_val* comms = nsjr_get(root, "communicators");
  for (const nsjr_val* cv = comms ? comms->first : NULL; cv; cv = cv->next) {
    uint32_t idx;
    int32_t rank = (int32_t)nsjr_ki64(cv, "rank", -1);
    xr_comm* c = comm_get(x, hex_id(nsjr_kstr(cv, "commId", NULL)), (uint32_t)nsjr_ku64(cv, "nranks", 0), &idx);
    if (!c || rank < 0 || (uint32_t)rank >= c->nranks) continue;
    const char* name = nsjr_kstr(cv, "name", "");
    if (*name && !c->name[0]) snprintf(c->name, sizeof c->name, "%.63s", name);
    xr_rank* r = &c->ranks[rank];
    if (r->file < 0) r->file = file;
    r->clean = 1; /* its flight record lists the communicator: what it posted until then is known */
    const nsjr_val* ops = nsjr_get(cv, "ops");
    for (const nsjr_val* o = ops ? ops->first : NULL; o; o = o->next) {
      if (strcmp(nsjr_kstr(o, "type", ""), "Coll") != 0) continue;
      const char* st = nsjr_kstr(o, "state", "");
      if (!strcmp(st, "unstarted")) continue;
      uint64_t gpu = nsjr_ku64(o, "gpuNs", 0);
      add_op(x, idx, rank, file, ns_func_code(nsjr_kstr(o, "func", "")), nsjr_ku64(o, "seq", 0),
             XR_FR | (!strcmp(st, "done") ? XR_DONE : XR_STUCK), (int64_t)(gpu ? gpu : nsjr_ku64(o, "startNs", 0)),
             (int64_t)nsjr_ku64(o, "doneNs", 0), 0.0f);
    }
  }
  const nsjr_val* eps = nsjr_get(root, "episodes");
  for (const nsjr_val* e = eps ? eps->first : NULL; e; e = e->next) {
    uint32_t idx;
    xr_comm* c = comm_get(x, hex_id(nsjr_kstr(e, "commId", NULL)), (uint32_t)nsjr_ku64(e, "nranks", 0), &idx);
    int32_t rank = (int32_t)nsjr_ki64(e, "rank", -1);
    if (!c || rank < 0 || (uint32_t)rank >= c->nranks || strcmp(nsjr_kstr(e, "type", ""), "Coll") != 0) continue;
    if (nsjr_bool(nsjr_get(e, "cleared"), 0)) continue; /* it completed before the record was written */
    if (grow((void**)&x->eps, &x->capeps, x->neps, sizeof *x->eps)) break;
    xr_episode* ep = &x->eps[x->neps++];
    memset(ep, 0, sizeof *ep);
    ep->comm = idx;
    ep->rank = rank;
    ep->order = (uint32_t)(x->neps - 1);
    ep->func = (int16_t)ns_func_code(nsjr_kstr(e, "func", ""));
    ep->seq = nsjr_ku64(e, "seq", 0);
    ep->waited = nsjr_knum(e, "waitedSec", 0);
    ep->cleared = nsjr_bool(nsjr_get(e, "cleared"), 0);
    snprintf(ep->waits_for, sizeof ep->waits_for, "%s", nsjr_kstr(e, "waitsFor", ""));
    add_op(x, idx, rank, file, ep->func, ep->seq, XR_FR | XR_EPISODE | XR_STUCK,
           (int64_t)nsjr_ku64(e, "startNs", 0), 0, 0.0f);
  }
  trim_touched(x);
  nsjr_free(d);
  return 0;
}

/* ---- finish ----
 *
 * Each rank's ops are sorted by (func, seq), a trace's record before a flight
 * record's; a collective is then the ranks' ops of one (func, seq), taken in
 * rank order by a cursor that walks every rank's list at once (a merge). */

static size_t walk_collectives(void* src, ns_hc_visit fn, void* user);

/* Whether p comes before q in a rank's list. */
static int op_before(const xr_op* p, const xr_op* q) {
  if (p->func != q->func) return p->func < q->func;
  if (p->seq != q->seq) return p->seq < q->seq;
  return (p->flags & XR_FR) < (q->flags & XR_FR);
}

/* Sorts v[0, n) stably (ops of one key keep the order they came in); tmp has room for n. Most lists come in order. */
static void sort_ops(xr_op* v, size_t n, xr_op* tmp) {
  size_t i = 1;
  while (i < n && !op_before(&v[i], &v[i - 1])) i++;
  if (i >= n) return;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = op_before(&v[b], &v[a]) ? v[b++] : v[a++];
      while (a < mid) tmp[k++] = v[a++];
      while (b < hi) tmp[k++] = v[b++];
    }
    memcpy(v, tmp, n * sizeof *v);
  }
}

static int by_episode(const void* a, const void* b) {
  const xr_episode *p = a, *q = b;
  if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
  if (p->func != q->func) return p->func < q->func ? -1 : 1;
  if (p->seq != q->seq) return p->seq < q->seq ? -1 : 1;
  if (p->rank != q->rank) return p->rank < q->rank ? -1 : 1;
  return p->order < q->order ? -1 : p->order > q->order; /* the order they were read in */
}

/* Every rank's ops and the episodes in order; 0, or -1 when out of memory. */
static int sort_all(ns_xr* x) {
  size_t most = 0;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++)
      if (x->comms[i].ranks[r].nops > most) most = x->comms[i].ranks[r].nops;
  xr_op* tmp = malloc((most ? most : 1) * sizeof *tmp);
  if (!tmp) return -1;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++) {
      xr_rank* rk = &x->comms[i].ranks[r];
      sort_ops(rk->ops, rk->nops, tmp);
    }
  free(tmp);
  if (x->neps) qsort(x->eps, x->neps, sizeof *x->eps, by_episode);
  return 0;
}

/* The episodes of collective (func, seq) of communicator comm: [*lo, *hi) of eps. */
static void episodes_of(const ns_xr* x, uint32_t comm, int16_t func, uint64_t seq, size_t* lo, size_t* hi) {
  size_t a = 0, b = x->neps;
  while (a < b) {
    size_t m = (a + b) / 2;
    const xr_episode* e = &x->eps[m];
    if (e->comm < comm || (e->comm == comm && (e->func < func || (e->func == func && e->seq < seq))))
      a = m + 1;
    else
      b = m;
  }
  *lo = a;
  while (a < x->neps && x->eps[a].comm == comm && x->eps[a].func == func && x->eps[a].seq == seq) a++;
  *hi = a;
}

/* The first of eps[lo, hi) (one collective's, by rank) of rank r or a higher one. */
static size_t episode_of_rank(const ns_xr* x, size_t lo, size_t hi, int32_t r) {
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (x->eps[m].rank < r)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* One op of a collective. */
typedef struct {
  int32_t rank;
  xr_op* op;
} xr_member;

/* The collectives of one communicator in (func, seq) order, each as its ops in rank order. */
typedef struct {
  xr_comm* c;
  xr_op** ops;    /* per rank: its ops (the ranks' own records are large: kept out of the walk) */
  size_t* nops;   /* per rank: how many */
  size_t* at;     /* per rank: its next op */
  uint32_t* live; /* the ranks with ops left, in rank order */
  size_t nlive;
  int16_t func;   /* the next collective's key */
  uint64_t seq;
  xr_member* m; /* the collective: nm ops */
  size_t nm, capm;
} xr_cursor;

#define XR_PREFETCH 16 /* ranks ahead */

static int key_less(int16_t f, uint64_t s, int16_t g, uint64_t t) { return f != g ? f < g : s < t; }

static void cursor_free(xr_cursor* k) {
  free(k->ops);
  free(k->nops);
  free(k->at);
  free(k->live);
  free(k->m);
}

/* 0, or -1 when out of memory. */
static int cursor_init(xr_cursor* k, xr_comm* c) {
  memset(k, 0, sizeof *k);
  k->c = c;
  size_t n = c->nranks ? c->nranks : 1;
  k->ops = malloc(n * sizeof *k->ops);
  k->nops = malloc(n * sizeof *k->nops);
  k->at = calloc(n, sizeof *k->at);
  k->live = malloc(n * sizeof *k->live);
  if (!k->ops || !k->nops || !k->at || !k->live) {
    cursor_free(k);
    return -1;
  }
  for (uint32_t r = 0; r < c->nranks; r++) {
    const xr_rank* rk = &c->ranks[r];
    k->ops[r] = rk->ops;
    k->nops[r] = rk->nops;
    if (!rk->nops) continue;
    if (!k->nlive || key_less(rk->ops[0].func, rk->ops[0].seq, k->func, k->seq))
      k->func = rk->ops[0].func, k->seq = rk->ops[0].seq;
    k->live[k->nlive++] = r;
  }
  return 0;
}

/* The next collective into k->m; 0 when there is none (or out of memory). One pass over the live ranks
 * takes the collective's ops and finds the next key. */
static int cursor_next(xr_cursor* k) {
  if (!k->nlive) return 0;
  int16_t f = k->func, nf = 0;
  uint64_t s = k->seq, ns = 0;
  size_t kept = 0;
  int have_next = 0;
  k->nm = 0;
  for (size_t i = 0; i < k->nlive; i++) {
    if (i + XR_PREFETCH < k->nlive) { /* each rank's next op is a cache miss of its own: ask for it early */
      uint32_t ahead = k->live[i + XR_PREFETCH];
      __builtin_prefetch(&k->ops[ahead][k->at[ahead]]);
    }
    uint32_t r = k->live[i];
    xr_op* ops = k->ops[r];
    size_t a = k->at[r], end = k->nops[r];
    while (a < end && ops[a].func == f && ops[a].seq == s) {
      if (grow((void**)&k->m, &k->capm, k->nm, sizeof *k->m)) return 0;
      k->m[k->nm++] = (xr_member){.rank = (int32_t)r, .op = &ops[a]};
      a++;
    }
    k->at[r] = a;
    if (a == end) continue;
    if (!have_next || key_less(ops[a].func, ops[a].seq, nf, ns)) nf = ops[a].func, ns = ops[a].seq;
    have_next = 1;
    k->live[kept++] = r;
  }
  k->nlive = kept;
  k->func = nf;
  k->seq = ns;
  return k->nm > 0;
}

static int by_double(const void* a, const void* b) {
  double p = *(const double*)a, q = *(const double*)b;
  return p < q ? -1 : p > q;
}

static int64_t common(const ns_xr* x, const xr_op* o, int64_t ts) {
  return ts ? ns_hosts_common(x->hosts, x->files[o->file].host_idx, ts) : 0;
}

static void push_late(xr_rank* r, double v, double bound) {
  if (!r->late) {
    r->late = malloc((r->nops ? r->nops : 1) * sizeof *r->late);
    r->late_bound = malloc((r->nops ? r->nops : 1) * sizeof *r->late_bound);
    if (!r->late || !r->late_bound) {
      free(r->late);
      free(r->late_bound);
      r->late = NULL;
      r->late_bound = NULL;
      return;
    }
  }
  if (r->n >= r->nops) return; /* one per collective it posted: never */
  r->late[r->n] = v;
  r->late_bound[r->n++] = (float)bound;
}

/* Whether rank r of c posted anything of func after seq (its ops are in
 * order: the last one of func has the largest seq). */
static int posted_later(const xr_comm* c, int16_t func, uint64_t seq, int32_t r) {
  const xr_rank* rk = &c->ranks[r];
  size_t a = 0, b = rk->nops;
  while (a < b) { /* the first op of a later func */
    size_t m = (a + b) / 2;
    if (rk->ops[m].func <= func)
      a = m + 1;
    else
      b = m;
  }
  return a > 0 && rk->ops[a - 1].func == func && rk->ops[a - 1].seq > seq;
}

/* One collective of communicator c (index ci): its ops m[0, nm), by rank.
 * Scratch: t and late have room for 2 x nranks, who, bnd and seen for nranks;
 * seen is all 0 before and after. */
static void one_collective(ns_xr* x, xr_comm* c, uint32_t ci, const xr_member* m, size_t nm, int64_t* t,
                           double* late, int32_t* who, double* bnd, uint8_t* seen) {
  size_t n = 0, episodes = 0;
  double waited = 0;
  int16_t func = m[0].op->func;
  uint64_t seq = m[0].op->seq;
  size_t elo, ehi;
  episodes_of(x, ci, func, seq, &elo, &ehi);
  /* seen per rank: 1 posted (a START), 2 never finished, 4 stuck past the hang timeout (an episode) */
  for (size_t i = 0; i < nm; i++) {
    const xr_op* p = m[i].op;
    int32_t r = m[i].rank;
    uint8_t was = seen[r];
    seen[r] |= (uint8_t)(1 | (p->flags & XR_STUCK ? 2 : 0) | (p->flags & XR_EPISODE ? 4 : 0) |
                         ((p->flags & (XR_DONE | XR_FR)) == (XR_DONE | XR_FR) ? 16 : 0));
    if (p->flags & XR_EPISODE) continue;
    /* one arrival per rank: its trace's (sorted first), not a flight record's or a replay's */
    if ((was & 1) || !p->arr || n >= c->nranks) continue;
    who[n] = r;
    bnd[n] = p->gpu_err_ns;
    t[n++] = common(x, p, p->arr);
  }
  /* a rank whose flight record says it completed it was not stuck (an episode the record's writer did not
   * mark cleared); a trace's end of it does not say so: a rank that gave up ends it too */
  for (size_t i = 0; i < nm; i++)
    if (seen[m[i].rank] & 16) seen[m[i].rank] &= (uint8_t)~6u;
  size_t posted = 0;
  for (size_t i = 0; i < nm; i++) {
    int32_t r = m[i].rank;
    if (seen[r] & 8) continue; /* 8: counted */
    seen[r] |= 8;
    posted++;
    if (!(seen[r] & 4)) continue;
    episodes++;
    for (size_t e = episode_of_rank(x, elo, ehi, r); e < ehi && x->eps[e].rank == r; e++)
      if (x->eps[e].waited > waited) waited = x->eps[e].waited;
  }
  for (size_t i = 0; i < nm; i++) seen[m[i].rank] &= 7;
  /* the last collective each rank completed (not one it was stuck in) */
  for (size_t i = 0; i < nm; i++) {
    const xr_op* p = m[i].op;
    if (!(p->flags & XR_DONE) || (seen[m[i].rank] & 6)) continue;
    xr_rank* r = &c->ranks[m[i].rank];
    int64_t e = common(x, p, p->end ? p->end : p->arr);
    if (!r->has_last || e > r->last_end) r->has_last = 1, r->last_end = e, r->last_func = p->func, r->last_seq = p->seq;
  }
  /* crossRank and lateness: the collectives seen with 2+ arrivals */
  if (n >= 2) {
    size_t last = 0, first = 0;
    for (size_t k = 1; k < n; k++) {
      if (t[k] >= t[last]) last = k;
      if (t[k] < t[first]) first = k;
    }
    int64_t second = INT64_MIN;
    for (size_t k = 0; k < n; k++)
      if (k != last && t[k] > second) second = t[k];
    c->compared++;
    if (n < c->nranks) c->partial++;
    uint64_t spread = (uint64_t)(t[last] - t[first]);
    c->spread_sum_ns += spread;
    if (spread > c->spread_max_ns) c->spread_max_ns = spread;
    c->ranks[who[last]].last_count++;
    c->ranks[who[last]].gap_sum_ns += (uint64_t)(t[last] - second);
    for (size_t k = 0; k < n; k++) late[k] = (double)(t[k] - t[first]); /* small: exact in a double */
    memcpy(late + n, late, n * sizeof *late);
    qsort(late + n, n, sizeof *late, by_double);
    double med = n % 2 ? late[n + n / 2] : (late[n + n / 2 - 1] + late[n + n / 2]) / 2;
    for (size_t k = 0; k < n; k++) push_late(&c->ranks[who[k]], late[k] - med, bnd[k]);
    c->ops_late++;
  }
  /* a hang? a rank of a complete record that posted neither this nor anything later of its function */
  int never = 0;
  if (posted && posted < c->nranks)
    for (uint32_t r = 0; r < c->nranks; r++)
      if (!seen[r] && c->ranks[r].clean && !posted_later(c, func, seq, (int32_t)r)) never++;
  int64_t when = INT64_MAX;
  for (size_t k = 0; k < n; k++)
    if (t[k] < when) when = t[k];
  if (episodes || never) c->hang_candidates++;
  /* the earliest one is the hang; later ones follow from it */
  if ((episodes || never) && !(c->hang && when >= c->hang_arr)) {
    c->hang = 1;
    c->hang_func = func;
    c->hang_seq = seq;
    c->hang_arr = when;
    c->hang_by_fr = episodes > 0;
    c->hang_waited = waited;
    if (!c->posted) c->posted = malloc(c->nranks * sizeof *c->posted);
    if (c->posted) {
      for (uint32_t r = 0; r < c->nranks; r++) c->posted[r] = INT64_MIN;
      for (size_t k = 0; k < n; k++) c->posted[who[k]] = t[k];
    }
    for (uint32_t r = 0; r < c->nranks; r++) {
      xr_rank* rk = &c->ranks[r];
      uint8_t sr = seen[r]; /* 0 for a rank with no op in it */
      if (sr & 6) c->state[r] = XR_S_STUCK;
      else if (sr & 1) c->state[r] = XR_S_DONE;
      else if (rk->clean) c->state[r] = XR_S_NEVER;
      else c->state[r] = XR_S_UNKNOWN;
      rk->waits_for[0] = 0;
    }
    for (size_t e = elo; e < ehi; e++)
      snprintf(c->ranks[x->eps[e].rank].waits_for, sizeof c->ranks[x->eps[e].rank].waits_for, "%s",
               x->eps[e].waits_for);
  }
  for (size_t i = 0; i < nm; i++) seen[m[i].rank] = 0;
}

static double sorted_median(const double* v, size_t n) { return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

/* Per rank: median and p99 lateness, the median bound of its arrivals; the outliers. */
static void stats_of(xr_comm* c) {
  double* m = calloc(c->nranks ? c->nranks : 1, sizeof *m);
  size_t nm = 0, most = 0;
  for (uint32_t r = 0; r < c->nranks; r++)
    if (c->ranks[r].n > most) most = c->ranks[r].n;
  double* v = malloc((most ? most : 1) * sizeof *v);
  for (uint32_t r = 0; r < c->nranks && v; r++) {
    xr_rank* rk = &c->ranks[r];
    if (!rk->n) continue;
    for (size_t i = 0; i < rk->n; i++) v[i] = rk->late_bound[i];
    qsort(v, rk->n, sizeof *v, by_double); /* INFINITY sorts last */
    rk->bound_median_ns = sorted_median(v, rk->n);
    for (size_t i = 0; i < rk->n; i++) v[i] = rk->late[i];
    qsort(v, rk->n, sizeof *v, by_double);
    rk->median_ns = sorted_median(v, rk->n);
    size_t k = (size_t)(0.99 * (double)rk->n);
    rk->p99_ns = v[k < rk->n ? k : rk->n - 1];
    if (m) m[nm++] = rk->median_ns;
  }
  free(v);
  if (!m || nm < 3) {
    free(m);
    return;
  }
  qsort(m, nm, sizeof *m, by_double);
  double mid = m[nm / 2];
  for (size_t i = 0; i < nm; i++) m[i] = fabs(m[i] - mid);
  qsort(m, nm, sizeof *m, by_double);
  double sigma = 1.4826 * m[nm / 2];
  free(m);
  for (uint32_t r = 0; r < c->nranks; r++) {
    xr_rank* rk = &c->ranks[r];
    double over = rk->median_ns - mid;
    /* how unlikely its share of being last is if every rank were last as often (binomial, p = 1/ranks seen) */
    double p = 1.0 / (double)nm, np = (double)c->compared * p;
    double z = np > 0 ? ((double)rk->last_count - np) / sqrt(np * (1 - p)) : 0;
    rk->outlier = rk->n >= NS_XR_LATE_MIN_OPS && over >= NS_XR_LATE_FLOOR_NS &&
                  ((over > NS_XR_LATE_MADS * sigma && z >= NS_XR_LAST_Z_MIN) || z >= NS_XR_LAST_Z);
  }
}

/* ---- each rank's GPU clock, placed by the collectives' ends ----
 *
 * A GPU whose kernels never start promptly after their launch (a GPU-side
 * straggler) has a clock fit as wide as its delay: the launch calls say
 * little about when its kernels began, so its converted times sit anywhere
 * in a bound of milliseconds and its lateness reads a fraction of the truth.
 * The ranks of a collective finish together (each waits for the last one's
 * data), so per rank the median over the collectives of (its GPU end - the
 * collective's median end) is how far its converted GPU times are off. The
 * correction is applied to the ops whose published bound allows it
 * (|correction| <= bound: the truth lies inside the bound, so a larger one
 * means the ends did not agree), when it rests on XR_GPU_MIN_COLLS
 * collectives whose ends agree within XR_GPU_TIGHT_NS (MAD) and exceeds
 * XR_GPU_SIGNIFICANT times its uncertainty. Host times are never moved. */
#define XR_GPU_MIN_COLLS 10
#define XR_GPU_TIGHT_NS 50000.0
#define XR_GPU_SIGNIFICANT 3.0

/* A collective with 3+ ends: where its ends are measured from, and their median. */
typedef struct {
  int16_t func;
  uint64_t seq;
  int64_t base; /* the first end (common ns) */
  double mid;   /* the median of (end - base) */
} xr_coll_end;

/* Whether m[i] is an op the ends are taken from: its rank's first in the
 * collective (a trace's), if it completed with an end. */
static int end_member(const xr_member* m, size_t i) {
  const xr_op* p = m[i].op;
  if ((p->flags & XR_FR) || !(p->flags & XR_DONE) || !p->end) return 0;
  return !(i > 0 && m[i - 1].rank == m[i].rank);
}

/* One communicator: per collective the median end; then per rank with GPU ends, its offset from those medians
 * (the median over its collectives), and the correction where it holds. 0, or -1 when out of memory. */
static int refine_comm_gpus(ns_xr* x, xr_comm* c) {
  xr_cursor k;
  if (cursor_init(&k, c)) return -1;
  xr_coll_end* ends = NULL;
  size_t nends = 0, capends = 0, capval = 0;
  double* val = NULL;
  int rc = 0;
  while (cursor_next(&k)) {
    if (2 * k.nm > capval) {
      free(val);
      capval = 2 * k.nm;
      if (!(val = malloc(capval * sizeof *val))) goto fail;
    }
    size_t n = 0;
    int64_t base = 0;
    for (size_t i = 0; i < k.nm; i++) {
      if (!end_member(k.m, i)) continue;
      int64_t e = common(x, k.m[i].op, k.m[i].op->end);
      if (!n) base = e;
      val[n++] = (double)(e - base); /* small: exact in a double */
    }
    if (n < 3) continue;
    memcpy(val + n, val, n * sizeof *val);
    qsort(val + n, n, sizeof *val, by_double);
    if (grow((void**)&ends, &capends, nends, sizeof *ends)) goto fail;
    ends[nends++] = (xr_coll_end){.func = k.m[0].op->func, .seq = k.m[0].op->seq, .base = base,
                                  .mid = sorted_median(val + n, n)};
  }
  for (uint32_t r = 0; r < c->nranks && nends; r++) {
    xr_rank* rk = &c->ranks[r];
    if (2 * rk->nops > capval) {
      free(val);
      capval = 2 * rk->nops;
      if (!(val = malloc(capval * sizeof *val))) goto fail;
    }
    size_t n = 0, e = 0;
    for (size_t i = 0; i < rk->nops; i++) {
      const xr_op* p = &rk->ops[i];
      if (i > 0 && rk->ops[i - 1].func == p->func && rk->ops[i - 1].seq == p->seq) continue; /* one per collective */
      if ((p->flags & XR_FR) || !(p->flags & XR_DONE) || !p->end || !(p->gpu_err_ns > 0)) continue;
      while (e < nends && key_less(ends[e].func, ends[e].seq, p->func, p->seq)) e++;
      if (e == nends) break;
      if (ends[e].func != p->func || ends[e].seq != p->seq) continue;
      val[n++] = (double)(common(x, p, p->end) - ends[e].base) - ends[e].mid;
    }
    if (!n) continue;
    qsort(val, n, sizeof *val, by_double);
    double med = sorted_median(val, n);
    for (size_t m = 0; m < n; m++) val[n + m] = fabs(val[m] - med);
    qsort(val + n, n, sizeof *val, by_double);
    double mad = sorted_median(val + n, n);
    rk->gpu_found_ns = -med;
    rk->gpu_samples = n;
    rk->gpu_uncert_ns = 1.2533 * 1.4826 * mad / sqrt((double)n);
    if (n >= XR_GPU_MIN_COLLS && mad <= XR_GPU_TIGHT_NS && fabs(med) > XR_GPU_SIGNIFICANT * rk->gpu_uncert_ns) {
      int64_t corr = (int64_t)llround(-med);
      for (size_t i = 0; i < rk->nops; i++) {
        xr_op* p = &rk->ops[i];
        if (!(p->gpu_err_ns > 0) || fabs(med) > p->gpu_err_ns) continue;
        if (p->arr) p->arr += corr;
        if (p->end) p->end += corr;
        rk->gpu_moved++;
      }
    }
  }
  goto out;
fail:
  rc = -1;
out:
  free(val);
  free(ends);
  cursor_free(&k);
  return rc;
}

static void refine_gpu_clocks(ns_xr* x) {
  for (size_t i = 0; i < x->ncomms; i++)
    if (x->comms[i].nops && refine_comm_gpus(x, &x->comms[i])) return;
}

void ns_xr_finish(ns_xr* x) {
  ns_hosts_fit(x->hosts);
  if (sort_all(x)) return;
  ns_hosts_refine(x->hosts, walk_collectives, x);
  refine_gpu_clocks(x);
  size_t max_ranks = 1;
  for (size_t i = 0; i < x->ncomms; i++)
    if (x->comms[i].nranks > max_ranks) max_ranks = x->comms[i].nranks;
  int64_t* t = malloc(max_ranks * sizeof *t);
  double* late = malloc(2 * max_ranks * sizeof *late);
  int32_t* who = malloc(max_ranks * sizeof *who);
  double* bnd = malloc(max_ranks * sizeof *bnd);
  uint8_t* seen = calloc(max_ranks, 1);
  if (!t || !late || !who || !bnd || !seen) goto out;
  for (size_t i = 0; i < x->ncomms; i++)
    for (uint32_t r = 0; r < x->comms[i].nranks; r++) {
      xr_rank* rk = &x->comms[i].ranks[r];
      if (rk->has_trace && rk->file >= 0 && x->files[rk->file].clean_end) rk->clean = 1;
    }
  for (size_t i = 0; i < x->ncomms; i++) {
    xr_comm* c = &x->comms[i];
    xr_cursor k;
    if (!c->nops || cursor_init(&k, c)) continue;
    if (!c->state) c->state = calloc(c->nranks, 1);
    while (c->state && cursor_next(&k)) one_collective(x, c, (uint32_t)i, k.m, k.nm, t, late, who, bnd, seen);
    cursor_free(&k);
  }
  for (size_t i = 0; i < x->ncomms; i++) {
    stats_of(&x->comms[i]);
    x->nhangs += x->comms[i].hang;
  }
out:
  free(t);
  free(late);
  free(who);
  free(bnd);
  free(seen);
}

size_t ns_xr_hangs(const ns_xr* x) { return x->nhangs; }

/* ---- what the clock refinement needs: each collective's ranks that completed it ---- */

static size_t walk_collectives(void* src, ns_hc_visit fn, void* user) {
  ns_xr* x = src;
  size_t used = 0, cap = 0;
  ns_hc_member* m = NULL;
  for (size_t ci = 0; ci < x->ncomms; ci++) {
    xr_cursor k;
    if (!x->comms[ci].nops || cursor_init(&k, &x->comms[ci])) continue;
    while (cursor_next(&k)) {
      if (k.nm > cap) {
        ns_hc_member* nm = realloc(m, k.nm * sizeof *nm);
        if (!nm) break;
        m = nm;
        cap = k.nm;
      }
      size_t n = 0;
      for (size_t i = 0; i < k.nm; i++) {
        const xr_op* p = k.m[i].op;
        if ((p->flags & XR_FR) || !(p->flags & XR_DONE) || !p->arr || !p->end) continue;
        if (i > 0 && k.m[i - 1].rank == k.m[i].rank) continue; /* one per rank */
        m[n++] = (ns_hc_member){.host = x->files[p->file].host_idx, .arr = p->arr, .end = p->end};
      }
      if (n >= 2) used += fn(user, m, n) ? 1 : 0;
    }
    cursor_free(&k);
  }
  free(m);
  return used;
}

/* ---- output ---- */

static const char* func_name(int16_t f) { return ns_func_name(f); }

static void rank_where(const ns_xr* x, const xr_rank* r, char* buf, size_t len) {
  if (r->file < 0) snprintf(buf, len, "?");
  else snprintf(buf, len, "%.200s:%u", x->files[r->file].host, x->files[r->file].pid);
}

/* "0-6,9" for the ranks of c in state st. */
static void rank_list(const xr_comm* c, int st, char* buf, size_t len) {
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

static void text_hangs(const ns_xr* x, FILE* out) {
  fprintf(out, "\n# hangs: collectives some ranks never posted or never finished (flight records and traces)\n");
  if (x->fr_files || x->fr_bad)
    fprintf(out, "#   %" PRIu64 " flight record(s) read%s\n", x->fr_files, x->fr_bad ? ", some unreadable (skipped)" : "");
  if (!x->nhangs) {
    fprintf(out, "  none\n");
    return;
  }
  for (size_t i = 0; i < x->ncomms; i++) {
    const xr_comm* c = &x->comms[i];
    if (!c->hang) continue;
    char lst[1024];
    fprintf(out, "  communicator 0x%016" PRIx64 "%s%s%s, %u ranks: %s seq %" PRIu64 "%s\n", c->comm_id,
            c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", c->nranks, func_name(c->hang_func), c->hang_seq,
            c->hang_by_fr ? "" : " (from the traces: no flight record saw it stuck)");
    rank_list(c, XR_S_NEVER, lst, sizeof lst);
    fprintf(out, "    never posted it:    %s\n", lst);
    rank_list(c, XR_S_STUCK, lst, sizeof lst);
    fprintf(out, "    stuck in it:        %s", lst);
    if (c->hang_waited > 0) fprintf(out, " (in flight %.1f s when a flight record was written)", c->hang_waited);
    rank_list(c, XR_S_DONE, lst, sizeof lst);
    fprintf(out, "\n    finished it:        %s\n", lst);
    rank_list(c, XR_S_UNKNOWN, lst, sizeof lst);
    if (strcmp(lst, "none")) fprintf(out, "    no record of:       %s\n", lst);
    int shown = 0;
    for (uint32_t r = 0; r < c->nranks && shown < 64; r++) {
      const xr_rank* rk = &c->ranks[r];
      if (c->state[r] == XR_S_DONE && c->nranks > 16) continue;
      char where[300], lastop[64] = "none";
      rank_where(x, rk, where, sizeof where);
      if (rk->has_last) snprintf(lastop, sizeof lastop, "%s seq %" PRIu64, func_name(rk->last_func), rk->last_seq);
      static const char* const names[] = {"no record", "never posted", "stuck", "finished"};
      fprintf(out, "    rank %-5u %-28s %-12s last completed: %-22s%s%s\n", r, where, names[c->state[r]], lastop,
              rk->waits_for[0] ? " waits for: " : "", rk->waits_for);
      shown++;
    }
    if (c->hang_candidates > 1)
      fprintf(out, "    (%" PRIu64 " later collectives of this communicator were left incomplete too)\n",
              c->hang_candidates - 1);
  }
}

static int by_lateness(const void* a, const void* b, void* ranks) {
  const xr_rank* r = ranks;
  double p = r[*(const uint32_t*)a].median_ns, q = r[*(const uint32_t*)b].median_ns;
  return p > q ? -1 : p < q;
}

/* The ranks of c that have lateness, most late first; NULL when none. */
static uint32_t* ranked(const xr_comm* c, uint32_t* n) {
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
    const xr_comm* c = &x->comms[i];
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
      const xr_rank* rk = &c->ranks[o[k]];
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
static int32_t top_rank(const xr_comm* c) {
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
    const xr_comm* c = &x->comms[i];
    int32_t r = top_rank(c);
    if (r < 0 || !c->compared) continue;
    fprintf(out, "  0x%016" PRIx64 " %6u %9" PRIu64 " %9d %6.1f%% %13.2f %15.2f %14.2f\n", c->comm_id, c->nranks,
            c->compared, r, 100.0 * (double)c->ranks[r].last_count / (double)c->compared,
            (double)c->ranks[r].gap_sum_ns / (double)c->ranks[r].last_count / 1e3,
            (double)c->spread_sum_ns / (double)c->compared / 1e3, (double)c->spread_max_ns / 1e3);
  }
}

void ns_xr_text(const ns_xr* x, FILE* out) {
  ns_hosts_text(x->hosts, out);
  text_hangs(x, out);
  text_lateness(x, out);
  text_cross(x, out);
}

/* Opens a communicator's object: its id, its name (when `named`), its size. */
static void json_comm_begin(ns_json* j, const xr_comm* c, int named) {
  nsj_obj_begin(j);
  nsj_khex(j, "commId", c->comm_id);
  if (named) nsj_kstr(j, "name", c->name);
  nsj_ku64(j, "nranks", c->nranks);
}

static void json_hangs(const ns_xr* x, ns_json* j) {
  nsj_key(j, "hangs");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const xr_comm* c = &x->comms[i];
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
      const xr_rank* rk = &c->ranks[r];
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
    const xr_comm* c = &x->comms[i];
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
      const xr_rank* rk = &c->ranks[o[k]];
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
    const xr_comm* c = &x->comms[i];
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
  json_lateness(x, j);
  json_cross(x, j);
}
