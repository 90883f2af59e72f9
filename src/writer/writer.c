/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread.
 *
 * Every poll period it:
 *  1. takes the COMM_INIT and COMM_FINI work queued by init/finalize,
 *  2. writes COMM_INIT blocks, then drains every ring into one EVENTS block
 *     per ring (preceded by a THREAD block for a new ring and a STRINGS
 *     block for new strings),
 *  3. writes the COMM_FINI blocks taken in step 1 (their events were in the
 *     rings before finalize queued them, so step 2 drained them),
 *  4. closes the open events NCCL will not stop (open_events.h: never-stopped
 *     ProxyOps, max age, too many open, a communicator's end),
 *  5. writes the batch with one write() when a second passed, the batch is
 *     large, or lifecycle blocks are in it.
 * It owns the trace file, the string table and the open events, and
 * feeds every record it encodes into the process's analysis
 * (analysis_feed.c): a CLOCKFIT block per communicator at each timed flush
 * when its fit moved and always right before its COMM_FINI; the summary
 * after the END block of the last finalize.
 */
#include "writer/writer.h"

#include "writer/analysis_feed.h"
#include "writer/detail.h"
#include "writer/detail_out.h"
#include "writer/open_events.h"
#include "writer/restarts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/context.h"
#include "ncclscope/analysis.h" /* ns_summary_recording */
#include "clock/clock.h"
#include "log/log.h"
#include "ring/ring.h"
#include "util/safefile.h"

#define FLUSH_BYTES (1u << 20)
#define NS_PENDING_MAX (4u << 20) /* bytes held while the file takes none */

typedef struct ctl {
  struct ctl* next;
  uint32_t ctx;
  uint64_t tick;
  uint32_t tid;
} ctl;

static struct {
  pthread_t thread;
  int started;
  _Atomic uint32_t tid; /* the writer's kernel tid: relaxed, read after the join */
  pthread_mutex_t lock; /* guards stop, inits, finis */
  pthread_cond_t cond;
  int stop;
  unsigned end_how; /* NS_END_*: set with stop */
  int end_signal;
  ctl *inits, **inits_tail, *finis, **finis_tail;
  int fd;
  int dirfd, dirfd_open; /* the dump directory, opened once */
  char name[NAME_MAX + 1]; /* the trace file's name in it */
  ns_buf out, ev, sb;
  ns_strtab* strs;
  uint64_t seq;
  int lifecycle_pending;
  uint32_t* ring_serial_seen;
  uint8_t* ring_shedding; /* by ring index: its ProxySteps skip the analysis (shedding_now) */
  int shedding;           /* the ring being drained sheds: its ProxySteps that start now skip it */
  uint32_t ctx_serial[NS_MAX_CONTEXTS];
  uint64_t ctx_events[NS_MAX_CONTEXTS][NS_EV_COUNT];
  uint64_t ctx_fit_samples[NS_MAX_CONTEXTS]; /* samples of the last CLOCKFIT written */
  uint64_t events[NS_EV_COUNT];
  uint64_t pxn_events, parent_lost, state_repeats;
  uint64_t steps_unanalysed; /* ProxySteps recorded, not fed to the analysis (shedding_now) */
  uint64_t closed[NS_CLOSE_REASONS];
  uint64_t bytes_written, write_errors, bytes_lost, blocks_dropped;
  ns_buf pending;    /* bytes the file did not take yet (disk full): written first at the next flush */
  int write_failing; /* the last write failed (one warning per episode) */
  int oom_warned;
  uint64_t last_flush_ns;
  /* drain state */
  ns_event_encoder enc;
  ns_strings_encoder senc;
  int ev_open, st_open;
  unsigned max_fill; /* the fullest ring of the last pass, percent: decides the next wait */
  uint32_t ev_tid, ev_ring; /* the thread and ring of the block W.ev holds */
  /* the writer's own records (events it closed), outside any ring's block */
  ns_event_encoder own_enc;
  ns_buf own;
  int own_open;
} W;

/* ---- file ---- */

/* The dump directory is opened once (O_DIRECTORY|O_NOFOLLOW: a symlink
 * planted there is refused) and every file of the session is made in it with
 * openat, so nothing swapped in after the check is followed. */
int ns_writer_open(char* why, size_t whylen) {
  const char* dir = ns_sess.cfg.dump_dir;
  unsigned fmode = ns_sess.cfg.file_mode ? ns_sess.cfg.file_mode : NS_FILE_MODE_DEFAULT;
  int dirfd = ns_dir_open(dir, ns_dir_mode_for(fmode), 1);
  if (dirfd < 0) {
    snprintf(why, whylen, "cannot create the dump directory %s: %s", dir,
             errno == ELOOP ? "it is a symbolic link (refused: it could point anywhere)" : strerror(errno));
    return -1;
  }
  char name[NAME_MAX + 1], stem[NAME_MAX + 1];
  snprintf(stem, sizeof stem, "ncclscope-%.64s-%u", ns_sess.hostname, ns_sess.pid);
  /* O_EXCL|O_NOFOLLOW: never an existing file, never through a link. A
   * reload of the plugin in the same process, or a process with the same
   * pid in another PID namespace: a new file, never an overwrite. */
  int fd = ns_create_unique(dirfd, stem, NS_TRACE_FILE_SUFFIX, ns_mono_ns(), O_WRONLY, fmode, name, sizeof name);
  int len = snprintf(ns_sess.trace_path, sizeof ns_sess.trace_path, "%s/%s", dir, name);
  if (len < 0 || (size_t)len >= sizeof ns_sess.trace_path) snprintf(ns_sess.trace_path, sizeof ns_sess.trace_path, "%s", name);
  if (fd < 0) {
    snprintf(why, whylen, "cannot create the trace file %s: %s", ns_sess.trace_path, strerror(errno));
    close(dirfd);
    return -1;
  }
  memset(&W, 0, sizeof W);
  W.fd = fd;
  W.dirfd = dirfd;
  W.dirfd_open = 1;
  snprintf(W.name, sizeof W.name, "%s", name);
  return 0;
}

int ns_writer_dump_dirfd(void) { return W.dirfd_open ? W.dirfd : -1; }

void ns_writer_discard(void) {
  if (W.dirfd_open && W.name[0]) unlinkat(W.dirfd, W.name, 0);
  ns_writer_stop(NS_END_FINALIZE);
}

/* Writes as much of [p, p + n) as the file takes. Returns the bytes written;
 * *err is the errno of a failed write (0: all written). */
static size_t write_some(const uint8_t* p, size_t n, int* err) {
  size_t done = 0;
  *err = 0;
  while (done < n) {
    ssize_t k = write(W.fd, p + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      *err = k < 0 ? errno : ENOSPC;
      break;
    }
    done += (size_t)k;
  }
  W.bytes_written += done;
  return done;
}

/* The batch goes to the file with one write. When the file does not take
 * it (a full disk or quota, EFBIG, EIO) what was not written waits in
 * W.pending, at most NS_PENDING_MAX bytes, and is written first at the next
 * flush: once space returns the trace goes on where it stopped, block
 * boundaries intact. A batch that does not fit in the pending buffer is
 * dropped whole (whole blocks: the reader sees a sequence gap) and counted
 * in bytes_lost, which the COUNTERS block and the last warning report. */
static void flush_out(void) {
  int err = 0;
  if (W.out.failed) {
    W.bytes_lost += W.out.len;
    if (!W.oom_warned) ns_log_warn("out of memory encoding the trace; data lost (counted)");
    W.oom_warned = 1;
  } else if (W.pending.len == 0) {
    size_t done = write_some(W.out.data, W.out.len, &err);
    if (err) ns_buf_put(&W.pending, W.out.data + done, W.out.len - done);
  } else {
    if (W.pending.len + W.out.len <= NS_PENDING_MAX) ns_buf_put(&W.pending, W.out.data, W.out.len);
    else W.bytes_lost += W.out.len, W.blocks_dropped++;
    size_t done = write_some(W.pending.data, W.pending.len, &err);
    memmove(W.pending.data, W.pending.data + done, W.pending.len - done);
    W.pending.len -= done;
  }
  if (W.pending.failed) { /* no memory to hold it: lost */
    W.bytes_lost += W.pending.len;
    ns_buf_free(&W.pending);
    memset(&W.pending, 0, sizeof W.pending);
  }
  if (err && !W.write_failing) {
    W.write_failing = 1;
    W.write_errors++;
    ns_log_warn("writing %s failed: %s; up to %u KiB are held and written when the file takes them again, "
                "the rest is dropped and counted", ns_sess.trace_path, strerror(err), NS_PENDING_MAX / 1024);
  } else if (!err && W.write_failing) {
    W.write_failing = 0;
    ns_log_warn("writing %s works again; %llu bytes were lost meanwhile (counted in the trace)", ns_sess.trace_path,
                (unsigned long long)W.bytes_lost);
  }
  ns_buf_reset(&W.out);
  W.last_flush_ns = ns_mono_ns();
  W.lifecycle_pending = 0;
}

/* ---- lifecycle blocks ---- */

/* CLOCK_MONOTONIC and CLOCK_REALTIME at one instant: the realtime read
 * between two monotonic reads, the monotonic taken at their midpoint; of 3
 * tries the one with the smallest gap (a preemption between the reads
 * would otherwise cost its length). */
static void clock_pair(uint64_t* mono, int64_t* real) {
  uint64_t best_gap = UINT64_MAX;
  *mono = 0; /* the first try always replaces these (a gap is below UINT64_MAX) */
  *real = 0;
  for (int i = 0; i < 3; i++) {
    uint64_t a = ns_mono_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t b = ns_mono_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      *mono = a + (b - a) / 2;
      *real = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
    }
  }
}

