/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the trace file (trace_out.h). */
#include "writer/trace_out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "log/log.h"
#include "session/session.h"
#include "util/safefile.h"
#include "writer/writer_state.h"

#define FLUSH_BYTES (1u << 20)
#define NS_PENDING_MAX (4u << 20) /* bytes held while the file takes none */

static struct {
  int fd;
  int dirfd, dirfd_open;   /* the dump directory, opened once */
  char name[NAME_MAX + 1]; /* the trace file's name in it */
  char tag[24]; /* what the name took after ncclscope-<host>-<pid>: "" or "-<n>", n a uint64 (ns_trace_out_stem) */
  ns_buf pending;          /* bytes the file did not take yet (disk full): written first at the next flush */
  int write_failing;       /* the last write failed (one warning per episode) */
  int oom_warned;
  uint64_t last_flush_ns;
} T;

/* The dump directory is opened once (O_DIRECTORY|O_NOFOLLOW: a symlink
 * planted there is refused) and every file of the session is made in it with
 * openat, so nothing swapped in after the check is followed. */
int ns_trace_out_open(char* why, size_t whylen) {
  const char* dir = ns_sess.cfg.dump_dir;
  unsigned fmode = ns_sess.cfg.file_mode ? ns_sess.cfg.file_mode : NS_FILE_MODE_DEFAULT;
  int dirfd = ns_dir_open(dir, ns_dir_mode_for(fmode), 1);
  if (dirfd < 0) {
    snprintf(why, whylen, "cannot create the dump directory %s: %s", dir,
             errno == ELOOP ? "it is a symbolic link (refused: it could point anywhere)" : strerror(errno));
    return -1;
  }
  char name[NAME_MAX + 1], stem[NAME_MAX + 1];
  memset(&T, 0, sizeof T); /* no tag: the plain stem */
  ns_trace_out_stem("ncclscope", stem, sizeof stem);
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
  T.fd = fd;
  T.dirfd = dirfd;
  T.dirfd_open = 1;
  snprintf(T.name, sizeof T.name, "%s", name);
  /* name = stem + tag + suffix (ns_create_unique): the tag every other file of the process takes */
  size_t stem_len = strlen(stem), tag_len = strlen(name) - stem_len - strlen(NS_TRACE_FILE_SUFFIX);
  snprintf(T.tag, sizeof T.tag, "%.*s", (int)tag_len, name + stem_len);
  return 0;
}

int ns_trace_out_dirfd(void) { return T.dirfd_open ? T.dirfd : -1; }

