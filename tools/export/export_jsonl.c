/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: JSON Lines exporter, exactly per docs/jsonl-contract.md.
 *
 * Lines are written as the walker finishes things: a state when it is
 * recorded, an event at its stop (Coll/P2p once their children are done),
 * lifecycle records at COMM_INIT / COMM_FINI. Files are processed one after
 * another, so lines are not in global time order. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/event_details.h"
#include "export/export.h"

typedef struct {
  ns_walk* walk; /* first member: set by the caller (export.h) */
  int counters_written; /* this file's process counters are out */
  ns_json j;
} jsonl_state;

static uint32_t file_pid(const ns_wfile* f) { return f->has_process ? f->process.pid : 0; }

static void point(ns_json* j, const char* key, uint64_t ts, uint32_t pid, uint32_t tid) {
  nsj_key(j, key);
  nsj_obj_begin(j);
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  nsj_obj_end(j);
}

static void comm_fields(ns_json* j, const ns_wcomm* c) {
  nsj_ku64(j, "commId", c ? c->info.comm_id : 0);
  nsj_ki64(j, "rank", c ? c->info.rank : -1);
  nsj_kstr(j, "gpuUuid", c ? c->info.gpu_uuid : "");
}

static void lifecycle_head(ns_json* j, const ns_wfile* f, const ns_wcomm* c, const char* func, uint64_t ts,
                           uint32_t tid) {
  nsj_obj_begin(j);
  nsj_kstr(j, "recordType", "lifecycle");
  nsj_kstr(j, "type", "ProfilerLifecycle");
  nsj_kstr(j, "func", func);
  comm_fields(j, c);
  point(j, "start", ts, file_pid(f), tid);
  point(j, "stop", ts, file_pid(f), tid);
  nsj_kus(j, "duration", 0);
  nsj_ku64(j, "myPid", file_pid(f));
}

static void jsonl_comm_init(void* self, ns_wfile* f, ns_wcomm* c) {
  jsonl_state* s = self;
  ns_json* j = &s->j;
  lifecycle_head(j, f, c, "ProfilerInit", c->info.ts, c->info.tid);
  nsj_key(j, "details");
  nsj_obj_begin(j);
  nsj_ku64(j, "nranks", c->info.nranks);
  nsj_ku64(j, "nNodes", c->info.nnodes);
  nsj_kstr(j, "commName", c->info.has_name ? c->info.comm_name : NULL);
  nsj_ku64(j, "eventMask", c->info.event_mask);
  nsj_ku64(j, "pluginVersion", c->info.abi_version);
  nsj_kstr(j, "clock", "monotonic");
  nsj_kus(j, "realtimeOffsetUs", f->has_process ? f->process.realtime_offset_ns : 0);
  if (f->has_process) {
    nsj_kstr(j, "hostname", f->process.hostname);
    nsj_kstr(j, "ncclscopeVersion", f->process.version);
  }
  ns_walk_comm_details(s->walk, f, c, 0, j);
  nsj_obj_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
}

static void jsonl_comm_fini(void* self, ns_wfile* f, ns_wcomm* c, const ns_props_info* p) {
  jsonl_state* s = self;
  ns_json* j = &s->j;
  lifecycle_head(j, f, c, "ProfilerFinalize", p->ts, p->tid);
  nsj_key(j, "details");
  nsj_obj_begin(j);
  ns_write_counter_fields(j, p);
  if (c->has_clockfit) {
    nsj_kf64(j, "gpuClockOffsetUs", c->gpu_offset_ns / 1000.0);
    nsj_kf64(j, "gpuClockDriftPpm", c->gpu_drift_ppm);
    nsj_kf64(j, "gpuClockErrorUs", c->gpu_error_ns / 1000.0);
    nsj_ku64(j, "gpuClockSamples", c->gpu_samples);
    if (c->gpu_ref_ns) nsj_kus(j, "gpuClockRefUs", (int64_t)c->gpu_ref_ns); /* where the offset holds */
  }
  ns_walk_comm_details(s->walk, f, c, 1, j);
  const ns_props_info* pc = ns_wfile_counters_here(f);
  if (pc) {
    nsj_key(j, "processCounters");
    nsj_obj_begin(j);
    ns_write_counter_fields(j, pc);
    nsj_obj_end(j);
    s->counters_written = 1;
  }
  nsj_obj_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
}

