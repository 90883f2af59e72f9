/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: merging the timeline into a Kineto trace (kineto_merge.h):
 * a drawer that moves the layout's tracks onto the trace's clock (decided by
 * kineto_clock.c) and pids, links NCCL kernels (kineto_link.c), and writes through the Trace
 * Event JSON drawer inside the trace's own top level, or through the
 * Perfetto drawer after the trace's events (kineto_draw.c). Single-threaded. */
#include "merge/kineto_merge.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "merge/kineto_clock.h"
#include "merge/kineto_draw.h"
#include "merge/kineto_link.h"
#include "merge/kineto_trace.h"
#include "timeline/timeline_layout.h"
#include "traces/trace_dir.h"

#define FLOW_ID_BASE (1ull << 62) /* link arrows: apart from the layout's parent flows */
#define KINETO_FLOW_BASE (1ull << 61) /* the trace's own flows, when drawn (Perfetto) */

typedef struct {
  ns_kineto_trace tr;
  const char* path;
  ns_kclock ck;
  int unaligned;
  int64_t pid_base; /* added to the layout's pids */
  ns_klinker link;  /* NCCL kernels linked to Colls */
  int cur; /* file being drawn */
  uint64_t next_flow;
  uint64_t clamped;
  ns_drawer inner;
  /* Perfetto: the trace's events are drawn (kineto_draw.h) at the end, the
   * link arrows' kernel ends among them. */
  int perfetto, compress;
  ns_kineto_link* links;
  size_t nlinks;
  ns_kineto_drawn drawn;
  int draw_failed;
} kmerge;

/* ---- the drawer between the layout and the JSON drawer ---- */

static kmerge* the_merge; /* the merge the format below makes (one export per process) */

static uint64_t map_ts(kmerge* m, uint64_t ts) {
  int64_t v = (int64_t)ts + (m->cur >= 0 && (size_t)m->cur < m->ck.nfiles ? m->ck.files[m->cur].delta_ns : 0);
  if (v < 0) {
    m->clamped++;
    return 0;
  }
  return (uint64_t)v;
}

static uint32_t map_pid(const kmerge* m, uint32_t pid) { return (uint32_t)(m->pid_base + pid); }

/* The file being drawn is left out of the merge (another host's): nothing of it is drawn. */
static int left_out(const kmerge* m) {
  return m->cur >= 0 && (size_t)m->cur < m->ck.nfiles && !m->ck.files[m->cur].included;
}

static void km_file_begin(void* self, int index) { ((kmerge*)self)->cur = index; }

static void km_process(void* self, uint32_t pid, const char* name, int64_t sort) {
  kmerge* m = self;
  if (left_out(m)) return;
  char buf[768];
  if (m->unaligned) snprintf(buf, sizeof buf, "[unaligned] %s", name);
  m->inner.process(m->inner.self, map_pid(m, pid), m->unaligned ? buf : name, m->pid_base + sort);
}

static void km_process_label(void* self, uint32_t pid, const char* label) {
  kmerge* m = self;
  if (left_out(m)) return;
  m->inner.process_label(m->inner.self, map_pid(m, pid), label);
}

static void km_thread(void* self, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  kmerge* m = self;
  if (left_out(m)) return;
  m->inner.thread(m->inner.self, map_pid(m, pid), tid, name, sort);
}

static void km_instant(void* self, const ns_draw_instant* in) {
  kmerge* m = self;
  if (left_out(m)) return;
  ns_draw_instant x = *in;
  x.ts = map_ts(m, in->ts);
  x.pid = map_pid(m, in->pid);
  m->inner.instant(m->inner.self, &x);
}

static void km_counters(void* self, uint32_t pid, const char* name, uint64_t ts, const char* const* keys,
                        const uint64_t* values, unsigned n) {
  kmerge* m = self;
  if (left_out(m)) return;
  m->inner.counters(m->inner.self, map_pid(m, pid), name, map_ts(m, ts), keys, values, n);
}

