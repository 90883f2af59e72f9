/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the Trace Event Format (JSON) drawer for the timeline
 * layout (timeline_draw.h): "M" metadata for track names and order, "X"
 * complete slices (sub-slices follow their slice), "b"/"e" async slices,
 * "i" instants, "C" counters, "s"/"f" flow pairs bound to the slices at
 * their ends. Timestamps in microseconds with 3 decimals (exact). */
#include <stdlib.h>

#include "timeline/timeline_draw.h"

typedef struct {
  ns_json j;
  ns_chrome_frame frame; /* fn NULL: the drawer's own top level */
} chrome_drawer;

static void meta(chrome_drawer* c, const char* what, uint32_t pid, uint32_t tid, const char* key, const char* text,
                 int64_t num) {
  ns_json* j = &c->j;
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", what);
  nsj_kstr(j, "ph", "M");
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  if (text) nsj_kstr(j, key, text);
  else nsj_ki64(j, key, num);
  nsj_obj_end(j);
  nsj_obj_end(j);
}

static void process(void* self, uint32_t pid, const char* name, int64_t sort) {
  meta(self, "process_name", pid, 0, "name", name, 0);
  meta(self, "process_sort_index", pid, 0, "sort_index", NULL, sort);
}

static void process_label(void* self, uint32_t pid, const char* label) {
  meta(self, "process_labels", pid, 0, "labels", label, 0);
}

static void thread(void* self, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  meta(self, "thread_name", pid, tid, "name", name, 0);
  meta(self, "thread_sort_index", pid, tid, "sort_index", NULL, sort);
}

static void args(ns_json* j, const ns_draw_args* a) {
  if (!a->fn) return;
  nsj_key(j, "args");
  nsj_obj_begin(j);
  a->fn(a->ctx, j);
  nsj_obj_end(j);
}

static void head(ns_json* j, const char* name, const char* cat, const char* ph, uint64_t ts, uint32_t pid,
                 uint32_t tid) {
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", name);
  nsj_kstr(j, "cat", cat);
  nsj_kstr(j, "ph", ph);
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
}

static void complete(ns_json* j, const char* name, const char* cat, uint64_t ts, uint64_t dur, uint32_t pid,
                     uint32_t tid, const ns_draw_args* a) {
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", name);
  nsj_kstr(j, "cat", cat);
  nsj_kstr(j, "ph", "X");
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_kus(j, "dur", (int64_t)dur);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  args(j, a);
  nsj_obj_end(j);
}

static void slice(void* self, const ns_draw_slice* s) {
  chrome_drawer* c = self;
  ns_json* j = &c->j;
  if (s->async_id) {
    for (int end = 0; end < 2; end++) {
      nsj_ws(j, "\n");
      nsj_obj_begin(j);
      nsj_kstr(j, "name", s->name);
      nsj_kstr(j, "cat", s->cat);
      nsj_kstr(j, "ph", end ? "e" : "b");
      nsj_ku64(j, "id", s->async_id);
      nsj_kus(j, "ts", (int64_t)(end ? s->ts + s->dur : s->ts));
      nsj_ku64(j, "pid", s->pid);
      nsj_ku64(j, "tid", s->tid);
      if (!end) args(j, &s->args);
      nsj_obj_end(j);
    }
  } else {
    complete(j, s->name, s->cat, s->ts, s->dur, s->pid, s->tid, &s->args);
  }
  for (uint32_t i = 0; i < s->nsubs; i++)
    complete(j, s->subs[i].name, "state", s->subs[i].ts, s->subs[i].dur, s->pid, s->tid, &s->subs[i].args);
}

static void instant(void* self, const ns_draw_instant* in) {
  chrome_drawer* c = self;
  ns_json* j = &c->j;
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", in->name);
  nsj_kstr(j, "cat", in->cat);
  nsj_kstr(j, "ph", "i");
  nsj_kstr(j, "s", in->process_scope ? "p" : "t");
  nsj_kus(j, "ts", (int64_t)in->ts);
  nsj_ku64(j, "pid", in->pid);
  nsj_ku64(j, "tid", in->tid);
  args(j, &in->args);
  nsj_obj_end(j);
}

static void counters(void* self, uint32_t pid, const char* name, uint64_t ts, const char* const* keys,
                     const uint64_t* values, unsigned n) {
  chrome_drawer* c = self;
  ns_json* j = &c->j;
  head(j, name, "counters", "C", ts, pid, 0);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  for (unsigned i = 0; i < n; i++) nsj_ku64(j, keys[i], values[i]);
  nsj_obj_end(j);
  nsj_obj_end(j);
}

static void flow(void* self, const ns_draw_flow* f) {
  chrome_drawer* c = self;
  ns_json* j = &c->j;
  for (int end = 0; end < 2; end++) {
    nsj_ws(j, "\n");
    nsj_obj_begin(j);
    nsj_kstr(j, "name", "parent");
    nsj_kstr(j, "cat", "hierarchy");
    nsj_kstr(j, "ph", end ? "f" : "s");
    if (end) nsj_kstr(j, "bp", "e");
    nsj_ku64(j, "id", f->id);
    nsj_kus(j, "ts", (int64_t)(end ? f->to_ts : f->from_ts));
    nsj_ku64(j, "pid", end ? f->to_pid : f->from_pid);
    nsj_ku64(j, "tid", end ? f->to_tid : f->from_tid);
    nsj_obj_end(j);
  }
}

static int finish(void* self) {
  chrome_drawer* c = self;
  nsj_ws(&c->j, "\n");
  nsj_arr_end(&c->j);
  if (c->frame.trailer) c->frame.trailer(c->frame.ctx, &c->j);
  nsj_obj_end(&c->j);
  nsj_line_end(&c->j);
  nsj_flush(&c->j); /* a failed write shows in ferror(out), which the caller checks */
  free(c);
  return 0;
}

int ns_draw_chrome_new(FILE* out, ns_drawer* d) { return ns_draw_chrome_framed(out, NULL, d); }

int ns_draw_chrome_framed(FILE* out, const ns_chrome_frame* frame, ns_drawer* d) {
  chrome_drawer* c = calloc(1, sizeof *c);
  if (!c) return -1;
  if (frame) c->frame = *frame;
  ns_json* j = &c->j;
  nsj_init(j, out);
  nsj_obj_begin(j);
  if (c->frame.members) {
    c->frame.members(c->frame.ctx, j);
  } else {
    nsj_kstr(j, "displayTimeUnit", "ns");
    nsj_key(j, "otherData");
    nsj_obj_begin(j);
    nsj_kstr(j, "producer", "ncclscope export --format chrome");
    nsj_kstr(j, "clock", "CLOCK_MONOTONIC of each recording host, microseconds");
    nsj_obj_end(j);
  }
  nsj_key(j, "traceEvents");
  nsj_arr_begin(j);
  if (c->frame.events) c->frame.events(c->frame.ctx, j);
  *d = (ns_drawer){.self = c,
                   .process = process,
                   .process_label = process_label,
                   .thread = thread,
                   .slice = slice,
                   .instant = instant,
                   .counters = counters,
                   .flow = flow,
                   .finish = finish};
  return 0;
}