/* The COUNTERS block of a file in which no COMM_FINI precedes it (or that
 * one could not be used): a process-scope finalize record, commId 0 and
 * rank -1 as for events without a communicator, at the file's last time. */
static void jsonl_counters(void* self, ns_wfile* f, const ns_props_info* p) {
  jsonl_state* s = self;
  if (s->counters_written) return;
  ns_json* j = &s->j;
  lifecycle_head(j, f, NULL, "ProfilerFinalize", f->max_ts, 0);
  nsj_key(j, "details");
  nsj_obj_begin(j);
  nsj_ku64(j, "events", p->u[NS_P_EVENTS]);
  nsj_ku64(j, "dropped", p->u[NS_P_DROPPED]);
  nsj_key(j, "processCounters");
  nsj_obj_begin(j);
  ns_write_counter_fields(j, p);
  nsj_obj_end(j);
  nsj_obj_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
  s->counters_written = 1;
}

static void jsonl_file_begin(void* self, ns_wfile* f) {
  (void)f;
  ((jsonl_state*)self)->counters_written = 0;
}

/* The event's eventAddr, formatted once (the sink's area of the event):
 * its states and its own line all write it. */
typedef struct {
  uint8_t len;
  char text[NS_EVENT_ADDR_MAX];
} addr_cache;

static const char* event_addr(const ns_wfile* f, const ns_event* ev, size_t* len) {
  addr_cache* c = ns_event_user(ev);
  if (!c->len) c->len = (uint8_t)ns_event_addr(c->text, sizeof c->text, f->index, ev->id);
  *len = c->len;
  return c->text;
}

/* The lines below are most of an export: their fixed parts are written as
 * literals (nsj_put), the rest through the writer after nsj_resume. */
static void jsonl_state_rec(void* self, ns_wfile* f, ns_event* ev, const ns_record* st) {
  jsonl_state* s = self;
  ns_json* j = &s->j;
  char addr_buf[NS_EVENT_ADDR_MAX], buf[32];
  /* A run of identical reports: one line for the state they repeat, with
   * their count (the assembler hands NS_ST_REPEATED with its event only). */
  uint64_t repeats = 0;
  ns_record rep;
  if (st->state == NS_ST_REPEATED) {
    rep = ns_repeated_state(ev, st, &repeats);
    st = &rep;
  }
  size_t alen;
  const char* addr = ev && ev->id == st->id ? event_addr(f, ev, &alen)
                                            : (alen = ns_event_addr(addr_buf, sizeof addr_buf, f->index, st->id), addr_buf);
  const char* name = ns_state_label(st->state, buf, sizeof buf);
  NSJ_PUT_LIT(j, "{\"recordType\":\"state\",\"eventAddr\":\"");
  nsj_put(j, addr, alen);
  NSJ_PUT_LIT(j, "\",\"ts\":");
  nsj_put_us(j, (int64_t)st->ts);
  NSJ_PUT_LIT(j, ",\"name\":");
  nsj_put_str(j, name, strlen(name), "\",\"id\":", 7);
  nsj_put_i64(j, st->state);
  NSJ_PUT_LIT(j, ",\"pid\":");
  nsj_put_u64(j, file_pid(f));
  NSJ_PUT_LIT(j, ",\"tid\":");
  nsj_put_u64(j, st->tid);
  nsj_resume(j, 1);
  ns_write_state_arg(j, ev ? ev->start.type : st->type, st);
  if (repeats) nsj_ku64(j, "repeats", repeats);
  nsj_obj_end(j);
  nsj_line_end(j);
}

/* ,"start":{"ts":..,"pid":..,"tid":..} */
static void put_point(ns_json* j, const char* head, size_t head_len, uint64_t ts, uint32_t pid, uint32_t tid) {
  nsj_put(j, head, head_len);
  nsj_put_us(j, (int64_t)ts);
  NSJ_PUT_LIT(j, ",\"pid\":");
  nsj_put_u64(j, pid);
  NSJ_PUT_LIT(j, ",\"tid\":");
  nsj_put_u64(j, tid);
  NSJ_PUT_LIT(j, "}");
}