/* An ANCHOR block (format 1.1): the readers align hosts over these, so a
 * CLOCK_REALTIME step or a monotonic clock drifting against it during the
 * run shows (the PROCESS block holds only the first). */
static void emit_anchor(void) {
  uint64_t mono;
  int64_t real;
  clock_pair(&mono, &real);
  size_t at = ns_block_begin(&W.out);
  ns_props_u64(&W.out, NS_P_TS, mono);
  ns_props_i64(&W.out, NS_P_REALTIME_OFFSET_NS, real - (int64_t)mono);
  ns_block_end(&W.out, at, NS_BLOCK_ANCHOR, W.seq++);
}

static void write_process_block(void) {
  ns_file_header h;
  ns_file_header_init(&h);
  ns_buf_put(&W.out, &h, sizeof h);
  size_t at = ns_block_begin(&W.out);
  ns_props_u64(&W.out, NS_P_PID, ns_sess.pid);
  ns_props_str(&W.out, NS_P_HOSTNAME, ns_sess.hostname, strlen(ns_sess.hostname));
  uint64_t mono;
  int64_t real;
  clock_pair(&mono, &real);
  ns_props_u64(&W.out, NS_P_START_MONO_NS, mono);
  ns_props_i64(&W.out, NS_P_REALTIME_OFFSET_NS, real - (int64_t)mono);
  const char* src = ns_sess.clock.use_tsc ? "tsc" : "clock_gettime";
  ns_props_str(&W.out, NS_P_CLOCK_SOURCE, src, strlen(src));
  ns_props_f64(&W.out, NS_P_TSC_HZ, ns_clock_hz(&ns_sess.clock));
  ns_props_str(&W.out, NS_P_PLUGIN_VERSION, NCCLSCOPE_VERSION, strlen(NCCLSCOPE_VERSION));
  const char* job = ns_sess.cfg.job.slurm_job;
  if (*job) ns_props_str(&W.out, NS_P_SLURM_JOB, job, strlen(job));
  ns_block_end(&W.out, at, NS_BLOCK_PROCESS, W.seq++);
  W.lifecycle_pending = 1;
}

