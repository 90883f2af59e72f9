/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a Kineto trace's NCCL kernels linked to the recorded Colls
 * (see kineto_link.h). Single-threaded. */
#include "merge/kineto_link.h"

#include <stdlib.h>
#include <string.h>

#define LINK_SLACK_NS 20000      /* NCCL's kernel timer vs the kernel's start as CUPTI sees it */
#define LAUNCH_WINDOW_NS 1000000 /* a Coll without GPU times: its kernel starts within this of its start */

typedef struct {
  int64_t device, stream;
} comm_pin;

typedef struct ns_klink_vote {
  uint32_t pid; /* a communicator's track (the layout's pid) */
  comm_pin pin;
  uint64_t n; /* its Colls whose nearest kernel is on pin */
} stream_vote;

/* A number after `"key":` in the JSON text, or 0. */
static int json_num(const char* text, const char* key, double* v) {
  const char* p = strstr(text, key);
  if (!p) return 0;
  char* end;
  *v = strtod(p + strlen(key), &end);
  return end != p + strlen(key);
}

/* A Coll of the trace's process to link at the end, when every communicator's
 * kernels can be told apart by the device and stream most of its Colls fit. */
typedef struct ns_klink_coll {
  uint32_t pid, tid; /* the layout's */
  uint64_t ts;       /* its slice's start on the output's clock */
  int64_t want, from, to;
  int has_gpu;
  char func[32];
} pending_coll;

static int cmp_pending(const void* a, const void* b) {
  int64_t x = ((const pending_coll*)a)->want, y = ((const pending_coll*)b)->want;
  return x < y ? -1 : x > y;
}

static int cmp_kernel(const void* a, const void* b, void* ctx) {
  const ns_kineto_trace* t = ctx;
  int64_t x = t->events[*(const size_t*)a].ts_ns, y = t->events[*(const size_t*)b].ts_ns;
  return x < y ? -1 : x > y;
}

int ns_klink_init(ns_klinker* l, const ns_kineto_trace* tr) {
  l->tr = tr;
  size_t nk = 0;
  for (size_t i = 0; i < tr->nevents; i++) nk += tr->events[i].is_nccl_kernel && tr->events[i].has_ts;
  l->kernels = malloc((nk ? nk : 1) * sizeof *l->kernels);
  l->kernel_used = calloc(nk ? nk : 1, 1);
  l->residuals = malloc((nk ? nk : 1) * sizeof *l->residuals);
  if (!l->kernels || !l->kernel_used || !l->residuals) return -1;
  for (size_t i = 0; i < tr->nevents; i++)
    if (tr->events[i].is_nccl_kernel && tr->events[i].has_ts) l->kernels[l->nkernels++] = i;
  if (l->nkernels) qsort_r(l->kernels, l->nkernels, sizeof *l->kernels, cmp_kernel, (void*)tr);
  return 0;
}

void ns_klink_note(ns_klinker* l, const ns_draw_slice* s, uint32_t pid, uint64_t ts, const ns_kfile* k) {
  if (!s->args.fn || !l->nkernels) return;
  ns_json* j = &l->scratch;
  nsj_init(j, NULL);
  nsj_obj_begin(j);
  s->args.fn(s->args.ctx, j);
  nsj_obj_end(j);
  if (j->failed || j->len >= sizeof j->buf) return;
  j->buf[j->len] = '\0';
  pending_coll c = {.pid = pid, .tid = s->tid, .ts = ts};
  double gpu_us, gerr_us = 0;
  c.has_gpu = json_num(j->buf, "\"gpuStart\":", &gpu_us);
  json_num(j->buf, "\"gpuErrorUs\":", &gerr_us);
  const char* f = strstr(j->buf, "\"func\":\"");
  if (f) {
    f += 8;
    size_t n = strcspn(f, "\"");
    if (n < sizeof c.func) memcpy(c.func, f, n);
  }
  /* With GPU times: the kernel nearest the Coll's GPU start. Without: the
   * first one in [start - error, start + LAUNCH_WINDOW_NS] (a stream runs its
   * kernels in order). */
  if (c.has_gpu) {
    l->colls_with_gpu++;
    c.want = (int64_t)(gpu_us * 1000.0 + 0.5) + k->delta_ns;
    int64_t tol = k->error_ns + (int64_t)(gerr_us * 1000.0) + LINK_SLACK_NS;
    c.from = c.want - tol;
    c.to = c.want + tol;
  } else {
    c.want = (int64_t)ts;
    c.from = c.want - k->error_ns;
    c.to = c.want + LAUNCH_WINDOW_NS;
  }
  if (c.to < l->tr->events[l->kernels[0]].ts_ns || c.from > l->tr->events[l->kernels[l->nkernels - 1]].ts_ns) return;
  if (l->npending == l->cap_pending) {
    size_t cap = l->cap_pending ? l->cap_pending * 2 : 256;
    pending_coll* np = realloc(l->pending, cap * sizeof *np);
    if (!np) return;
    l->pending = np;
    l->cap_pending = cap;
  }
  l->pending[l->npending++] = c;
}

