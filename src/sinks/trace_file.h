/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the trace file's bytes. The blocks the writer encodes
 * go to the file with one write per flush; bytes the file does not take (a
 * full disk or quota, EFBIG, EIO) are held and written first at the next
 * flush, up to NS_TRACE_HELD_MAX; what is lost is counted. Writer thread
 * (open and close: init and finalize's thread while no writer runs). */
#ifndef NCCLSCOPE_SINKS_TRACE_FILE_H
#define NCCLSCOPE_SINKS_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytebuf.h"

#define NS_TRACE_HELD_MAX (4u << 20) /* bytes held while the file takes none */

/* What became of the bytes handed over; the COUNTERS block reports them. */
typedef struct {
  uint64_t written, write_errors, lost, blocks_dropped;
} ns_trace_file_counts;

typedef struct {
  int fd;            /* -1: none */
  const char* path;  /* as messages name it */
  ns_buf held;       /* bytes the file did not take yet, written first at the next flush */
  int write_failing; /* the last write failed (one warning per episode) */
  int oom_warned;
  ns_trace_file_counts counts;
} ns_trace_file;

/* A file created by the caller (fd), named path in messages. */
void ns_trace_file_open(ns_trace_file* f, int fd, const char* path);
/* out (whole blocks) to the file after what is held, then out emptied. */
void ns_trace_file_flush(ns_trace_file* f, ns_buf* out);
/* Bytes the file has not taken yet. */
static inline size_t ns_trace_file_held(const ns_trace_file* f) { return f->held.len; }
/* At the end: a warning when bytes were lost or are still held. */
void ns_trace_file_warn_incomplete(const ns_trace_file* f);
/* Closes the file, frees what is held (counts stay). */
void ns_trace_file_close(ns_trace_file* f);

#endif