static void km_flow(void* self, const ns_draw_flow* f) {
  kmerge* m = self;
  if (left_out(m)) return;
  ns_draw_flow x = *f;
  x.from_ts = map_ts(m, f->from_ts);
  x.to_ts = map_ts(m, f->to_ts);
  x.from_pid = map_pid(m, f->from_pid);
  x.to_pid = map_pid(m, f->to_pid);
  m->inner.flow(m->inner.self, &x);
}

/* Draws a link made (kineto_link.h): a flow from the Coll's slice to the kernel. */
static void draw_link(void* ctx, uint32_t pid, uint32_t tid, uint64_t ts, size_t event) {
  kmerge* m = ctx;
  const ns_kt_event* e = &m->tr.events[event];
  uint64_t id = FLOW_ID_BASE + ++m->next_flow;
  if (m->perfetto) { /* the Coll is written: a zero-length slice at its start; the kernel's end when drawn */
    m->links[m->nlinks++] = (ns_kineto_link){event, id};
    ns_draw_slice at = {.name = "NCCL kernel",
                        .cat = "kernel link",
                        .ts = ts,
                        .pid = map_pid(m, pid),
                        .tid = tid,
                        .flows_out = &id,
                        .nflows_out = 1};
    m->inner.slice(m->inner.self, &at);
    return;
  }
  ns_draw_flow fl = {.id = id,
                     .from_pid = map_pid(m, pid),
                     .from_tid = tid,
                     .from_ts = ts,
                     .to_pid = (uint32_t)e->pid,
                     .to_tid = (uint32_t)e->tid,
                     .to_ts = e->ts_ns < 0 ? 0 : (uint64_t)e->ts_ns};
  m->inner.flow(m->inner.self, &fl);
}

static void km_slice(void* self, const ns_draw_slice* s) {
  kmerge* m = self;
  if (left_out(m)) return;
  ns_draw_slice x = *s;
  ns_draw_sub subs[NS_XEV_MAX_STATES];
  x.ts = map_ts(m, s->ts);
  x.pid = map_pid(m, s->pid);
  if (s->nsubs) {
    uint32_t n = s->nsubs < NS_XEV_MAX_STATES ? s->nsubs : NS_XEV_MAX_STATES;
    for (uint32_t i = 0; i < n; i++) {
      subs[i] = s->subs[i];
      subs[i].ts = map_ts(m, s->subs[i].ts);
    }
    x.subs = subs;
    x.nsubs = n;
  }
  m->inner.slice(m->inner.self, &x);
  if (!m->unaligned && s->cat && strcmp(s->cat, "Coll") == 0 && !s->async_id && m->cur >= 0 && m->cur == m->ck.match)
    ns_klink_note(&m->link, s, s->pid, x.ts, &m->ck.files[m->cur]);
}

static void draw_kineto(kmerge* m);

static int km_finish(void* self) {
  kmerge* m = self;
  ns_klink_all(&m->link, draw_link, m);
  if (m->perfetto) draw_kineto(m);
  return m->inner.finish(m->inner.self); /* JSON: writes the trailer (frame_trailer) */
}

/* ---- the trace's own top level around the layout's events ---- */

/* A member or element written as it stands (the writer's separators kept). */
static void raw_member(ns_json* j, const char* s, size_t n) {
  if (j->need_comma[j->depth]) nsj_put(j, ",", 1);
  nsj_put(j, "\n", 1);
  nsj_put(j, s, n);
  j->need_comma[j->depth] = 1;
}

/* The trace's top-level members but "traceEvents", as they stand: around
 * the layout's events in the JSON output, as arguments in Perfetto's. */
static void trace_members(void* ctx, ns_json* j) {
  kmerge* m = ctx;
  for (size_t i = 0; i < m->tr.nmembers; i++) {
    const ns_kt_member* mb = &m->tr.members[i];
    if (!mb->is_events) raw_member(j, m->tr.text + mb->member_off, mb->member_len);
  }
}

static void frame_events(void* ctx, ns_json* j) {
  kmerge* m = ctx;
  for (size_t i = 0; i < m->tr.nevents; i++) raw_member(j, m->tr.text + m->tr.events[i].off, m->tr.events[i].len);
}

