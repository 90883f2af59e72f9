/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: trace file builder (see trace_builder.h). */
#include "trace_builder.h"

#include <stdio.h>
#include <string.h>

void tb_begin(tb_file* f) {
  memset(f, 0, sizeof *f);
  ns_file_header h;
  ns_file_header_init(&h);
  ns_buf_put(&f->buf, &h, sizeof h);
}

void tb_process(tb_file* f, uint32_t pid, const char* host, int64_t realtime_offset_ns) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_PID, pid);
  ns_props_str(&f->buf, NS_P_HOSTNAME, host, strlen(host));
  ns_props_u64(&f->buf, NS_P_START_MONO_NS, 999000000ull);
  ns_props_i64(&f->buf, NS_P_REALTIME_OFFSET_NS, realtime_offset_ns);
  ns_props_str(&f->buf, NS_P_CLOCK_SOURCE, "tsc", 3);
  ns_props_f64(&f->buf, NS_P_TSC_HZ, 2.0e9);
  ns_props_str(&f->buf, NS_P_PLUGIN_VERSION, "0.1.0-test", 10);
  ns_props_str(&f->buf, 99, "a key from the future", 21); /* must be skipped */
  ns_block_end(&f->buf, at, NS_BLOCK_PROCESS, f->seq++);
}

void tb_strings(tb_file* f, size_t n, const uint32_t* ids, const char* const* strs) {
  ns_strings_encoder e;
  ns_strings_begin(&e, &f->buf);
  for (size_t i = 0; i < n; i++) ns_strings_put(&e, ids[i], strs[i], strlen(strs[i]));
  ns_strings_end(&e, f->seq++);
}

void tb_thread(tb_file* f, uint32_t tid, uint32_t ring, const char* name) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_TID, tid);
  ns_props_u64(&f->buf, NS_P_RING, ring);
  ns_props_str(&f->buf, NS_P_NAME, name, strlen(name));
  ns_block_end(&f->buf, at, NS_BLOCK_THREAD, f->seq++);
}

void tb_comm_init(tb_file* f, const tb_comm* c) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_COMM, c->comm);
  ns_props_u64(&f->buf, NS_P_COMM_ID, c->comm_id);
  ns_props_i64(&f->buf, NS_P_RANK, c->rank);
  ns_props_u64(&f->buf, NS_P_NRANKS, c->nranks);
  ns_props_u64(&f->buf, NS_P_NNODES, c->nnodes);
  if (c->name) ns_props_str(&f->buf, NS_P_COMM_NAME, c->name, strlen(c->name));
  ns_props_u64(&f->buf, NS_P_ABI_VERSION, c->abi);
  ns_props_u64(&f->buf, NS_P_EVENT_MASK, c->mask);
  ns_props_str(&f->buf, NS_P_GPU_UUID, c->uuid, strlen(c->uuid));
  ns_props_u64(&f->buf, NS_P_TS, c->ts);
  ns_props_u64(&f->buf, NS_P_TID, c->tid);
  ns_props_u64(&f->buf, NS_P_CTX_ADDR, 0x7f00c0000000ull + c->comm * 64);
  ns_block_end(&f->buf, at, NS_BLOCK_COMM_INIT, f->seq++);
}

void tb_comm_fini(tb_file* f, uint32_t comm, uint64_t ts, uint32_t tid, uint64_t events, uint64_t dropped) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_COMM, comm);
  ns_props_u64(&f->buf, NS_P_TS, ts);
  ns_props_u64(&f->buf, NS_P_TID, tid);
  ns_props_u64(&f->buf, NS_P_EVENTS, events);
  ns_props_u64(&f->buf, NS_P_DROPPED, dropped);
  ns_props_u64(&f->buf, NS_P_PXN_EVENTS, 2);
  ns_props_u64(&f->buf, NS_P_TYPE_EVENTS_BASE + NS_EV_COLL, 1);
  ns_block_end(&f->buf, at, NS_BLOCK_COMM_FINI, f->seq++);
}

void tb_clockfit(tb_file* f, uint32_t comm, double offset_ns, double drift_ppm, double error_ns) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_COMM, comm);
  ns_props_f64(&f->buf, NS_P_GPU_OFFSET_NS, offset_ns);
  ns_props_f64(&f->buf, NS_P_GPU_DRIFT_PPM, drift_ppm);
  ns_props_f64(&f->buf, NS_P_GPU_ERROR_NS, error_ns);
  ns_props_u64(&f->buf, NS_P_GPU_SAMPLES, 3);
  ns_block_end(&f->buf, at, NS_BLOCK_CLOCKFIT, f->seq++);
}

void tb_anchor(tb_file* f, uint64_t ts, int64_t realtime_offset_ns) {
  size_t at = ns_block_begin(&f->buf);
  ns_props_u64(&f->buf, NS_P_TS, ts);
  ns_props_i64(&f->buf, NS_P_REALTIME_OFFSET_NS, realtime_offset_ns);
  ns_block_end(&f->buf, at, NS_BLOCK_ANCHOR, f->seq++);
}

void tb_props_block(tb_file* f, uint16_t kind, size_t n, const uint32_t* keys, const uint64_t* vals) {
  size_t at = ns_block_begin(&f->buf);
  for (size_t i = 0; i < n; i++) ns_props_u64(&f->buf, keys[i], vals[i]);
  ns_block_end(&f->buf, at, kind, f->seq++);
}

void tb_events(tb_file* f, uint32_t tid, uint32_t ring, const ns_record* recs, size_t n) {
  ns_event_encoder e;
  ns_events_begin(&e, &f->buf, tid, ring, n ? recs[0].ts : 0, n ? recs[0].id : 0);
  for (size_t i = 0; i < n; i++) ns_events_put(&e, &recs[i]);
  ns_events_end(&e, f->seq++);
}

void tb_unknown_block(tb_file* f, uint16_t kind) {
  size_t at = ns_block_begin(&f->buf);
  ns_buf_put(&f->buf, "future", 6);
  ns_block_end(&f->buf, at, kind, f->seq++);
}

void tb_end(tb_file* f) {
  size_t at = ns_block_begin(&f->buf);
  ns_block_end(&f->buf, at, NS_BLOCK_END, f->seq++);
}

int tb_write(const tb_file* f, const char* path, size_t len) {
  if (f->buf.failed) return -1;
  if (len > f->buf.len) len = f->buf.len;
  FILE* out = fopen(path, "wb");
  if (!out) return -1;
  size_t w = len ? fwrite(f->buf.data, 1, len, out) : 0;
  int rc = fclose(out);
  return (w == len && rc == 0) ? 0 : -1;
}

void tb_free(tb_file* f) { ns_buf_free(&f->buf); }

ns_record tb_start(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id, uint64_t parent) {
  ns_record r = ns_record_make(NS_REC_START, type, comm, ts, id, parent);
  r.tid = tid;
  return r;
}

ns_record tb_stop(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id) {
  ns_record r = tb_start(type, comm, tid, ts, id, 0);
  r.kind = NS_REC_STOP;
  return r;
}

ns_record tb_state(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id, int state, int has_arg,
                   uint64_t arg) {
  ns_record r = tb_start(type, comm, tid, ts, id, 0);
  r.kind = NS_REC_STATE;
  r.state = state;
  if (has_arg) {
    r.flags = NS_RF_HAS_ARG;
    r.arg = arg;
  }
  return r;
}
