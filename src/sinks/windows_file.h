/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: windows.jsonl, windows-<host>-<pid> and the trace's
 * suffix, .jsonl, in the dump directory: one line per closed window
 * (jsonl.c), kept in memory during a drain and appended after it. Writer
 * thread; a failing write is one warning per episode and the lines it held
 * are lost, never the trace. */
#ifndef NCCLSCOPE_SINKS_WINDOWS_FILE_H
#define NCCLSCOPE_SINKS_WINDOWS_FILE_H

#include <limits.h>

#include "sinks/outputs.h"

typedef struct {
  int fd;          /* -1: none */
  const char* dir; /* the dump directory, as messages name it */
  char name[NAME_MAX + 1];
  int failed;   /* the last write failed (said once per episode) */
  ns_buf lines; /* lines not written yet (bounded: sink_buf.h) */
} ns_windows_file;

/* Creates STEM.jsonl in dirfd, or the first free name after it (never an
 * existing file); alt: what tells the alternatives apart. dirfd < 0: none.
 * Says why when it cannot; then fd < 0. */
void ns_windows_file_open(ns_windows_file* f, int dirfd, const char* dir, const char* stem, unsigned mode,
                          uint64_t alt);
/* The model's window as one line, kept until ns_windows_file_flush. */
void ns_windows_file_add(ns_windows_file* f, const ns_metrics* m, const ns_mprocess* p);
/* Appends the lines kept. */
void ns_windows_file_flush(ns_windows_file* f);
void ns_windows_file_close(ns_windows_file* f);

#endif
