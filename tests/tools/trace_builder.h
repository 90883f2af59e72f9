/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: builds trace files block by block with the codec, so the
 * reader and the exporters can be tested on exactly known input (including
 * damaged input). Test-only; single-threaded. */
#ifndef NCCLSCOPE_TESTS_TRACE_BUILDER_H
#define NCCLSCOPE_TESTS_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/codec.h"

typedef struct {
  ns_buf buf;   /* the whole file: header, then blocks */
  uint64_t seq; /* next block seq */
} tb_file;

void tb_begin(tb_file* f);
void tb_process(tb_file* f, uint32_t pid, const char* host, int64_t realtime_offset_ns);
/* ids[i] -> strs[i]; strs[i] may contain any bytes up to its NUL. */
void tb_strings(tb_file* f, size_t n, const uint32_t* ids, const char* const* strs);
void tb_thread(tb_file* f, uint32_t tid, uint32_t ring, const char* name);

typedef struct {
  uint32_t comm;
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks, nnodes;
  const char* name; /* NULL: absent */
  uint32_t abi;
  uint64_t mask;
  const char* uuid;
  uint64_t ts;
  uint32_t tid;
} tb_comm;
void tb_comm_init(tb_file* f, const tb_comm* c);
void tb_comm_fini(tb_file* f, uint32_t comm, uint64_t ts, uint32_t tid, uint64_t events, uint64_t dropped);
void tb_clockfit(tb_file* f, uint32_t comm, double offset_ns, double drift_ppm, double error_ns);
/* A CLOCK_REALTIME anchor (format 1.1): trace ts was Unix-epoch ns ts + realtime_offset_ns. */
void tb_anchor(tb_file* f, uint64_t ts, int64_t realtime_offset_ns);
/* A props block of any kind (COUNTERS, COMM_FINI ...) with u64 values. */
void tb_props_block(tb_file* f, uint16_t kind, size_t n, const uint32_t* keys, const uint64_t* vals);
/* One EVENTS block of thread `tid` with records recs[0..n). */
void tb_events(tb_file* f, uint32_t tid, uint32_t ring, const ns_record* recs, size_t n);
/* A block of an unknown kind (to check that readers skip it). */
void tb_unknown_block(tb_file* f, uint16_t kind);
void tb_end(tb_file* f);
/* 0 on success. Writes the first `len` bytes (all if len is SIZE_MAX). */
int tb_write(const tb_file* f, const char* path, size_t len);
void tb_free(tb_file* f);

/* Record constructors. */
ns_record tb_start(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id, uint64_t parent);
ns_record tb_stop(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id);
ns_record tb_state(uint8_t type, uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id, int state, int has_arg,
                   uint64_t arg);

/* The standard test run: writes `nproc` process files into dir, each with the
 * same event ids (ids are unique only per file), a full v5 hierarchy
 * (GroupApi > CollApi > Coll > ProxyOp > ProxyStep > NetPlugin, KernelCh, P2p,
 * ProxyCtrl, KernelLaunch, legacy Group, CE events), a PXN ProxyOp run for
 * the other process, odd strings, an event that never stops, and a
 * CLOCKFIT. Returns 0 on success. `truncate_last` cuts that many bytes off
 * the last file's end (0: clean files). */
int tb_write_standard_run(const char* dir, int nproc, size_t truncate_last);

/* Special runs for one exporter property each (special_runs.c); each writes
 * one or two trace files into dir and returns 0 on success.
 *  open:     n ProxyOps that start and never stop, then stops of the first
 *            10 and the last 10 (the open-event cap, --max-open)
 *  misnest:  slices that overlap without nesting on one track: API events
 *            of one thread, a stop recorded by another thread, more
 *            concurrent proxy steps than lanes, an inner event that never
 *            stops inside an outer one that does
 *  counters: a clean process with drops in its COUNTERS block (per type,
 *            ring, handles, bad handles) and two communicators
 *  counters-nofini: the same without COMM_FINI blocks */
int tb_write_special(const char* dir, const char* name, uint64_t n);

#endif
