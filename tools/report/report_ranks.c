/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the cross-rank view (report_ranks.h). Collectives of every
 * file and flight record go into a list per (communicator, rank); finish
 * sorts each list by (function, seq) and walks the collectives in that order,
 * each as its ranks' ops in rank order, by merging the lists (ns_xrank_cursor).
 *
 * This file collects the input; report_ranks_walk.c orders it,
 * report_ranks_gpu.c places the GPU clocks, report_ranks_judge.c judges each
 * collective and report_ranks_out.c prints the result. */
#include "report/report_ranks.h"

#include <math.h>
#include <string.h>

#include "util/json_reader.h"
#include "report/report_ranks_gpu.h"
#include "report/report_ranks_judge.h"
#include "report/report_ranks_match.h"
#include "report/report_ranks_model.h"
#include "report/report_ranks_walk.h"

#define NS_XRANK_FR_MAX_BYTES (256u << 20)
#define NS_XRANK_GPU_SLACK_NS 1000000ull /* a GPU time this far outside its op's host times is not trusted */

ns_xr* ns_xr_new(void) {
  ns_xr* x = calloc(1, sizeof *x);
  if (!x) return NULL;
  ns_idmap_init(&x->comm_index);
  ns_idmap_init(&x->call_index);
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
    free(x->comms[i].mm);
  }
  free(x->calls);
  ns_idmap_free(&x->call_index);
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
  if (ns_xrank_grow((void**)&x->files, &x->capfiles, x->nfiles, sizeof *x->files)) return -1;
  ns_xrank_file* f = &x->files[x->nfiles];
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

void ns_xr_file_end(ns_xr* x, int file, int complete) {
  if (file >= 0 && (size_t)file < x->nfiles) x->files[file].clean_end = complete;
}

void ns_xr_anchor(ns_xr* x, int file, uint64_t ts, int64_t real) {
  if (file >= 0 && (size_t)file < x->nfiles) ns_hosts_anchor(x->hosts, x->files[file].host_idx, ts, real);
}

/* The communicator with that id (made with nranks ranks); NULL when out of memory or nranks is 0. */
static ns_xrank_comm* comm_get(ns_xr* x, uint64_t comm_id, uint32_t nranks, uint32_t* idx) {
  uint64_t key = comm_id ? comm_id : 1;
  uint64_t* at = ns_idmap_get(&x->comm_index, key);
  if (at) {
    *idx = (uint32_t)(*at - 1);
    return &x->comms[*at - 1];
  }
  if (!nranks || nranks > (1u << 24)) return NULL;
  if (ns_xrank_grow((void**)&x->comms, &x->capcomms, x->ncomms, sizeof *x->comms)) return NULL;
  ns_xrank_comm* c = &x->comms[x->ncomms];
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
  ns_xrank_comm* c = comm_get(x, ci->comm_id, ci->nranks, &idx);
  if (!c || ci->rank < 0 || (uint32_t)ci->rank >= c->nranks) return;
  if (ci->has_name && !c->name[0]) snprintf(c->name, sizeof c->name, "%.63s", ci->comm_name);
  ns_xrank_rank* r = &c->ranks[ci->rank];
  r->file = file;
  r->has_trace = 1;
}

/* An op of rank `rank` of communicator `comm`; its index in the rank's ops, or -1 when out of memory. */
static ptrdiff_t add_op(ns_xr* x, uint32_t comm, int32_t rank, int32_t file, int func, uint64_t seq, uint16_t flags,
                        int64_t arr, int64_t end, float gpu_err_ns, uint32_t call, int64_t posted) {
  ns_xrank_comm* c = &x->comms[comm];
  ns_xrank_rank* r = &c->ranks[rank];
  if (r->touched_by != file) {
    if (ns_xrank_grow((void**)&x->touched, &x->captouched, x->ntouched, sizeof *x->touched)) return -1;
    x->touched[x->ntouched++] = (ns_xrank_touched){.comm = comm, .rank = rank};
    r->touched_by = file;
  }
  if (ns_xrank_grow((void**)&r->ops, &r->capops, r->nops, sizeof *r->ops)) return -1;
  r->ops[r->nops] = (ns_xrank_op){.seq = seq,
                                  .arr = arr,
                                  .end = end,
                                  .file = file,
                                  .gpu_err_ns = gpu_err_ns,
                                  .posted = posted,
                                  .func = (int16_t)func,
                                  .flags = flags,
                                  .call = call};
  c->nops++;
  return (ptrdiff_t)r->nops++;
}