static void frame_trailer(void* ctx, ns_json* j) {
  kmerge* m = ctx;
  nsj_ws(j, "\n");
  nsj_key(j, "ncclscopeMerge");
  nsj_obj_begin(j);
  nsj_kstr(j, "producer",
           m->perfetto ? "ncclscope export --format perfetto --merge-kineto"
                       : "ncclscope export --format chrome --merge-kineto");
  nsj_kstr(j, "kinetoTrace", m->path);
  nsj_kstr(j, "alignment", m->unaligned ? "unaligned" : "realtime");
  if (m->unaligned) {
    nsj_kstr(j, "reason", m->ck.reason);
    nsj_kstr(j, "placement", "unaligned: the recording shifted to start where the trace starts; no error bound");
  } else {
    nsj_kstr(j, "clock", "ts_us = (CLOCK_MONOTONIC ns + offsetNs - baseTimeNanoseconds) / 1000, Kineto's clock");
    nsj_kstr(j, "errorExcludes", "Kineto's own TSC-to-CLOCK_REALTIME conversion (not recorded in its trace)");
  }
  nsj_ki64(j, "baseTimeNanoseconds", m->ck.base_ns);
  nsj_ki64(j, "pidBase", m->pid_base);
  int64_t worst = 0;
  nsj_key(j, "files");
  nsj_arr_begin(j);
  for (size_t i = 0; i < m->ck.nfiles; i++) {
    const ns_kfile* k = &m->ck.files[i];
    nsj_obj_begin(j);
    nsj_kstr(j, "path", k->path);
    nsj_kstr(j, "host", k->host);
    nsj_ku64(j, "pid", k->pid);
    nsj_kbool(j, "included", k->included);
    nsj_ki64(j, "offsetNs", k->offset_ns);
    nsj_ki64(j, "shiftNs", k->delta_ns);
    nsj_ku64(j, "anchors", k->anchors);
    nsj_ki64(j, "anchorSpreadNs", k->spread_ns);
    if (!m->unaligned) nsj_kf64(j, "errorUs", (double)k->error_ns / 1000.0);
    nsj_obj_end(j);
    if (k->included && k->error_ns > worst) worst = k->error_ns;
  }
  nsj_arr_end(j);
  if (!m->unaligned) nsj_kf64(j, "errorUs", (double)worst / 1000.0);
  nsj_ku64(j, "ncclKernels", m->link.nkernels);
  nsj_ku64(j, "collsWithGpuTime", m->link.colls_with_gpu);
  nsj_ku64(j, "kernelsLinked", m->link.linked);
  int64_t median, maxabs;
  if (ns_klink_residuals(&m->link, &median, &maxabs)) { /* kernel start - the Coll's GPU start on the trace's clock */
    nsj_kf64(j, "linkResidualMedianUs", (double)median / 1000.0);
    nsj_kf64(j, "linkResidualMaxAbsUs", (double)maxabs / 1000.0);
  }
  nsj_ku64(j, "clampedToZero", m->clamped);
  if (m->perfetto) { /* the trace's events, drawn (kineto_draw.h) */
    const ns_kineto_drawn* k = &m->drawn;
    nsj_key(j, "kinetoEventsDrawn");
    nsj_obj_begin(j);
    nsj_ku64(j, "slices", k->slices);
    nsj_ku64(j, "onOverlappingTracks", k->overlapping);
    nsj_ku64(j, "asAsyncSlices", k->async);
    nsj_ku64(j, "instants", k->instants);
    nsj_ku64(j, "flowPoints", k->flow_points);
    nsj_ku64(j, "counters", k->counters);
    nsj_ku64(j, "trackNames", k->names);
    nsj_ku64(j, "clampedToZero", k->clamped);
    nsj_ku64(j, "notDrawn", k->not_drawn);
    nsj_kstr(j, "notDrawnPhases", k->not_drawn_phases);
    nsj_obj_end(j);
  }
  nsj_obj_end(j);
}

/* ---- Perfetto: the trace's events drawn, its top level as arguments ---- */

