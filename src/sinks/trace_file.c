/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the trace file's bytes (trace_file.h). */
#include "sinks/trace_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"

void ns_trace_file_open(ns_trace_file* f, int fd, const char* path) {
  memset(f, 0, sizeof *f);
  f->fd = fd;
  f->path = path;
}

/* Writes as much of [p, p + n) as the file takes. Returns the bytes written;
 * *err is the errno of a failed write (0: all written). */
static size_t write_some(ns_trace_file* f, const uint8_t* p, size_t n, int* err) {
  size_t done = 0;
  *err = 0;
  while (done < n) {
    ssize_t k = write(f->fd, p + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      *err = k < 0 ? errno : ENOSPC;
      break;
    }
    done += (size_t)k;
  }
  f->counts.written += done;
  return done;
}

/* The batch goes to the file with one write. When the file does not take
 * it, what was not written waits in f->held, at most NS_TRACE_HELD_MAX
 * bytes, and is written first at the next flush: once space returns the
 * trace goes on where it stopped, block boundaries intact. A batch that
 * does not fit in what may be held is dropped whole (whole blocks: the
 * reader sees a sequence gap) and counted in `lost`, which the COUNTERS
 * block and the last warning report. */
void ns_trace_file_flush(ns_trace_file* f, ns_buf* out) {
  int err = 0;
  if (out->failed) {
    f->counts.lost += out->len;
    if (!f->oom_warned) ns_log_warn("out of memory encoding the trace; data lost (counted)");
    f->oom_warned = 1;
  } else if (f->held.len == 0) {
    size_t done = write_some(f, out->data, out->len, &err);
    if (err) ns_buf_put(&f->held, out->data + done, out->len - done);
  } else {
    if (f->held.len + out->len <= NS_TRACE_HELD_MAX)
      ns_buf_put(&f->held, out->data, out->len);
    else
      f->counts.lost += out->len, f->counts.blocks_dropped++;
    size_t done = write_some(f, f->held.data, f->held.len, &err);
    memmove(f->held.data, f->held.data + done, f->held.len - done);
    f->held.len -= done;
  }
  if (f->held.failed) { /* no memory to hold it: lost */
    f->counts.lost += f->held.len;
    ns_buf_free(&f->held);
    memset(&f->held, 0, sizeof f->held);
  }
  if (err && !f->write_failing) {
    f->write_failing = 1;
    f->counts.write_errors++;
    ns_log_warn(
        "writing %s failed: %s; up to %u KiB are held and written when the file takes them again, "
        "the rest is dropped and counted",
        f->path, strerror(err), NS_TRACE_HELD_MAX / 1024);
  } else if (!err && f->write_failing) {
    f->write_failing = 0;
    ns_log_warn("writing %s works again; %llu bytes were lost meanwhile (counted in the trace)", f->path,
                (unsigned long long)f->counts.lost);
  }
  ns_buf_reset(out);
}

void ns_trace_file_warn_incomplete(const ns_trace_file* f) {
  if (f->held.len || f->counts.lost)
    ns_log_warn("the trace %s is incomplete: %llu bytes could not be written%s", f->path,
                (unsigned long long)(f->counts.lost + f->held.len),
                f->held.len ? " (the file still takes nothing: its counters and end marker are among them)"
                            : " (counted in its COUNTERS block)");
}

void ns_trace_file_close(ns_trace_file* f) {
  if (f->fd > 0) close(f->fd);
  f->fd = -1;
  ns_buf_free(&f->held);
}
