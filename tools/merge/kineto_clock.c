/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the recording's clock against a Kineto trace's
 * (kineto_clock.h). Single-threaded. */
#include "merge/kineto_clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncclscope/trace_reader.h"

#define EPOCH_US_MIN 1000000000000000LL /* absolute "ts" (no base) are epoch us: after 2001-09 */

/* ---- the recording's clocks (a pass over every file before the export) ---- */

int ns_kclock_cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

static void note_ts(ns_kfile* k, uint64_t ts) {
  if (!ts) return;
  if (!k->first_ts || ts < k->first_ts) k->first_ts = ts;
  if (ts > k->last_ts) k->last_ts = ts;
}

/* The realtime-monotonic readings of a file: a sample for the median (every
 * stride-th reading; the stride doubles when the sample is full, so a long
 * run is sampled over its whole length) and the extremes of every reading,
 * which the stated error covers. */
#define NS_KCLOCK_SAMPLE 4096
typedef struct {
  int64_t v[NS_KCLOCK_SAMPLE];
  unsigned n;
  uint64_t seen, stride;
  int64_t min, max;
} offsets;

static void note_offset(offsets* o, int64_t v) {
  uint64_t i = o->seen++;
  if (v < o->min) o->min = v;
  if (v > o->max) o->max = v;
  if (i % o->stride) return;
  if (o->n == NS_KCLOCK_SAMPLE) {
    unsigned j = 0;
    for (unsigned k = 0; k < o->n; k += 2) o->v[j++] = o->v[k];
    o->n = j;
    o->stride *= 2;
    if (i % o->stride) return;
  }
  o->v[o->n++] = v;
}

void ns_kclock_scan_file(const char* path, ns_kfile* k) {
  snprintf(k->path, sizeof k->path, "%s", path);
  char err[512];
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  if (!r) return;
  k->readable = 1;
  static offsets o; /* 32 KB: not on the stack */
  memset(&o, 0, sizeof o);
  o.stride = 1, o.min = INT64_MAX, o.max = INT64_MIN;
  ns_item it;
  while (ns_reader_next(r, &it)) {
    switch (it.kind) {
    case NS_ITEM_PROCESS:
      k->has_process = 1;
      k->pid = it.process->pid;
      snprintf(k->host, sizeof k->host, "%s", it.process->hostname);
      note_offset(&o, it.process->realtime_offset_ns);
      note_ts(k, it.process->start_mono_ns);
      break;
    case NS_ITEM_ANCHOR:
      if (it.props->has[NS_P_REALTIME_OFFSET_NS]) note_offset(&o, (int64_t)it.props->u[NS_P_REALTIME_OFFSET_NS]);
      break;
    case NS_ITEM_COMM_INIT:
      if (k->nranks < 16) k->ranks[k->nranks++] = it.comm->rank;
      note_ts(k, it.comm->ts);
      break;
    case NS_ITEM_RECORD: note_ts(k, it.record->ts); break;
    case NS_ITEM_COMM_FINI: note_ts(k, it.props->ts); break;
    default: break;
    }
  }
  ns_reader_close(r);
  if (!o.n) return;
  qsort(o.v, o.n, sizeof o.v[0], ns_kclock_cmp_i64);
  k->anchors = o.seen > UINT32_MAX ? UINT32_MAX : (unsigned)o.seen;
  k->offset_ns = o.v[o.n / 2];
  int64_t lo = k->offset_ns - o.min, hi = o.max - k->offset_ns;
  k->spread_ns = lo > hi ? lo : hi;
  k->error_ns = k->spread_ns + NS_KCLOCK_READ_NS;
}

/* ---- the checks ---- */

static int host_pid_of(const ns_kineto_trace* t, int64_t pid) {
  for (size_t i = 0; i < t->nevents; i++)
    if (t->events[i].is_host && t->events[i].num_pid && t->events[i].pid == pid) return 1;
  return 0;
}

/* The trace's span on its own clock (ns): events with a time, metadata left out. */
static int trace_span(const ns_kineto_trace* t, int64_t* lo, int64_t* hi) {
  int any = 0;
  for (size_t i = 0; i < t->nevents; i++) {
    const ns_kt_event* e = &t->events[i];
    if (!e->has_ts || e->ph == 'M') continue;
    int64_t end = e->ts_ns + (e->has_dur && e->dur_ns > 0 ? e->dur_ns : 0);
    if (!any || e->ts_ns < *lo) *lo = e->ts_ns;
    if (!any || end > *hi) *hi = end;
    any = 1;
  }
  return any;
}