static ctl* take(ctl** head, ctl*** tail) {
  ctl* l = *head;
  *head = NULL;
  *tail = head;
  return l;
}

static void emit_inits(ctl* l) {
  while (l) {
    ctl* next = l->next;
    ns_context* c = &ns_ctx_table[l->ctx];
    size_t at = ns_block_begin(&W.out);
    ns_props_u64(&W.out, NS_P_COMM, c->serial);
    ns_props_u64(&W.out, NS_P_COMM_ID, c->comm_id);
    ns_props_i64(&W.out, NS_P_RANK, c->rank);
    ns_props_u64(&W.out, NS_P_NRANKS, (uint64_t)(c->nranks < 0 ? 0 : c->nranks));
    ns_props_u64(&W.out, NS_P_NNODES, (uint64_t)(c->nnodes < 0 ? 0 : c->nnodes));
    if (c->has_name) ns_props_str(&W.out, NS_P_COMM_NAME, c->name, strlen(c->name));
    ns_props_u64(&W.out, NS_P_ABI_VERSION, (uint64_t)c->abi_version);
    ns_props_u64(&W.out, NS_P_EVENT_MASK, c->mask);
    ns_props_str(&W.out, NS_P_GPU_UUID, c->gpu_uuid, strlen(c->gpu_uuid));
    ns_props_u64(&W.out, NS_P_TS, ns_clock_to_ns(&ns_sess.clock, c->init_tick));
    ns_props_u64(&W.out, NS_P_TID, c->init_tid);
    ns_props_u64(&W.out, NS_P_CTX_ADDR, (uint64_t)(uintptr_t)c);
    ns_block_end(&W.out, at, NS_BLOCK_COMM_INIT, W.seq++);
    W.ctx_serial[l->ctx] = c->serial;
    memset(W.ctx_events[l->ctx], 0, sizeof W.ctx_events[l->ctx]);
    W.ctx_fit_samples[l->ctx] = 0;
    ns_feed_comm(c);
    W.lifecycle_pending = 1;
    free(l);
    l = next;
  }
}

static void take_and_emit_inits(void) {
  pthread_mutex_lock(&W.lock);
  ctl* l = take(&W.inits, &W.inits_tail);
  pthread_mutex_unlock(&W.lock);
  emit_inits(l);
}

static void on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx_index, unsigned reason);
static void own_flush(void);

static void emit_finis(ctl* l) {
  while (l) {
    ctl* next = l->next;
    ns_context* c = &ns_ctx_table[l->ctx];
    /* Its events still open end here, before its COMM_FINI. */
    ns_open_release_context(l->ctx, on_close, NULL);
    own_flush();
    ns_feed_comm_end(c->serial);
    /* The exporter attaches the last CLOCKFIT seen before COMM_FINI. */
    ns_feed_clockfit(&W.out, &W.seq, c->serial, 1, &W.ctx_fit_samples[l->ctx]);
    size_t at = ns_block_begin(&W.out);
    ns_props_u64(&W.out, NS_P_COMM, c->serial);
    ns_props_u64(&W.out, NS_P_TS, ns_clock_to_ns(&ns_sess.clock, l->tick));
    ns_props_u64(&W.out, NS_P_TID, l->tid);
    uint64_t ev = 0, dr = 0;
    for (int t = 0; t < NS_EV_COUNT; t++) {
      uint64_t d = atomic_load_explicit(&c->dropped[t], memory_order_relaxed);
      ev += W.ctx_events[l->ctx][t];
      dr += d;
      if (W.ctx_events[l->ctx][t]) ns_props_u64(&W.out, NS_P_TYPE_EVENTS_BASE + t, W.ctx_events[l->ctx][t]);
      if (d) ns_props_u64(&W.out, NS_P_TYPE_DROPPED_BASE + t, d);
    }
    ns_props_u64(&W.out, NS_P_EVENTS, ev);
    ns_props_u64(&W.out, NS_P_DROPPED, dr);
    ns_block_end(&W.out, at, NS_BLOCK_COMM_FINI, W.seq++);
    W.lifecycle_pending = 1;
    W.ctx_serial[l->ctx] = 0;
    memset((void*)c->dropped, 0, sizeof c->dropped);
    /* C1: release: our reads of the entry happen before init reuses it. */
    atomic_store_explicit(&c->state, NS_CTX_FREE, memory_order_release);
    free(l);
    l = next;
  }
}