/* The trace's events (kineto_draw.h), then two instants on a track of
 * their own (pid_base: no layout pid) at the trace's first time: the
 * merge's metadata (the JSON output's "ncclscopeMerge") and the trace's
 * top-level members but "traceEvents". */
static void draw_kineto(kmerge* m) {
  if (ns_kineto_draw(&m->tr, &m->inner, m->links, m->nlinks, KINETO_FLOW_BASE, &m->drawn) != 0) m->draw_failed = 1;
  int64_t first = INT64_MAX;
  for (size_t i = 0; i < m->tr.nevents; i++)
    if (m->tr.events[i].has_ts && m->tr.events[i].ts_ns < first) first = m->tr.events[i].ts_ns;
  uint64_t at = first == INT64_MAX || first < 0 ? 0 : (uint64_t)first;
  uint32_t pid = (uint32_t)m->pid_base;
  m->inner.process(m->inner.self, pid, "ncclscope merge", m->pid_base);
  m->inner.thread(m->inner.self, pid, 1, "merge", 0);
  ns_draw_instant in = {.name = "ncclscopeMerge", .cat = "ncclscope", .ts = at, .pid = pid, .tid = 1};
  in.args = (ns_draw_args){frame_trailer, m, NULL};
  m->inner.instant(m->inner.self, &in);
  in.name = "kinetoTrace";
  in.args = (ns_draw_args){trace_members, m, NULL};
  m->inner.instant(m->inner.self, &in);
}

static int km_drawer_new(FILE* out, ns_drawer* d) {
  kmerge* m = the_merge;
  ns_chrome_frame fr = {m, trace_members, frame_events, frame_trailer};
  if (m->perfetto ? ns_draw_perfetto_new(out, m->compress, &m->inner) : ns_draw_chrome_framed(out, &fr, &m->inner))
    return -1;
  *d = (ns_drawer){.self = m,
                   .flows_on_slices = m->inner.flows_on_slices,
                   .strict_lanes = m->inner.strict_lanes,
                   .process = km_process,
                   .process_label = km_process_label,
                   .thread = km_thread,
                   .slice = km_slice,
                   .instant = km_instant,
                   .counters = km_counters,
                   .flow = km_flow,
                   .file_begin = km_file_begin,
                   .finish = km_finish};
  return 0;
}

static void* km_make(FILE* out, ns_sink* sink) { return ns_timeline_make(out, sink, km_drawer_new); }
static const ns_format km_format_chrome = {"chrome", km_make, ns_timeline_finish};
static const ns_format km_format_perfetto = {"perfetto", km_make, ns_timeline_finish};

/* ---- the command ---- */

static void kmerge_free(kmerge* m) {
  ns_kineto_free(&m->tr);
  free(m->ck.files);
  ns_klink_free(&m->link);
  free(m->links);
}