int ns_trace_out_stem(const char* kind, char* out, size_t outlen) {
  int n = snprintf(out, outlen, "%s-%.64s-%u%s", kind, ns_sess.hostname, ns_sess.pid, T.tag);
  return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

void ns_trace_out_unlink(void) {
  if (T.dirfd_open && T.name[0]) unlinkat(T.dirfd, T.name, 0);
}

/* Writes as much of [p, p + n) as the file takes. Returns the bytes written;
 * *err is the errno of a failed write (0: all written). */
static size_t write_some(const uint8_t* p, size_t n, int* err) {
  size_t done = 0;
  *err = 0;
  while (done < n) {
    ssize_t k = write(T.fd, p + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      *err = k < 0 ? errno : ENOSPC;
      break;
    }
    done += (size_t)k;
  }
  ns_ws.bytes_written += done;
  return done;
}

/* The batch goes to the file with one write. When the file does not take
 * it (a full disk or quota, EFBIG, EIO) what was not written waits in
 * T.pending, at most NS_PENDING_MAX bytes, and is written first at the next
 * flush: once space returns the trace goes on where it stopped, block
 * boundaries intact. A batch that does not fit in the pending buffer is
 * dropped whole (whole blocks: the reader sees a sequence gap) and counted
 * in bytes_lost, which the COUNTERS block and the last warning report. */
void ns_trace_out_flush(void) {
  ns_buf* out = &ns_ws.out;
  int err = 0;
  if (out->failed) {
    ns_ws.bytes_lost += out->len;
    if (!T.oom_warned) ns_log_warn("out of memory encoding the trace; data lost (counted)");
    T.oom_warned = 1;
  } else if (T.pending.len == 0) {
    size_t done = write_some(out->data, out->len, &err);
    if (err) ns_buf_put(&T.pending, out->data + done, out->len - done);
  } else {
    if (T.pending.len + out->len <= NS_PENDING_MAX) ns_buf_put(&T.pending, out->data, out->len);
    else ns_ws.bytes_lost += out->len, ns_ws.blocks_dropped++;
    size_t done = write_some(T.pending.data, T.pending.len, &err);
    memmove(T.pending.data, T.pending.data + done, T.pending.len - done);
    T.pending.len -= done;
  }
  if (T.pending.failed) { /* no memory to hold it: lost */
    ns_ws.bytes_lost += T.pending.len;
    ns_buf_free(&T.pending);
    memset(&T.pending, 0, sizeof T.pending);
  }
  if (err && !T.write_failing) {
    T.write_failing = 1;
    ns_ws.write_errors++;
    ns_log_warn("writing %s failed: %s; up to %u KiB are held and written when the file takes them again, "
                "the rest is dropped and counted", ns_sess.trace_path, strerror(err), NS_PENDING_MAX / 1024);
  } else if (!err && T.write_failing) {
    T.write_failing = 0;
    ns_log_warn("writing %s works again; %llu bytes were lost meanwhile (counted in the trace)", ns_sess.trace_path,
                (unsigned long long)ns_ws.bytes_lost);
  }
  ns_buf_reset(out);
  T.last_flush_ns = ns_mono_ns();
  ns_ws.lifecycle_pending = 0;
}

int ns_trace_out_due(void) { return ns_ws.lifecycle_pending || ns_ws.out.len >= FLUSH_BYTES; }

uint64_t ns_trace_out_since_flush(uint64_t now_ns) { return now_ns - T.last_flush_ns; }

size_t ns_trace_out_held(void) { return T.pending.len; }

void ns_trace_out_warn_incomplete(void) {
  if (T.pending.len || ns_ws.bytes_lost)
    ns_log_warn("the trace %s is incomplete: %llu bytes could not be written%s", ns_sess.trace_path,
                (unsigned long long)(ns_ws.bytes_lost + T.pending.len),
                T.pending.len ? " (the file still takes nothing: its counters and end marker are among them)"
                              : " (counted in its COUNTERS block)");
}

void ns_trace_out_close(void) {
  if (T.fd > 0) close(T.fd);
  if (T.dirfd_open) close(T.dirfd);
  ns_buf_free(&T.pending);
  memset(&T, 0, sizeof T);
}

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
void ns_trace_out_anchor(void) {
  uint64_t mono;
  int64_t real;
  clock_pair(&mono, &real);
  size_t at = ns_block_begin(&ns_ws.out);
  ns_props_u64(&ns_ws.out, NS_P_TS, mono);
  ns_props_i64(&ns_ws.out, NS_P_REALTIME_OFFSET_NS, real - (int64_t)mono);
  ns_block_end(&ns_ws.out, at, NS_BLOCK_ANCHOR, ns_ws.seq++);
}

void ns_trace_out_begin(void) {
  ns_buf* out = &ns_ws.out;
  ns_file_header h;
  ns_file_header_init(&h);
  ns_buf_put(out, &h, sizeof h);
  size_t at = ns_block_begin(out);
  ns_props_u64(out, NS_P_PID, ns_sess.pid);
  ns_props_str(out, NS_P_HOSTNAME, ns_sess.hostname, strlen(ns_sess.hostname));
  uint64_t mono;
  int64_t real;
  clock_pair(&mono, &real);
  ns_props_u64(out, NS_P_START_MONO_NS, mono);
  ns_props_i64(out, NS_P_REALTIME_OFFSET_NS, real - (int64_t)mono);
  const char* src = ns_sess.clock.use_tsc ? "tsc" : "clock_gettime";
  ns_props_str(out, NS_P_CLOCK_SOURCE, src, strlen(src));
  ns_props_f64(out, NS_P_TSC_HZ, ns_clock_hz(&ns_sess.clock));
  ns_props_str(out, NS_P_PLUGIN_VERSION, NCCLSCOPE_VERSION, strlen(NCCLSCOPE_VERSION));
  const char* job = ns_sess.cfg.job.slurm_job;
  if (*job) ns_props_str(out, NS_P_SLURM_JOB, job, strlen(job));
  ns_block_end(out, at, NS_BLOCK_PROCESS, ns_ws.seq++);
  ns_ws.lifecycle_pending = 1;
  T.last_flush_ns = ns_mono_ns();
}

void ns_trace_out_end(unsigned how, int sig) {
  size_t at = ns_block_begin(&ns_ws.out);
  ns_props_u64(&ns_ws.out, NS_P_END_HOW, how);
  if (how == NS_END_SIGNAL) ns_props_u64(&ns_ws.out, NS_P_END_SIGNAL, (uint64_t)sig);
  ns_block_end(&ns_ws.out, at, NS_BLOCK_END, ns_ws.seq++);
}