static void emit_counters(void) {
  size_t at = ns_block_begin(&W.out);
  uint64_t ev = 0, dr_ring = 0;
  for (int t = 0; t < NS_EV_COUNT; t++) {
    uint64_t ring_t = 0;
    for (uint32_t i = 0; i < ns_ring_pool_count(); i++)
      ring_t += atomic_load_explicit(&ns_ring_pool_get(i)->dropped[t], memory_order_relaxed);
    uint64_t u = atomic_load_explicit(&ns_cnt.dropped_unringed[t], memory_order_relaxed);
    ev += W.events[t];
    dr_ring += ring_t + u; /* events of a thread that got no ring count as ring drops */
    if (W.events[t]) ns_props_u64(&W.out, NS_P_TYPE_EVENTS_BASE + t, W.events[t]);
    if (ring_t + u) ns_props_u64(&W.out, NS_P_TYPE_DROPPED_BASE + t, ring_t + u);
  }
  ns_props_u64(&W.out, NS_P_EVENTS, ev);
  ns_props_u64(&W.out, NS_P_DROPPED, dr_ring);
  ns_props_u64(&W.out, NS_P_DROPPED_RING, dr_ring);
  /* Handles carry their id: no start is lost for want of one (the field stays for readers). */
  ns_props_u64(&W.out, NS_P_DROPPED_HANDLES, 0);
  ns_props_u64(&W.out, NS_P_BAD_HANDLES, atomic_load_explicit(&ns_cnt.bad_handles, memory_order_relaxed));
  ns_props_u64(&W.out, NS_P_PXN_EVENTS, W.pxn_events);
  ns_props_u64(&W.out, NS_P_PARENT_LOST, W.parent_lost);
  ns_props_u64(&W.out, NS_P_PARENTS_LATE, 0); /* a handle carries its parent's id: none is found late */
  ns_props_u64(&W.out, NS_P_STALE_HANDLES, atomic_load_explicit(&ns_cnt.stale_handles, memory_order_relaxed));
  ns_props_u64(&W.out, NS_P_DOUBLE_STOPS, atomic_load_explicit(&ns_cnt.double_stops, memory_order_relaxed));
  ns_props_u64(&W.out, NS_P_LATE_STATES, atomic_load_explicit(&ns_cnt.late_states, memory_order_relaxed));
  ns_props_u64(&W.out, NS_P_STATE_REPEATS, W.state_repeats);
  ns_props_u64(&W.out, NS_P_STEPS_UNANALYSED, W.steps_unanalysed);
  for (unsigned r = 1; r < NS_CLOSE_REASONS; r++)
    if (W.closed[r]) ns_props_u64(&W.out, NS_P_CLOSED_BASE + r, W.closed[r]);
  ns_props_u64(&W.out, NS_P_WRITE_ERRORS, W.write_errors);
  ns_props_u64(&W.out, NS_P_BYTES_WRITTEN, W.bytes_written + W.pending.len + W.out.len);
  ns_props_u64(&W.out, NS_P_BYTES_LOST, W.bytes_lost);
  ns_detail_out_counters(&W.out, ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()));
  ns_block_end(&W.out, at, NS_BLOCK_COUNTERS, W.seq++);
}

/* ---- drops, for the metrics (writer thread) ---- */

void ns_writer_drops(uint64_t* ring, uint64_t* closed) {
  uint64_t r = 0;
  for (int t = 0; t < NS_EV_COUNT; t++) {
    for (uint32_t i = 0; i < ns_ring_pool_count(); i++)
      r += atomic_load_explicit(&ns_ring_pool_get(i)->dropped[t], memory_order_relaxed);
    r += atomic_load_explicit(&ns_cnt.dropped_unringed[t], memory_order_relaxed);
  }
  *ring = r;
  memcpy(closed, W.closed, sizeof W.closed); /* NS_CLOSE_REASONS entries */
}

void ns_writer_recording(ns_summary_recording* out) {
  uint64_t closed[NS_CLOSE_REASONS];
  memset(out, 0, sizeof *out);
  for (int t = 0; t < NS_EV_COUNT; t++) out->events += W.events[t];
  ns_writer_drops(&out->records_dropped, closed);
  out->bytes_lost = W.bytes_lost + W.pending.len; /* what the file still refuses at the end is lost too */
  out->blocks_lost = W.blocks_dropped;
  out->write_errors = W.write_errors;
  out->steps_unanalysed = W.steps_unanalysed;
}

uint64_t ns_writer_comm_dropped(uint32_t serial) {
  for (uint32_t i = 0; serial && i < NS_MAX_CONTEXTS; i++) {
    if (W.ctx_serial[i] != serial) continue;
    uint64_t d = 0;
    for (int t = 0; t < NS_EV_COUNT; t++)
      d += atomic_load_explicit(&ns_ctx_table[i].dropped[t], memory_order_relaxed);
    return d;
  }
  return 0;
}

/* ---- draining ---- */

/* An API event of a graph capture: its handle comes back as a parent at
 * every replay. */
static int graph_captured_api(const ns_record* rec) {
  switch (rec->type) {
    case NS_EV_GROUP_API: return rec->num[NS_GROUP_API_GRAPH_CAPTURED] != 0;
    case NS_EV_COLL_API: return rec->num[NS_COLL_API_GRAPH_CAPTURED] != 0;
    case NS_EV_P2P_API: return rec->num[NS_P2P_API_GRAPH_CAPTURED] != 0;
    default: return 0;
  }
}

/* One record into the block of the ring being drained (opened on demand),
 * the flight recorder and, unless its event skips it (shedding_now), the
 * analysis. */
static void put_record(const ns_record* rec, int analysed) {
  if (!W.ev_open) {
    ns_events_begin(&W.enc, &W.ev, W.ev_tid, W.ev_ring, rec->ts, rec->id);
    W.ev_open = 1;
  }
  ns_events_put(&W.enc, rec);
  if (analysed) ns_feed_record(rec);
  else ns_feed_unanalysed(rec);
}

/* An NS_ST_REPEATED record: the event's previous state came `n` more times. */
static ns_record repeated(const ns_record* at, uint64_t n) {
  ns_record r = ns_record_make(NS_REC_STATE, at->type, at->comm, at->ts, at->id, 0);
  r.tid = at->tid;
  r.state = NS_ST_REPEATED;
  r.flags = NS_RF_HAS_ARG;
  r.arg = n;
  W.state_repeats += n;
  return r;
}

static ns_record closed(uint64_t id, unsigned type, uint32_t ctx_index, unsigned reason, uint64_t ts, uint32_t tid) {
  ns_record r = ns_record_make(NS_REC_STATE, (uint8_t)type,
                               ctx_index < NS_MAX_CONTEXTS ? W.ctx_serial[ctx_index] : 0, ts, id, 0);
  r.tid = tid;
  r.state = NS_ST_CLOSED;
  r.flags = NS_RF_HAS_ARG;
  r.arg = reason;
  if (reason < NS_CLOSE_REASONS) W.closed[reason]++;
  return r;
}