/* The kernel for c: of its function, unused, on the pinned device and stream
 * (pin NULL: any), the nearest to its GPU start or the first after its start;
 * SIZE_MAX: none. */
static size_t find_kernel(const ns_klinker* l, const pending_coll* c, const comm_pin* pin) {
  size_t lo = 0, hi = l->nkernels;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (l->tr->events[l->kernels[mid]].ts_ns < c->from)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t best = SIZE_MAX;
  int64_t best_d = 0;
  for (size_t i = lo; i < l->nkernels; i++) {
    const ns_kt_event* e = &l->tr->events[l->kernels[i]];
    if (e->ts_ns > c->to) break;
    if (l->kernel_used[i] || !e->num_pid || !e->num_tid) continue;
    if (c->func[0] && !memmem(l->tr->text + e->name_off, e->name_len, c->func, strlen(c->func))) continue;
    if (pin && (e->device != pin->device || e->stream != pin->stream)) continue;
    int64_t d = e->ts_ns - c->want;
    if (best == SIZE_MAX || (c->has_gpu && llabs(d) < llabs(best_d))) best = i, best_d = d;
  }
  return best;
}

/* Each communicator's device and stream: the one most of its Colls' best kernels are on. */
static void pin_streams(ns_klinker* l) {
  for (size_t i = 0; i < l->npending; i++) {
    const pending_coll* c = &l->pending[i];
    size_t k = find_kernel(l, c, NULL);
    if (k == SIZE_MAX) continue;
    const ns_kt_event* e = &l->tr->events[l->kernels[k]];
    size_t v = 0;
    while (v < l->nvotes &&
           !(l->votes[v].pid == c->pid && l->votes[v].pin.device == e->device && l->votes[v].pin.stream == e->stream))
      v++;
    if (v == l->nvotes) {
      stream_vote* nv = realloc(l->votes, (l->nvotes + 1) * sizeof *nv);
      if (!nv) return;
      l->votes = nv;
      l->votes[l->nvotes++] = (stream_vote){c->pid, {e->device, e->stream}, 0};
    }
    l->votes[v].n++;
  }
}

static const comm_pin* pin_of(const ns_klinker* l, uint32_t pid) {
  const stream_vote* best = NULL;
  for (size_t v = 0; v < l->nvotes; v++)
    if (l->votes[v].pid == pid && (!best || l->votes[v].n > best->n)) best = &l->votes[v];
  return best ? &best->pin : NULL;
}

void ns_klink_all(ns_klinker* l, ns_klink_fn fn, void* ctx) {
  pin_streams(l);
  if (l->npending) qsort(l->pending, l->npending, sizeof *l->pending, cmp_pending);
  for (size_t i = 0; i < l->npending; i++) {
    const pending_coll* c = &l->pending[i];
    const comm_pin* pin = pin_of(l, c->pid);
    if (!pin) continue;
    size_t best = find_kernel(l, c, pin);
    if (best == SIZE_MAX) continue;
    const ns_kt_event* e = &l->tr->events[l->kernels[best]];
    l->kernel_used[best] = 1;
    if (c->has_gpu) l->residuals[l->nresiduals++] = e->ts_ns - c->want;
    l->linked++;
    fn(ctx, c->pid, c->tid, c->ts, l->kernels[best]);
  }
}

int ns_klink_residuals(ns_klinker* l, int64_t* median, int64_t* maxabs) {
  if (!l->nresiduals) return 0;
  qsort(l->residuals, l->nresiduals, sizeof *l->residuals, ns_kclock_cmp_i64);
  *maxabs = 0;
  for (uint64_t i = 0; i < l->nresiduals; i++)
    if (llabs(l->residuals[i]) > *maxabs) *maxabs = llabs(l->residuals[i]);
  *median = l->residuals[l->nresiduals / 2];
  return 1;
}

void ns_klink_free(ns_klinker* l) {
  free(l->kernels);
  free(l->kernel_used);
  free(l->votes);
  free(l->pending);
  free(l->residuals);
}
