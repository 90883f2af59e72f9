/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: windows.jsonl (windows_file.h). Opened with O_APPEND and
 * created through util/safefile.h (O_EXCL: nothing planted is followed). */
#include "sinks/windows_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "util/safefile.h"

void ns_windows_file_open(ns_windows_file* f, int dirfd, const char* dir, const char* stem, unsigned mode,
                          uint64_t alt) {
  f->fd = -1;
  f->dir = dir;
  f->failed = 0;
  ns_sink_buf_bound(&f->lines);
  if (dirfd < 0) return;
  f->fd = ns_create_unique(dirfd, stem, ".jsonl", alt, O_WRONLY | O_APPEND, mode, f->name, sizeof f->name);
  if (f->fd < 0) ns_log_warn("cannot create %s/%s (%s): windows are not written there", dir, f->name, strerror(errno));
}

void ns_windows_file_add(ns_windows_file* f, const ns_metrics* m, const ns_mprocess* p) {
  if (f->fd >= 0) ns_jsonl_window(m, p, &f->lines);
}

void ns_windows_file_flush(ns_windows_file* f) {
  if (f->fd < 0 || !f->lines.len) return;
  size_t done = 0;
  while (done < f->lines.len && !f->lines.failed) {
    ssize_t k = write(f->fd, f->lines.data + done, f->lines.len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (!f->failed)
        ns_log_warn("writing %s/%s failed (%s): windows are lost there until it works again", f->dir, f->name,
                    k < 0 ? strerror(errno) : "no space");
      f->failed = 1;
      break;
    }
    done += (size_t)k;
  }
  if (done == f->lines.len) f->failed = 0;
  ns_buf_reset(&f->lines);
}

void ns_windows_file_close(ns_windows_file* f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  ns_buf_free(&f->lines);
}