/* The writer's own block (events it closed by age, pressure, communicator
 * end or exit): begun on the first close, written to the output by
 * own_flush before anything that must follow those records. */
static void own_flush(void) {
  if (!W.own_open) return;
  ns_events_end(&W.own_enc, W.seq++);
  ns_buf_put(&W.out, W.own.data, W.own.len);
  ns_buf_reset(&W.own);
  W.own_open = 0;
}

static void on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx_index, unsigned reason) {
  (void)user;
  uint32_t tid = atomic_load_explicit(&W.tid, memory_order_relaxed);
  ns_record r = closed(id, type, ctx_index, reason, ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()), tid);
  if (type == NS_EV_PROXY_OP) ns_restarts_parent_stopped(id);
  if (!W.own_open) {
    ns_events_begin(&W.own_enc, &W.own, tid, 0, r.ts, r.id);
    W.own_open = 1;
  }
  ns_events_put(&W.own_enc, &r);
  if (analysed) ns_feed_record(&r);
  else ns_feed_unanalysed(&r);
}

/* The origin pid of PXN event id: held open or remembered by the writer, or
 * still in a ring it has not drained (a NetPlugin event's helper thread may
 * be drained before the proxy thread that started its ProxyStep). Its ring
 * is the one whose serial the id carries; a PXN child's own START names its
 * parent in turn (depth: NetPlugin, ProxyStep, ProxyOp). */
static uint32_t origin_pid_of(uint64_t id, int depth) {
  uint32_t pid = ns_open_origin_pid(id);
  if (pid || depth > 2) return pid;
  for (uint32_t i = 0; i < ns_ring_pool_count(); i++) {
    ns_ring* r = ns_ring_pool_get(i);
    /* has_data's acquire of head (R2) first: the serial was written before the ring's first publish */
    if (!ns_ring_has_data(r) || (r->serial & 0xFFFFu) != ((id >> 40) & 0xFFFFu)) continue;
    const uint64_t* e = ns_ring_find_start(r, id);
    if (!e || !(NS_ENT_FLAGS(e[0]) & NS_RF_PXN)) continue;
    pid = (uint32_t)(e[3] >> 32);
    if (!pid && !(NS_ENT_FLAGS(e[0]) & NS_RF_PARENT_RAW) && e[4]) pid = origin_pid_of(e[4], depth + 1);
    return pid;
  }
  return 0;
}

/* A START: a ProxyStep started again closes the earlier one; a child of a
 * PXN event takes its parent's origin pid; the event is held open, marked
 * when it skips the analysis (a ProxyStep while its ring sheds). Returns
 * whether its records go to the analysis. */
static int on_start_entry(ns_record* rec, unsigned flags, unsigned ctxi) {
  rec->flags = (uint16_t)flags;
  unsigned type = rec->type;
  int analysed = !(type == NS_EV_PROXY_STEP && W.shedding);
  W.events[type]++;
  W.steps_unanalysed += !analysed;
  if (ctxi < NS_MAX_CONTEXTS) W.ctx_events[ctxi][type]++;
  if (flags & NS_RF_PXN) W.pxn_events++;
  if (flags & NS_RF_PARENT_LOST) W.parent_lost++;
  if ((flags & NS_RF_PXN) && !(flags & NS_RF_PARENT_RAW) && !rec->origin_pid && rec->parent)
    rec->origin_pid = origin_pid_of(rec->parent, 0);
  uint32_t conn = type == NS_EV_PROXY_OP && !(flags & NS_RF_PXN)
                      ? ns_open_conn(rec->num[NS_PROXY_OP_CHANNEL], (int64_t)rec->num[NS_PROXY_OP_PEER],
                                     rec->num[NS_PROXY_OP_IS_SEND] != 0)
                      : 0;
  if (type == NS_EV_PROXY_STEP) {
    uint64_t old = ns_restarts_start(rec->parent, rec->num[NS_PROXY_STEP_STEP], rec->id, ns_open_is_open);
    uint32_t old_type;
    if (old && ns_open_close(old, &old_type)) {
      ns_record c = closed(old, NS_EV_PROXY_STEP, ctxi, NS_CLOSE_RESTARTED, rec->ts, rec->tid);
      put_record(&c, !(old_type & NS_OPEN_UNANALYSED));
    }
  }
  ns_open_started(rec->id, type | (analysed ? 0 : NS_OPEN_UNANALYSED), ctxi < NS_MAX_CONTEXTS ? ctxi : NS_OPEN_PXN,
                  rec->ts, graph_captured_api(rec), conn, rec->comm, rec->origin_pid);
  return analysed;
}

/* A STOP, STATE or REPEAT: the event's communicator, from its START. One
 * the writer saw end is not recorded: a second stop, a state after the
 * stop, a call after the writer closed it (counted). 0: drop the entry;
 * LATER_ANALYSED: record it; LATER_UNANALYSED: record it, its event skips
 * the analysis (shedding_now). */
enum { LATER_DROP, LATER_ANALYSED, LATER_UNANALYSED };
__attribute__((always_inline)) static inline int on_later_entry(ns_record* rec, unsigned kind) {
  ns_open_event* o = ns_open_find(rec->id);
  if (o) {
    int how = o->type & NS_OPEN_UNANALYSED ? LATER_UNANALYSED : LATER_ANALYSED;
    rec->comm = o->comm;
    if (kind == NS_ENT_STATE) {
      o->has_state = 1;
      if (rec->type == NS_EV_PROXY_OP && rec->state == NS_ST_PROXY_OP_IN_PROGRESS)
        ns_open_note_progress_states(o->ctx);
    } else if (kind == NS_ENT_STOP) {
      ns_open_stopped(o); /* o ends here */
    }
    return how;
  }
  if (kind == NS_ENT_REPEAT) return LATER_ANALYSED; /* counts of states recorded before the event ended */
  int ended = ns_open_ended(rec->id);
  if (ended == NS_OPEN_UNKNOWN) return LATER_ANALYSED; /* its START is in a ring not drained yet, or was forgotten */
  _Atomic uint64_t* counter = ended == NS_OPEN_CLOSED ? &ns_cnt.stale_handles
                              : kind == NS_ENT_STOP  ? &ns_cnt.double_stops
                                                     : &ns_cnt.late_states;
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  return LATER_DROP;
}