static void jsonl_event(void* self, ns_wfile* f, ns_event* ev) {
  jsonl_state* s = self;
  ns_json* j = &s->j;
  const ns_record* r = &ev->start;
  int has_func;
  const char* func = ns_event_func(f, ev, &has_func);
  const ns_wcomm* c = ns_wfile_comm(f, r->comm);
  const char* type = ns_event_type_name(r->type);
  size_t alen;
  const char* addr = event_addr(f, ev, &alen);

  NSJ_PUT_LIT(j, "{\"recordType\":\"event\",\"type\":");
  nsj_put_str(j, type, strlen(type), "\"", 1);
  if (has_func) {
    NSJ_PUT_LIT(j, ",\"func\":");
    if (func) nsj_put_str(j, func, strlen(func), "\"", 1);
    else NSJ_PUT_LIT(j, "null");
  }
  NSJ_PUT_LIT(j, ",\"eventAddr\":\"");
  nsj_put(j, addr, alen);
  NSJ_PUT_LIT(j, "\",\"parentObj\":");
  if (r->flags & NS_RF_PARENT_RAW) {
    char hex[24] = "\"0x";
    size_t n = 3 + nsj_fmt_hex(hex + 3, r->parent, 1);
    hex[n++] = '"';
    nsj_put(j, hex, n);
  } else if (r->parent) {
    char paddr[NS_EVENT_ADDR_MAX + 2];
    paddr[0] = '"';
    size_t n = 1 + ns_event_addr(paddr + 1, sizeof paddr - 2, f->index, r->parent);
    paddr[n++] = '"';
    nsj_put(j, paddr, n);
  } else {
    NSJ_PUT_LIT(j, "null");
  }
  NSJ_PUT_LIT(j, ",\"commId\":");
  nsj_put_u64(j, c ? c->info.comm_id : 0);
  NSJ_PUT_LIT(j, ",\"rank\":");
  nsj_put_i64(j, c ? c->info.rank : -1);
  NSJ_PUT_LIT(j, ",\"gpuUuid\":");
  const char* uuid = c ? c->info.gpu_uuid : "";
  nsj_put_str(j, uuid, strlen(uuid), "\"", 1);
  put_point(j, ",\"start\":{\"ts\":", 15, r->ts, file_pid(f), r->tid);
  if (ev->stopped) {
    put_point(j, ",\"stop\":{\"ts\":", 14, ev->stop_ts, file_pid(f), ev->stop_tid);
    NSJ_PUT_LIT(j, ",\"duration\":");
    nsj_put_us(j, (int64_t)(ev->stop_ts - r->ts));
  }
  NSJ_PUT_LIT(j, ",\"myPid\":");
  nsj_put_u64(j, file_pid(f));
  nsj_resume(j, 1);
  if (r->flags & NS_RF_PXN) {
    nsj_kbool(j, "isPxn", 1);
    nsj_ku64(j, "originPid", r->origin_pid);
  }
  ns_write_incomplete(j, ev);
  if (r->flags & NS_RF_PARENT_LOST) nsj_kbool(j, "parentLost", 1);
  nsj_key(j, "details");
  nsj_obj_begin(j);
  ns_write_details(s->walk, f, ev, j);
  nsj_obj_end(j);
  nsj_obj_end(j);
  nsj_line_end(j);
}

static void* jsonl_make(FILE* out, ns_sink* sink) {
  jsonl_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  nsj_init(&s->j, out);
  *sink = (ns_sink){.self = s,
                    .event_bytes = sizeof(addr_cache),
                    .file_begin = jsonl_file_begin,
                    .comm_init = jsonl_comm_init,
                    .comm_fini = jsonl_comm_fini,
                    .counters = jsonl_counters,
                    .state = jsonl_state_rec,
                    .event_done = jsonl_event};
  return s;
}

static int jsonl_finish(void* state) {
  jsonl_state* s = state;
  nsj_flush(&s->j); /* a failed write shows in ferror(out), which the caller checks */
  free(s);
  return 0;
}

const ns_format ns_format_jsonl = {"jsonl", jsonl_make, jsonl_finish};