/* The end of a file: the lists it added to lose their spare room (a list doubles as it grows). */
static void trim_touched(ns_xr* x) {
  for (size_t i = 0; i < x->ntouched; i++) {
    ns_xrank_rank* r = &x->comms[x->touched[i].comm].ranks[x->touched[i].rank];
    if (r->capops > r->nops && r->nops) {
      ns_xrank_op* fit = realloc(r->ops, r->nops * sizeof *fit);
      if (fit) r->ops = fit, r->capops = r->nops;
    }
  }
  x->ntouched = 0;
}

/* An op's arrival and end: the GPU's times where they fall inside the
 * operation's host-side life, host_start to host_last (a GPU clock fit that
 * is not there yet can be off by seconds; then the host's own times are the
 * better guess: its start, and host_end). gpu_start 0: no GPU times. */
static void place(ns_xrank_op* o, uint64_t host_start, uint64_t host_last, uint64_t host_end, uint64_t gpu_start,
                  uint64_t gpu_stop, double gpu_err_ns) {
  int gpu_ok = gpu_start && gpu_start + NS_XRANK_GPU_SLACK_NS >= host_start &&
               (!host_last || gpu_start <= host_last + NS_XRANK_GPU_SLACK_NS) &&
               (!gpu_stop || !host_last || gpu_stop <= host_last + NS_XRANK_GPU_SLACK_NS);
  o->arr = (int64_t)(gpu_ok ? gpu_start : host_start);
  o->end = (int64_t)(gpu_ok && gpu_stop ? gpu_stop : host_end);
  /* a bound of 0 is still a GPU time (0 marks host times): the timer quantum at least */
  o->gpu_err_ns = !gpu_ok ? 0.0f : isfinite(gpu_err_ns) ? (float)gpu_err_ns + 1.0f : INFINITY;
}

/* FNV-1a over the bytes of n values. */
static uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* The index + 1 of the op's arguments in x->calls, added when new; 0 when out of memory. */
static uint32_t call_of(ns_xr* x, const ns_op_result* op) {
  ns_xrank_call k;
  memset(&k, 0, sizeof k);
  k.count = op->count;
  k.root = op->root_or_peer;
  if (op->dtype) snprintf(k.dtype, sizeof k.dtype, "%s", op->dtype);
  uint64_t h = fnv(1469598103934665603ull, &k, sizeof k) | 1; /* 0 is no key of the map */
  for (;; h += 2) {                                           /* a hash shared by other arguments: the next odd one */
    uint64_t* at = ns_idmap_get(&x->call_index, h);
    if (!at) break;
    if (!memcmp(&x->calls[*at - 1], &k, sizeof k)) return (uint32_t)*at;
  }
  if (x->ncalls >= UINT32_MAX - 1 || ns_xrank_grow((void**)&x->calls, &x->capcalls, x->ncalls, sizeof *x->calls))
    return 0;
  int inserted;
  uint64_t* slot = ns_idmap_put(&x->call_index, h, &inserted);
  if (!slot) return 0;
  x->calls[x->ncalls++] = k;
  *slot = x->ncalls;
  return (uint32_t)x->ncalls;
}

void ns_xr_op(ns_xr* x, int file, const ns_op_result* op) {
  if (op->type != NS_EV_COLL || (op->flags & NS_OPF_NO_START)) return;
  uint32_t idx;
  ns_xrank_comm* c = comm_get(x, op->comm_id, op->nranks, &idx);
  if (!c || op->rank < 0 || (uint32_t)op->rank >= c->nranks) {
    x->ops_no_comm++;
    return;
  }
  uint64_t host_last = op->exec_stop_ns > op->stop_ns ? op->exec_stop_ns : op->stop_ns;
  uint64_t host_end = op->exec_stop_ns ? op->exec_stop_ns : op->stop_ns;
  ns_xrank_op placed;
  place(&placed, op->start_ns, host_last, host_end, op->gpu_start_ns, op->gpu_stop_ns, op->gpu_err_ns);
  ptrdiff_t at = add_op(x, idx, op->rank, file, op->func, op->seq,
                        (op->flags & NS_OPF_INCOMPLETE) ? NS_XRANK_STUCK : NS_XRANK_DONE, placed.arr, placed.end,
                        placed.gpu_err_ns, call_of(x, op), (int64_t)op->start_ns);
  if (at < 0) return;
  /* converted with the fit as it stood when the op completed: once the file is read, again with the final one */
  if (op->ptimer_start && !ns_xrank_grow((void**)&x->reconv, &x->capreconv, x->nreconv, sizeof *x->reconv))
    x->reconv[x->nreconv++] = (ns_xrank_reconvert){.comm = idx,
                                                   .rank = op->rank,
                                                   .op = (size_t)at,
                                                   .comm_serial = op->comm,
                                                   .ptimer_start = op->ptimer_start,
                                                   .ptimer_stop = op->ptimer_stop,
                                                   .host_start = op->start_ns,
                                                   .host_last = host_last,
                                                   .host_end = host_end};
}

