/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the trace file (trace_out.h): its directory, its name and the
 * blocks the writer adds of its own; its bytes go through
 * sinks/trace_file.h. */
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
#include "sinks/trace_file.h"
#include "util/safefile.h"
#include "writer/writer_state.h"

#define FLUSH_BYTES (1u << 20)

static struct {
  ns_trace_file file;
  int dirfd, dirfd_open;   /* the dump directory, opened once */
  char name[NAME_MAX + 1]; /* the trace file's name in it */
  char tag[24]; /* what the name took after ncclscope-<host>-<pid>: "" or "-<n>", n a uint64 (ns_trace_out_stem) */
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
  ns_trace_file_open(&T.file, fd, ns_sess.trace_path);
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

void ns_trace_out_flush(void) {
  ns_trace_file_flush(&T.file, &ns_ws.out);
  T.last_flush_ns = ns_mono_ns();
  ns_ws.lifecycle_pending = 0;
}

int ns_trace_out_due(void) { return ns_ws.lifecycle_pending || ns_ws.out.len >= FLUSH_BYTES; }

uint64_t ns_trace_out_since_flush(uint64_t now_ns) { return now_ns - T.last_flush_ns; }

size_t ns_trace_out_held(void) { return ns_trace_file_held(&T.file); }

const ns_trace_file_counts* ns_trace_out_counts(void) { return &T.file.counts; }

void ns_trace_out_warn_incomplete(void) { ns_trace_file_warn_incomplete(&T.file); }

void ns_trace_out_close(void) {
  ns_trace_file_close(&T.file);
  if (T.dirfd_open) close(T.dirfd);
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