/* Zeroes a record in pieces of at most 64 bytes, which GCC writes as vector
 * stores: a memset of the whole 160 bytes (or `= {0}`) is a `rep stos`,
 * whose start-up was 6 % of the writer's time at 2 M records/s (perf). */
static inline void record_clear(ns_record* r) {
  _Static_assert(sizeof *r > 128 && sizeof *r <= 192, "record_clear: three pieces");
  memset(r, 0, 64);
  memset((char*)r + 64, 0, 64);
  memset((char*)r + 128, 0, sizeof *r - 128);
}

static void on_entry(void* user, ns_ring* r, const uint64_t* e, uint32_t nwords) {
  (void)user;
  unsigned kind = NS_ENT_KIND(e[0]), type = NS_ENT_TYPE(e[0]), flags = NS_ENT_FLAGS(e[0]);
  unsigned ctxi = NS_ENT_CTX(e[0]);
  if (type >= NS_EV_COUNT) return;
  ns_record rec;
  record_clear(&rec);
  rec.kind = (uint8_t)kind;
  rec.type = (uint8_t)type;
  rec.tid = r->tid;
  rec.ts = ns_clock_to_ns(&ns_sess.clock, e[1]);
  rec.id = e[2];
  rec.comm = (uint32_t)e[3];
  if (ctxi < NS_MAX_CONTEXTS && rec.comm && W.ctx_serial[ctxi] != rec.comm) take_and_emit_inits();
  uint64_t repeats = 0;
  int analysed;
  if (kind == NS_ENT_START) {
    const ns_type_layout* lay = &ns_type_layouts[type];
    if (nwords < NS_ENT_HEAD_WORDS + 1u + lay->nums) return;
    rec.origin_pid = (uint32_t)(e[3] >> 32);
    rec.parent = e[4];
    for (unsigned i = 0; i < lay->nums; i++) rec.num[i] = e[5 + i];
    const uint8_t* sp = (const uint8_t*)&e[5 + lay->nums];
    const uint8_t* send = (const uint8_t*)&e[nwords];
    for (unsigned i = 0; i < lay->strs && sp < send; i++) {
      uint8_t len = *sp++;
      if (len == NS_STR_NULL) continue;
      if (len > send - sp) break;
      rec.str[i] = ns_strtab_intern(W.strs, (const char*)sp, len, &W.senc, &W.sb, &W.st_open);
      sp += len;
    }
    analysed = on_start_entry(&rec, flags, ctxi);
  } else if (kind == NS_ENT_STATE) {
    if (nwords < NS_ENT_HEAD_WORDS + 1) return;
    rec.flags = (uint16_t)(flags & NS_RF_HAS_ARG);
    rec.state = (int32_t)((e[3] >> 32) & 0xFF);
    repeats = e[3] >> 40;
    rec.arg = e[4];
    int how = on_later_entry(&rec, kind);
    if (how == LATER_DROP) return;
    analysed = how == LATER_ANALYSED;
  } else if (kind == NS_ENT_STOP) {
    if (nwords < NS_ENT_STOP_WORDS) return;
    repeats = e[3] >> 32;
    int how = on_later_entry(&rec, kind);
    if (how == LATER_DROP) return;
    analysed = how == LATER_ANALYSED;
    if (type == NS_EV_PROXY_OP) ns_restarts_parent_stopped(rec.id);
  } else if (kind == NS_ENT_REPEAT) {
    if (nwords < NS_ENT_REPEAT_WORDS) return;
    int how = on_later_entry(&rec, kind);
    ns_record rep = repeated(&rec, e[3] >> 32);
    put_record(&rep, how == LATER_ANALYSED);
    return;
  } else {
    return;
  }
  if (repeats) {
    ns_record rep = repeated(&rec, repeats);
    put_record(&rep, analysed);
  }
  put_record(&rec, analysed);
}

/* Whether ring i sheds at this drain, from how full it is. The writer
 * falls behind when every record goes through the analysis (docs/
 * performance.md section 16); a full ring then drops events from the
 * trace. Before that, from NCCLSCOPE_SHED_FILL percent full until it is
 * back under half of that, the ProxySteps that start in it are recorded
 * but skip the analysis (about 40 % of the writer's instructions per
 * step), each counted (stepsNotAnalysed). A step is one or the other for
 * all its records: the mark is on its open event. The flight recorder
 * still sees every record: a hang's last steps are exact. */
static int shedding_now(uint32_t i, unsigned fill) {
  unsigned on = ns_sess.cfg.shed_fill;
  if (!on || !ns_feed_enabled()) return 0; /* without the analysis there is nothing to shed */
  W.ring_shedding[i] = fill >= on || (W.ring_shedding[i] && fill >= (on + 1) / 2);
  return W.ring_shedding[i];
}

