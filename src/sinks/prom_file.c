/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the Prometheus textfile (prom_file.h), replaced through
 * util/safefile.h (a temporary file renamed over it: node_exporter never
 * reads half a file). */
#include "sinks/prom_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "util/safefile.h"

void ns_prom_file_open(ns_prom_file* f, const char* dir, const char* stem) {
  f->dirfd = -1;
  f->dir = dir;
  f->failing = 0;
  if (!dir[0]) return;
  f->dirfd = ns_dir_open(dir, ns_dir_mode_for(NS_PROM_FILE_MODE), 1);
  if (f->dirfd < 0) {
    ns_log_warn("NCCLSCOPE_PROM_DIR=%s cannot be used (%s): no Prometheus file", dir,
                errno == ELOOP ? "it is a symbolic link (refused)" : strerror(errno));
    return;
  }
  snprintf(f->name, sizeof f->name, "%.*s.prom", (int)(sizeof f->name - sizeof ".prom"), stem);
}

void ns_prom_file_write(ns_prom_file* f, const ns_metrics* m, const ns_mprocess* p) {
  if (f->dirfd < 0) return;
  ns_buf text = {.limit = NS_SINK_BUF_LIMIT};
  ns_prom_write(m, p, &text);
  char why[PATH_MAX + 200];
  ns_out o;
  int rc = text.failed ? -1 : 0;
  if (text.failed) snprintf(why, sizeof why, "out of memory");
  if (rc == 0) rc = ns_out_open_at(&o, f->dirfd, f->name, f->name, NS_PROM_FILE_MODE, why, sizeof why);
  if (rc == 0) {
    if (fwrite(text.data, 1, text.len, o.f) != text.len) {
      snprintf(why, sizeof why, "%s: %s", f->name, strerror(errno));
      ns_out_abort(&o);
      rc = -1;
    } else {
      rc = ns_out_commit(&o, why, sizeof why);
    }
  }
  ns_buf_free(&text);
  if (rc != 0 && !f->failing)
    ns_log_warn("cannot replace %s in NCCLSCOPE_PROM_DIR=%s (%s); the file keeps the last window written", f->name,
                f->dir, why);
  else if (rc == 0 && f->failing)
    ns_log_warn("%s in NCCLSCOPE_PROM_DIR=%s is written again", f->name, f->dir);
  f->failing = rc != 0;
}

void ns_prom_file_close(ns_prom_file* f, int remove, uint32_t owner_pid) {
  if (f->dirfd < 0) return;
  if (remove && (uint32_t)getpid() == owner_pid && unlinkat(f->dirfd, f->name, 0) != 0 && errno != ENOENT)
    ns_log_warn("cannot remove %s from NCCLSCOPE_PROM_DIR=%s (%s): node_exporter serves it until it is removed",
                f->name, f->dir, strerror(errno));
  close(f->dirfd);
  f->dirfd = -1;
}