static void utc(int64_t ns, char* out, size_t n) {
  time_t s = (time_t)(ns / 1000000000);
  struct tm tm;
  if (gmtime_r(&s, &tm))
    strftime(out, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
  else
    snprintf(out, n, "?");
}

int ns_kclock_align(ns_kclock* m, const ns_kineto_trace* t) {
  int64_t lo = 0, hi = 0;
  if (!trace_span(t, &lo, &hi)) {
    snprintf(m->reason, sizeof m->reason, "the trace has no timed event");
    return -1;
  }
  if (t->has_base) {
    m->base_ns = t->base_ns;
  } else if (lo / 1000 >= EPOCH_US_MIN) {
    m->base_ns = 0; /* epoch microseconds (Kineto before baseTimeNanoseconds) */
  } else {
    snprintf(m->reason, sizeof m->reason,
             "the trace has no time base: no \"baseTimeNanoseconds\" and its \"ts\" are not Unix-epoch microseconds "
             "(first %.3f us)",
             (double)lo / 1000.0);
    return -1;
  }
  /* The trace's process: its pid, its host if named, overlapping in time. A
   * pid recorded on several hosts at once (pids repeat across hosts) is
   * decided by the trace's distributedInfo rank, else refused. */
  ns_kfile* match = NULL;
  int pid_seen = 0, ambiguous = 0;
  for (size_t i = 0; i < m->nfiles; i++) {
    ns_kfile* k = &m->files[i];
    if (!k->has_process || !k->anchors || !host_pid_of(t, k->pid)) continue;
    if (t->host[0] && strcmp(t->host, k->host) != 0) continue;
    pid_seen = 1;
    int64_t a = (int64_t)k->first_ts + k->offset_ns - m->base_ns, b = (int64_t)k->last_ts + k->offset_ns - m->base_ns;
    if (a > hi || b < lo) continue;
    int has_rank = 0;
    for (unsigned r = 0; r < k->nranks; r++) has_rank |= t->has_rank && k->ranks[r] == t->rank;
    if (match && t->has_rank) {
      int match_rank = 0;
      for (unsigned r = 0; r < match->nranks; r++) match_rank |= match->ranks[r] == t->rank;
      if (match_rank == has_rank)
        ambiguous = 1;
      else if (has_rank)
        match = k, m->match = (int)i;
    } else if (match) {
      ambiguous = 1;
    } else {
      match = k;
      m->match = (int)i;
    }
  }
  if (match && ambiguous) {
    snprintf(m->reason, sizeof m->reason,
             "ambiguous: more than one recorded process has the trace's pid %u in its time span (pids repeat across "
             "hosts), and its distributedInfo rank does not tell them apart",
             match->pid);
    return -1;
  }
  if (!match) {
    char when[2][64], trace_pid[32] = "none";
    for (size_t i = 0; i < t->nevents; i++)
      if (t->events[i].is_host && t->events[i].num_pid) {
        snprintf(trace_pid, sizeof trace_pid, "pid %" PRId64, t->events[i].pid);
        break;
      }
    utc(lo + m->base_ns, when[0], sizeof when[0]);
    utc(hi + m->base_ns, when[1], sizeof when[1]);
    if (pid_seen)
      snprintf(m->reason, sizeof m->reason,
               "another run: the trace (%s to %s) does not overlap the recording of its process in time", when[0],
               when[1]);
    else if (t->host[0])
      snprintf(m->reason, sizeof m->reason,
               "another host or run: no recorded process on host \"%s\" has the pid of the trace's host events (%s)",
               t->host, trace_pid);
    else
      snprintf(m->reason, sizeof m->reason,
               "another host or run: the pid of the trace's host events (%s) is none of the %zu recorded processes'",
               trace_pid, m->nfiles);
    return -1;
  }
  for (size_t i = 0; i < m->nfiles; i++) {
    ns_kfile* k = &m->files[i];
    k->included = k->anchors && strcmp(k->host, match->host) == 0;
    k->delta_ns = k->offset_ns - m->base_ns;
  }
  if (t->has_rank) {
    int found = 0;
    for (unsigned r = 0; r < match->nranks; r++) found |= match->ranks[r] == t->rank;
    if (!found)
      fprintf(stderr,
              "ncclscope: note: the trace's distributedInfo rank %" PRId64 " is no rank of %s's communicators\n",
              t->rank, match->path);
  }
  return 0;
}

void ns_kclock_unaligned(ns_kclock* m, const ns_kineto_trace* t) {
  int64_t lo = 0, hi = 0, first = INT64_MAX;
  if (!trace_span(t, &lo, &hi)) lo = 0;
  for (size_t i = 0; i < m->nfiles; i++) {
    ns_kfile* k = &m->files[i];
    if (k->readable && k->first_ts && (int64_t)k->first_ts + k->offset_ns < first)
      first = (int64_t)k->first_ts + k->offset_ns;
  }
  if (first == INT64_MAX) first = 0;
  for (size_t i = 0; i < m->nfiles; i++) {
    m->files[i].included = 1;
    m->files[i].delta_ns = m->files[i].offset_ns - first + lo;
  }
}