static void drain_ring(ns_ring* r, uint32_t i) {
  /* R5: acquire pairs with the dying thread's release of DEAD: everything it
   * published is visible to the drain below. */
  uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st != NS_RING_FREE) ns_ring_prefault(r);
  if (ns_ring_has_data(r)) {
    unsigned fill = ns_ring_fill_percent(r);
    if (fill > W.max_fill) W.max_fill = fill;
    W.shedding = shedding_now(i, fill);
    if (W.ring_serial_seen && W.ring_serial_seen[i] != r->serial) {
      W.ring_serial_seen[i] = r->serial;
      size_t at = ns_block_begin(&W.out);
      ns_props_u64(&W.out, NS_P_TID, r->tid);
      ns_props_u64(&W.out, NS_P_RING, r->serial);
      ns_props_str(&W.out, NS_P_NAME, r->name, strnlen(r->name, sizeof r->name));
      ns_block_end(&W.out, at, NS_BLOCK_THREAD, W.seq++);
    }
    ns_buf_reset(&W.ev);
    ns_buf_reset(&W.sb);
    W.ev_open = W.st_open = 0;
    W.ev_tid = r->tid;
    W.ev_ring = r->serial;
    ns_ring_drain(r, on_entry, NULL);
    if (W.st_open) {
      ns_strings_end(&W.senc, W.seq++);
      ns_buf_put(&W.out, W.sb.data, W.sb.len);
    }
    if (W.ev_open) {
      ns_events_end(&W.enc, W.seq++);
      ns_buf_put(&W.out, W.ev.data, W.ev.len);
    }
  }
  if (st == NS_RING_DEAD) {
    /* R5: release: our reads of its words happen before a new owner writes. */
    atomic_store_explicit(&r->state, NS_RING_FREE, memory_order_release);
  }
}

/* ---- the thread ---- */

/* Timed flush: the fits that moved since they were last written. */
static void emit_clockfits(void) {
  if (!ns_feed_enabled()) return;
  for (uint32_t i = 0; i < NS_MAX_CONTEXTS; i++)
    if (W.ctx_serial[i]) ns_feed_clockfit(&W.out, &W.seq, W.ctx_serial[i], 0, &W.ctx_fit_samples[i]);
}

static double thread_cpu_ms(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void iteration(void) {
  uint64_t now = ns_mono_ns();
  pthread_mutex_lock(&W.lock);
  ctl* inits = take(&W.inits, &W.inits_tail);
  ctl* finis = take(&W.finis, &W.finis_tail);
  pthread_mutex_unlock(&W.lock);
  /* Re-anchor before draining: every record drained now is converted from a
   * (TSC, CLOCK_MONOTONIC) pair at most one poll period away from it. */
  ns_clock_refine(&ns_sess.clock);
  emit_inits(inits);
  uint32_t nrings = ns_ring_pool_count();
  for (uint32_t i = 0; i < nrings; i++) drain_ring(ns_ring_pool_get(i), i);
  uint64_t trace_now = ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks());
  ns_feed_tick(trace_now);
  ns_detail_out(&W.out, &W.seq, trace_now);
  emit_finis(finis);
  ns_open_run(trace_now, on_close, NULL);
  own_flush();
  int timed = now - W.last_flush_ns >= (uint64_t)ns_sess.cfg.flush_ms * 1000000u;
  if (timed) {
    emit_clockfits();
    emit_anchor();
  }
  if (W.lifecycle_pending || W.out.len >= FLUSH_BYTES || timed) flush_out();
}

/* A termination signal's request (ns_writer_signal_flush), outside W: the
 * handler may run while W is reset. seq counts requests, done the ones the
 * writer finished; final: the process dies after it (the trace ends). */
static struct {
  _Atomic uint32_t live; /* a writer thread runs and takes requests */
  _Atomic uint32_t seq, done;
  _Atomic int final_signal; /* 0: a checkpoint (the application's handler runs next) */
} S;

/* Final: every pending FINI and everything the rings hold, the events still
 * open closed, the counters, END, then the summary. */
static void finish(void) {
  iteration();
  /* After the last finalize only PXN events can be open; at exit, any. */
  unsigned how = W.end_how ? W.end_how : NS_END_FINALIZE;
  ns_open_close_all(how == NS_END_FINALIZE ? NS_CLOSE_COMM_END : NS_CLOSE_EXIT, on_close, NULL);
  own_flush();
  emit_counters();
  emit_anchor();
  size_t at = ns_block_begin(&W.out);
  ns_props_u64(&W.out, NS_P_END_HOW, how);
  if (how == NS_END_SIGNAL) ns_props_u64(&W.out, NS_P_END_SIGNAL, (uint64_t)W.end_signal);
  ns_block_end(&W.out, at, NS_BLOCK_END, W.seq++);
  flush_out();
  if (W.pending.len || W.bytes_lost)
    ns_log_warn("the trace %s is incomplete: %llu bytes could not be written%s", ns_sess.trace_path,
                (unsigned long long)(W.bytes_lost + W.pending.len),
                W.pending.len ? " (the file still takes nothing: its counters and end marker are among them)"
                              : " (counted in its COUNTERS block)");
  /* The trace is on disk (as far as the file took it) before the summary, which may fail. */
  double cpu_trace = thread_cpu_ms();
  int analysed = ns_feed_enabled();
  ns_feed_finish();
  double cpu_all = thread_cpu_ms();
  ns_log_info("writer thread CPU %.1f ms (analysis %s; summary %.1f ms)", cpu_trace, analysed ? "on" : "off",
              cpu_all - cpu_trace);
}

