/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a PyTorch profiler (Kineto) Chrome-trace JSON, read for
 * merging (kineto_merge.c). The file (plain or gzip) is read whole, within
 * a memory limit; the reader keeps the byte range of every top-level member
 * and of every element of "traceEvents", so that they can be written back
 * unchanged, and reads of each event what alignment and linking need, and
 * where its other fields lie (for a format that rewrites it: kineto_draw.h).
 *
 * Kineto's time base (libkineto output_json.cpp, ApproximateClock.h): an
 * event's "ts" is microseconds (3 decimals: exact ns) of the Unix epoch
 * (CLOCK_REALTIME; CPU events read through TSC converted to it, GPU events
 * through CUPTI's timestamp callback on the same converter) minus the
 * top-level "baseTimeNanoseconds" (the realtime floored to a 3-month
 * boundary). Older traces have no base: "ts" is epoch microseconds.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_KINETO_TRACE_H
#define NCCLSCOPE_TOOLS_KINETO_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  size_t off, len; /* the element's bytes in the text */
  char ph;
  int has_ts, has_dur;
  int64_t ts_ns, dur_ns; /* "ts"/"dur" as ns of the trace's own (relative) clock */
  int num_pid, num_tid;  /* pid/tid are integers */
  int64_t pid, tid;
  int is_nccl_kernel;        /* cat "kernel" and a name starting with ncclDevKernel / ncclKernel */
  int is_host;               /* a host-side category (cpu_op, user_annotation, cuda_runtime, ...) */
  int64_t device, stream;    /* kernels: args.device / args.stream (-1: none) */
  size_t name_off, name_len; /* the name's raw bytes (between the quotes) */
  /* Raw bytes, for formats that rewrite the event (kineto_draw.h); len 0: absent. */
  size_t cat_off, cat_len;   /* the category (between the quotes) */
  size_t args_off, args_len; /* "args": the object, braces included */
  size_t id_off, id_len;     /* "id": the value as written (a number or a quoted string) */
  size_t pid_off, pid_len;   /* "pid" and "tid" as written (Kineto writes some as strings) */
  size_t tid_off, tid_len;
  char scope; /* "s" of an instant: 'g', 'p' or 't'; 0: none */
} ns_kt_event;

typedef struct {
  size_t key_off, member_off, member_len; /* a top-level member "key": value */
  int is_events;
} ns_kt_member;

typedef struct {
  char* text;
  size_t len;
  ns_kt_member* members;
  size_t nmembers;
  ns_kt_event* events;
  size_t nevents;
  int has_base;
  int64_t base_ns; /* baseTimeNanoseconds */
  int has_rank;
  int64_t rank;   /* distributedInfo.rank */
  char host[256]; /* a top-level "host_name"/"hostname", if any */
} ns_kineto_trace;

/* Reads path (gzip or plain), holding at most max_bytes: the text (inflated)
 * and the member and event tables together; a trace that needs more is
 * refused before it takes more. 0, or -1 with a message in err
 * (unreadable, over the limit, truncated gzip, not JSON: the line, column
 * and fault of the first place that is not, no traceEvents array). Every
 * string is checked (escapes, no raw control bytes, well-formed UTF-8): the
 * members and events are written back as they stand. */
int ns_kineto_load(const char* path, size_t max_bytes, ns_kineto_trace* t, char* err, size_t errlen);
void ns_kineto_free(ns_kineto_trace* t);

#endif