void ns_xr_file_clock(ns_xr* x, ns_analysis* a) {
  for (size_t i = 0; a && i < x->nreconv; i++) {
    const ns_xrank_reconvert* c = &x->reconv[i];
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
  nsjr_doc* d = nsjr_parse_file(path, NS_XRANK_FR_MAX_BYTES, err, errlen);
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
    ns_xrank_comm* c = comm_get(x, hex_id(nsjr_kstr(cv, "commId", NULL)), (uint32_t)nsjr_ku64(cv, "nranks", 0), &idx);
    if (!c || rank < 0 || (uint32_t)rank >= c->nranks) continue;
    const char* name = nsjr_kstr(cv, "name", "");
    if (*name && !c->name[0]) snprintf(c->name, sizeof c->name, "%.63s", name);
    ns_xrank_rank* r = &c->ranks[rank];
    if (r->file < 0) r->file = file;
    r->clean = 1; /* its flight record lists the communicator: what it posted until then is known */
    const nsjr_val* ops = nsjr_get(cv, "ops");
    for (const nsjr_val* o = ops ? ops->first : NULL; o; o = o->next) {
      if (strcmp(nsjr_kstr(o, "type", ""), "Coll") != 0) continue;
      const char* st = nsjr_kstr(o, "state", "");
      if (!strcmp(st, "unstarted")) continue;
      uint64_t gpu = nsjr_ku64(o, "gpuNs", 0);
      add_op(x, idx, rank, file, ns_func_code(nsjr_kstr(o, "func", "")), nsjr_ku64(o, "seq", 0),
             NS_XRANK_FR | (!strcmp(st, "done") ? NS_XRANK_DONE : NS_XRANK_STUCK),
             (int64_t)(gpu ? gpu : nsjr_ku64(o, "startNs", 0)), (int64_t)nsjr_ku64(o, "doneNs", 0), 0.0f, 0,
             (int64_t)nsjr_ku64(o, "startNs", 0));
    }
  }
  const nsjr_val* eps = nsjr_get(root, "episodes");
  for (const nsjr_val* e = eps ? eps->first : NULL; e; e = e->next) {
    uint32_t idx;
    ns_xrank_comm* c = comm_get(x, hex_id(nsjr_kstr(e, "commId", NULL)), (uint32_t)nsjr_ku64(e, "nranks", 0), &idx);
    int32_t rank = (int32_t)nsjr_ki64(e, "rank", -1);
    if (!c || rank < 0 || (uint32_t)rank >= c->nranks || strcmp(nsjr_kstr(e, "type", ""), "Coll") != 0) continue;
    if (nsjr_bool(nsjr_get(e, "cleared"), 0)) continue; /* it completed before the record was written */
    if (ns_xrank_grow((void**)&x->eps, &x->capeps, x->neps, sizeof *x->eps)) break;
    ns_xrank_episode* ep = &x->eps[x->neps++];
    memset(ep, 0, sizeof *ep);
    ep->comm = idx;
    ep->rank = rank;
    ep->order = (uint32_t)(x->neps - 1);
    ep->func = (int16_t)ns_func_code(nsjr_kstr(e, "func", ""));
    ep->seq = nsjr_ku64(e, "seq", 0);
    ep->waited = nsjr_knum(e, "waitedSec", 0);
    ep->cleared = nsjr_bool(nsjr_get(e, "cleared"), 0);
    snprintf(ep->waits_for, sizeof ep->waits_for, "%s", nsjr_kstr(e, "waitsFor", ""));
    add_op(x, idx, rank, file, ep->func, ep->seq, NS_XRANK_FR | NS_XRANK_EPISODE | NS_XRANK_STUCK,
           (int64_t)nsjr_ku64(e, "startNs", 0), 0, 0.0f, 0, (int64_t)nsjr_ku64(e, "startNs", 0));
  }
  trim_touched(x);
  nsjr_free(d);
  return 0;
}

void ns_xr_finish(ns_xr* x) {
  ns_hosts_fit(x->hosts);
  if (ns_xrank_sort_all(x)) return;
  ns_hosts_refine(x->hosts, ns_xrank_walk_collectives, x);
  ns_xrank_refine_gpu_clocks(x);
  ns_xrank_judge(x);
  ns_xrank_match_calls(x);
}

size_t ns_xr_hangs(const ns_xr* x) { return x->nhangs; }
size_t ns_xr_mismatches(const ns_xr* x) { return x->nmismatches; }
