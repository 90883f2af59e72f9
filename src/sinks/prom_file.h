/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the Prometheus textfile, ncclscope-<host>-<pid> and the
 * trace's suffix, .prom, in NCCLSCOPE_PROM_DIR for node_exporter's textfile
 * collector: replaced atomically at each write, removed at a clean end.
 * Writer thread; every error is one warning per episode. */
#ifndef NCCLSCOPE_SINKS_PROM_FILE_H
#define NCCLSCOPE_SINKS_PROM_FILE_H

#include <limits.h>
#include <stdint.h>

#include "sinks/outputs.h"

#define NS_PROM_FILE_MODE 0644u /* node_exporter runs as another user: world-readable */

typedef struct {
  int dirfd;       /* -1: none */
  const char* dir; /* NCCLSCOPE_PROM_DIR, as messages name it */
  char name[NAME_MAX + 1];
  int failing; /* the last write failed (said once, and when it works again) */
} ns_prom_file;

/* Opens dir (created when missing; a symbolic link is refused); the file
 * will be STEM.prom. dir "": none. Says why when it cannot; then dirfd < 0. */
void ns_prom_file_open(ns_prom_file* f, const char* dir, const char* stem);
/* The model's text exposition in place of the file's. */
void ns_prom_file_write(ns_prom_file* f, const ns_metrics* m, const ns_mprocess* p);
/* A clean end: the file goes, so that node_exporter stops serving the
 * process's series (a dead process's series must not look live), unless
 * keep (NCCLSCOPE_PROM_KEEP: the last values stay); only by the process
 * owner_pid (a forked child ending leaves its parent's file). Closes. */
void ns_prom_file_close(ns_prom_file* f, int remove, uint32_t owner_pid);

#endif
