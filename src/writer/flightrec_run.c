/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the flight recorder and the hang watchdog on the writer thread.
 *
 * The process's flight recorder (src/flightrec/flightrec.h) follows the
 * events of the writer's tracker (tracker.h), which every record the writer
 * encodes goes into; the writer calls ns_frw_tick after each drain. The tick
 *  - asks the recorder which operation has been in flight longer than
 *    NCCLSCOPE_HANG_TIMEOUT_SEC (the oldest unfinished one per communicator);
 *    for each new one (an episode) it logs one WARN through NCCL's logger
 *    and, once per tick with new episodes, writes flightrec-<host>-<pid>.json
 *    into the dump directory (sinks/flightrec_file.h);
 *    an episode's end is one INFO line;
 *  - tells the metrics (metrics_out.h) that a verdict came, so they are
 *    written at once, and gives them each communicator's oldest operation
 *    in flight (ns_frw_inflight);
 *  - writes the same file when the dump signal (NCCLSCOPE_DUMP_SIGNAL,
 *    SIGUSR1) asked for it: the handler (src/runtime/exit.c) only sets a flag.
 * NCCLSCOPE_FR_ENTRIES=0 turns all of it off. Writer thread only, except
 * ns_writer_request_dump (any thread, a signal handler). Nothing here fails
 * NCCL: an unwritable file is one warning per session. */
#include "writer/flightrec_run.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture/context.h"
#include "log/log.h"
#include "session/session.h"
#include "sinks/flightrec_file.h"
#include "writer/trace_out.h"
#include "writer/tracker.h"

#define FRW_BATCH 16 /* verdicts taken per check */

static ns_fr* g_fr;     /* writer thread only */
static ns_fr_file g_file; /* the session's flight record file */
static uint64_t g_timeout_ns; /* 0: no watchdog */

/* Set by the dump signal's handler, taken by the writer. Relaxed: a flag
 * with no data behind it (the writer dumps its own state). */
static _Atomic int g_dump_requested;

void ns_writer_request_dump(void) { atomic_store_explicit(&g_dump_requested, 1, memory_order_relaxed); }

static const char* strtab_string(void* user, uint32_t id) { return ns_strtab_str(user, id); }

void ns_frw_open(const ns_strtab* strings) {
  g_fr = NULL;
  memset(&g_file, 0, sizeof g_file);
  /* g_dump_requested is left alone: a request made between init and this
   * thread's start is taken at its first pass. */
  if (!ns_sess.cfg.fr_entries) return;
  ns_fr_config cfg = {
      .entries = ns_sess.cfg.fr_entries,
      .string = strtab_string,
      .string_user = (void*)(uintptr_t)strings,
  };
  g_fr = ns_tracker() ? ns_fr_create(&cfg) : NULL;
  if (!g_fr) {
    ns_log_warn("no memory for the flight recorder; no hang detection in this process");
    return;
  }
  ns_asm_sink sink;
  ns_fr_attach(g_fr, ns_tracker(), ns_tracker_area_flightrec(), &sink);
  ns_tracker_follow_flightrec(&sink);
  g_timeout_ns = (uint64_t)(ns_sess.cfg.hang_timeout_sec * 1e9);
}

void ns_frw_comm(const ns_comm_info* ci) {
  if (g_fr) ns_fr_comm(g_fr, ci);
}

void ns_frw_comm_end(uint32_t comm) {
  if (g_fr) ns_fr_comm_end(g_fr, comm);
}

/* The flight record file (sinks/flightrec_file.h) with the process's facts. */
static int write_dump(const char* reason, uint64_t now, char* shown, size_t shownlen) {
  char stem[NAME_MAX + 1];
  ns_trace_out_stem("flightrec", stem, sizeof stem);
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  ns_fr_dump_info info = {
      .host = ns_sess.hostname,
      .pid = ns_sess.pid,
      .reason = reason,
      .now_ns = now,
      .realtime_offset_ns = ((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec) - (int64_t)now,
      .timeout_sec = ns_sess.cfg.hang_timeout_sec,
  };
  return ns_fr_file_write(&g_file, g_fr, &info, ns_trace_out_dirfd(), ns_sess.cfg.dump_dir, stem,
                          ns_sess.cfg.file_mode, shown, shownlen);
}

int ns_frw_tick(uint64_t now, int* dumped_on_request) {
  if (!g_fr) return 0;
  ns_fr_settle(g_fr, now);
  char shown[PATH_MAX + 300];
  if (atomic_exchange_explicit(&g_dump_requested, 0, memory_order_relaxed)) {
    *dumped_on_request = 1;
    if (write_dump("signal", now, shown, sizeof shown) == 0) ns_log_info("flight record written to %s (on request)", shown);
  }
  if (!g_timeout_ns) return 0;
  ns_fr_stuck v[FRW_BATCH];
  size_t n = ns_fr_check(g_fr, now, g_timeout_ns, v, FRW_BATCH);
  int fresh = 0;
  for (size_t i = 0; i < n; i++) fresh += !v[i].cleared;
  int written = fresh && write_dump("hang", now, shown, sizeof shown) == 0;
  for (size_t i = 0; i < n; i++) {
    const ns_fr_stuck* s = &v[i];
    if (s->cleared) {
      ns_log_info("communicator 0x%016llx%s%s%s rank %d: %s seq %llu completed after %.1f s in flight",
                  (unsigned long long)s->comm_id, s->comm_name[0] ? " (" : "", s->comm_name, s->comm_name[0] ? ")" : "",
                  s->rank, s->func, (unsigned long long)s->op.seq, (double)s->waited_ns / 1e9);
      continue;
    }
    ns_log_warn("hang? communicator 0x%016llx%s%s%s rank %d of %u: %s seq %llu in flight for %.1f s (%s); waits for: "
                "%s; flight record: %s",
                (unsigned long long)s->comm_id, s->comm_name[0] ? " (" : "", s->comm_name, s->comm_name[0] ? ")" : "",
                s->rank, s->nranks, s->func, (unsigned long long)s->op.seq, (double)s->waited_ns / 1e9,
                s->op.started ? ns_fr_stage_name(s->op.stage) : "start not recorded", s->waits_for,
                written ? shown : "not written");
  }
  return (int)n;
}

int ns_frw_running(void) { return g_fr != NULL; }

void ns_frw_detail(int full, uint64_t now_ns) {
  if (g_fr) ns_fr_set_detail(g_fr, full, now_ns);
}

size_t ns_frw_inflight(uint64_t now, ns_fr_inflight* out, size_t max) {
  return g_fr ? ns_fr_inflight_get(g_fr, now, out, max) : 0;
}

void ns_frw_close(void) {
  ns_tracker_follow_flightrec(NULL);
  ns_fr_destroy(g_fr);
  g_fr = NULL;
}