int ns_kineto_export(const char* dir, const ns_kineto_input* in, const ns_format* fmt, const char* out_path,
                     const ns_export_options* opts) {
  const char* kineto_path = in->path;
  int unaligned = in->unaligned;
  kmerge m;
  memset(&m, 0, sizeof m);
  m.path = kineto_path;
  m.perfetto = fmt != &ns_format_chrome;
  m.compress = fmt == &ns_format_perfetto;
  m.cur = -1;
  m.ck.match = -1;
  char err[1024];
  if (ns_kineto_load(kineto_path, in->max_bytes, &m.tr, err, sizeof err) != 0) {
    fprintf(stderr, "ncclscope: cannot merge into the Kineto trace %s\n", err);
    return NS_EXIT_FAIL;
  }
  ns_trace_list list;
  if (ns_trace_dir_list(dir, &list, err, sizeof err) != 0) {
    fprintf(stderr, "ncclscope: cannot read the dump directory %s\n", err);
    kmerge_free(&m);
    return NS_EXIT_FAIL;
  }
  if (list.n == 0) {
    fprintf(stderr, "ncclscope: no trace files (*.nstrace) in %s\n", dir);
    ns_trace_list_free(&list);
    kmerge_free(&m);
    return NS_EXIT_FAIL;
  }
  m.ck.nfiles = list.n;
  m.ck.files = calloc(list.n, sizeof *m.ck.files);
  for (size_t i = 0; m.ck.files && i < list.n; i++) ns_kclock_scan_file(list.paths[i], &m.ck.files[i]);
  ns_trace_list_free(&list);
  int kernels = ns_klink_init(&m.link, &m.tr);
  m.links = malloc((m.link.nkernels ? m.link.nkernels : 1) * sizeof *m.links);
  int64_t pid_limit = m.perfetto ? ns_kineto_pid_limit(&m.tr) : 0; /* the numbers drawn for string pids too */
  if (!m.ck.files || kernels != 0 || !m.links || pid_limit < 0) {
    fprintf(stderr, "ncclscope: out of memory\n");
    kmerge_free(&m);
    return NS_EXIT_FAIL;
  }
  int64_t maxpid = 0;
  for (size_t i = 0; i < m.tr.nevents; i++)
    if (m.tr.events[i].num_pid && m.tr.events[i].pid > maxpid) maxpid = m.tr.events[i].pid;
  if (pid_limit - 1 > maxpid) maxpid = pid_limit - 1;
  m.pid_base = (maxpid / 1000 + 1) * 1000; /* past every pid of the trace */
  if (m.pid_base > (int64_t)UINT32_MAX - (1 << 20)) m.pid_base = (int64_t)UINT32_MAX - (1 << 20);

  if (ns_kclock_align(&m.ck, &m.tr) != 0) {
    if (!unaligned) {
      fprintf(stderr,
              "ncclscope: refusing to merge into %s: %s.\n"
              "  Its events would be misplaced; --merge-unaligned merges anyway, marked \"unaligned\"\n",
              kineto_path, m.ck.reason);
      kmerge_free(&m);
      return NS_EXIT_USAGE;
    }
    m.unaligned = 1;
    ns_kclock_unaligned(&m.ck, &m.tr);
    fprintf(stderr, "ncclscope: warning: merging unaligned (%s): every ncclscope track is marked [unaligned]\n",
            m.ck.reason);
  }
  for (size_t i = 0; i < m.ck.nfiles; i++)
    if (!m.ck.files[i].included)
      fprintf(stderr, "ncclscope: note: %s left out: %s\n", m.ck.files[i].path,
              m.ck.files[i].anchors ? "recorded on another host (its realtime clock is not the trace's)"
                                    : "no clock anchor could be read");
  the_merge = &m;
  int rc = ns_export_dir(dir, m.perfetto ? &km_format_perfetto : &km_format_chrome, out_path, NULL, opts, NULL);
  the_merge = NULL;
  if (m.draw_failed && (rc == NS_EXIT_OK || rc == NS_EXIT_PARTIAL)) {
    fprintf(stderr, "ncclscope: out of memory drawing the events of %s: the output misses some\n", kineto_path);
    rc = NS_EXIT_FAIL;
  }
  if (rc == NS_EXIT_OK || rc == NS_EXIT_PARTIAL)
    fprintf(stderr, "ncclscope: merged into %s: %" PRIu64 " of %zu NCCL kernel(s) linked to a Coll%s\n", kineto_path,
            m.link.linked, m.link.nkernels, m.unaligned ? " (unaligned: none linked)" : "");
  if (m.perfetto && (rc == NS_EXIT_OK || rc == NS_EXIT_PARTIAL)) {
    const ns_kineto_drawn* k = &m.drawn;
    fprintf(stderr,
            "ncclscope: the trace's events drawn: %" PRIu64 " slice(s) (%" PRIu64 " on overlapping tracks, %" PRIu64
            " async), %" PRIu64 " instant(s), %" PRIu64 " flow point(s), %" PRIu64 " counter sample(s)\n",
            k->slices, k->overlapping, k->async, k->instants, k->flow_points, k->counters);
    if (k->not_drawn)
      fprintf(stderr,
              "ncclscope: note: %" PRIu64
              " event(s) of %s not drawn (phases %s: the Perfetto output has no form for them; --format chrome keeps "
              "them)\n",
              k->not_drawn, kineto_path, k->not_drawn_phases);
  }
  kmerge_free(&m);
  return rc;
}