static void* writer_main(void* arg) {
  (void)arg;
  atomic_store_explicit(&W.tid, (uint32_t)syscall(SYS_gettid), memory_order_relaxed);
  ns_feed_open(W.strs);
  pthread_mutex_lock(&W.lock);
  while (!W.stop) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    /* A ring a quarter full at the last pass may fill faster than the
     * poll period drains it: come back after 100 us instead (the rate, not
     * the poll period, then sets how often the writer wakes). */
    uint64_t wait_ns = W.max_fill >= 25 ? 100000u : (uint64_t)ns_sess.cfg.poll_ms * 1000000u;
    W.max_fill = 0;
    uint64_t ns = (uint64_t)dl.tv_nsec + wait_ns;
    dl.tv_sec += (time_t)(ns / 1000000000u);
    dl.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&W.cond, &W.lock, &dl);
    if (W.stop) break;
    pthread_mutex_unlock(&W.lock);
    /* A signal handler waits (ns_writer_signal_flush); acquire pairs with its release. */
    uint32_t req = atomic_load_explicit(&S.seq, memory_order_acquire);
    if (req != atomic_load_explicit(&S.done, memory_order_relaxed)) {
      int sig = atomic_load_explicit(&S.final_signal, memory_order_relaxed);
      if (sig) {
        /* The process dies when the handler returns: end the trace now and
         * take no more work (no one joins this thread). */
        W.end_how = NS_END_SIGNAL;
        W.end_signal = sig;
        atomic_store_explicit(&S.live, 0, memory_order_relaxed);
        finish();
        atomic_store_explicit(&S.done, req, memory_order_release);
        return NULL;
      }
      iteration();
      flush_out(); /* a checkpoint: everything so far is on disk */
      atomic_store_explicit(&S.done, req, memory_order_release);
    } else {
      iteration();
    }
    pthread_mutex_lock(&W.lock);
  }
  pthread_mutex_unlock(&W.lock);
  atomic_store_explicit(&S.live, 0, memory_order_relaxed);
  finish();
  return NULL;
}

int ns_writer_signal_flush(int sig, int final, uint64_t timeout_ns) {
  if (!atomic_load_explicit(&S.live, memory_order_relaxed)) return 0;
  if (final) atomic_store_explicit(&S.final_signal, sig, memory_order_relaxed);
  /* Release: the writer that sees the new seq sees final_signal. */
  uint32_t req = atomic_fetch_add_explicit(&S.seq, 1, memory_order_release) + 1;
  for (uint64_t waited = 0; waited < timeout_ns; waited += 1000000u) {
    if ((int32_t)(atomic_load_explicit(&S.done, memory_order_acquire) - req) >= 0) return 1;
    struct timespec d = {0, 1000000}; /* nanosleep: async-signal-safe */
    nanosleep(&d, NULL);
  }
  return 0;
}

int ns_writer_start(void) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&W.cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&W.lock, NULL);
  W.inits_tail = &W.inits;
  W.finis_tail = &W.finis;
  W.strs = ns_strtab_new();
  W.ring_serial_seen = calloc(ns_ring_pool_count() + 1, sizeof *W.ring_serial_seen);
  W.ring_shedding = calloc(ns_ring_pool_count() + 1, 1);
  if (!W.strs || !W.ring_serial_seen || !W.ring_shedding) goto fail;
  write_process_block();
  W.last_flush_ns = ns_mono_ns();
  /* Before the first init stores NCCL's mask, which reads the decision. */
  ns_detail_open(ns_sess.cfg.detail, ns_sess.cfg.sample_ms, ns_sess.cfg.escalate_sec, ns_sess.cfg.hang_timeout_sec,
                 ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()));
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* NCCL's process signals never land on our thread */
  int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) goto fail;
  pthread_setname_np(W.thread, "ncclscope-wr");
  W.started = 1;
  atomic_store_explicit(&S.final_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&S.done, atomic_load_explicit(&S.seq, memory_order_relaxed), memory_order_relaxed);
  atomic_store_explicit(&S.live, 1, memory_order_release);
  return 0;
fail:
  ns_strtab_free(W.strs);
  free(W.ring_serial_seen);
  free(W.ring_shedding);
  W.strs = NULL;
  W.ring_serial_seen = NULL;
  W.ring_shedding = NULL;
  pthread_cond_destroy(&W.cond);
  pthread_mutex_destroy(&W.lock);
  return -1;
}

void ns_writer_stop(unsigned how) {
  if (W.started) {
    pthread_mutex_lock(&W.lock);
    W.stop = 1;
    W.end_how = how;
    pthread_cond_signal(&W.cond);
    pthread_mutex_unlock(&W.lock);
    pthread_join(W.thread, NULL);
    /* pthread_join returns when the kernel clears the thread's tid, slightly
     * before the task leaves /proc/self/task; leak checkers (NCCL's tests,
     * the simulator) look there right after dlclose. Wait for it, briefly. */
    char task[64];
    snprintf(task, sizeof task, "/proc/self/task/%u", atomic_load_explicit(&W.tid, memory_order_relaxed));
    for (int i = 0; i < 2000 && access(task, F_OK) == 0; i++) {
      struct timespec d = {0, 50000};
      nanosleep(&d, NULL);
    }
    pthread_cond_destroy(&W.cond);
    pthread_mutex_destroy(&W.lock);
  }
  for (ctl* l = W.inits; l;) {
    ctl* n = l->next;
    free(l);
    l = n;
  }
  for (ctl* l = W.finis; l;) {
    ctl* n = l->next;
    free(l);
    l = n;
  }
  if (W.fd > 0) close(W.fd);
  if (W.dirfd_open) close(W.dirfd);
  ns_buf_free(&W.out);
  ns_buf_free(&W.pending);
  ns_buf_free(&W.ev);
  ns_buf_free(&W.sb);
  ns_buf_free(&W.own);
  ns_strtab_free(W.strs);
  ns_restarts_reset();
  ns_open_reset();
  free(W.ring_serial_seen);
  free(W.ring_shedding);
  memset(&W, 0, sizeof W);
}

static void post(ctl*** tail, uint32_t ctx, uint64_t tick, uint32_t tid) {
  ctl* c = calloc(1, sizeof *c);
  if (!c) return; /* the block is lost; the trace stays readable */
  c->ctx = ctx;
  c->tick = tick;
  c->tid = tid;
  pthread_mutex_lock(&W.lock);
  **tail = c;
  *tail = &c->next;
  pthread_mutex_unlock(&W.lock);
}

void ns_writer_post_init(uint32_t ctx_index) {
  if (W.started) post(&W.inits_tail, ctx_index, 0, 0);
}

void ns_writer_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid) {
  if (W.started) post(&W.finis_tail, ctx_index, tick, tid);
}
