/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope export DIR --format chrome|perfetto
 * --merge-kineto TRACE.json[.gz]`: the timeline layout's tracks written
 * into a PyTorch profiler (Kineto) trace, on its clock (docs/cli.md,
 * "PyTorch user").
 *
 * Clock. Kineto's "ts" is CLOCK_REALTIME minus its baseTimeNanoseconds
 * (kineto_trace.h); a recording's ts is CLOCK_MONOTONIC, and each file
 * carries realtime - monotonic pairs (its PROCESS block and ANCHOR blocks,
 * the realtime read between two monotonic reads). An event of file f goes
 * to ts + offset_f - base, offset_f the median of the file's pairs. Its
 * stated error: the largest distance of a pair from that median (the
 * clocks' drift or a realtime step during the run) plus 1 us for the pair
 * reads; Kineto's own TSC-to-realtime conversion is not in its trace and is
 * not included. The mapping, per file, goes into the output's top-level
 * "ncclscopeMerge".
 *
 * Checks, each refused with its reason unless unaligned merging is asked
 * for: the trace has a time base; its process (the pid of its host-side
 * events) is one of the recorded processes, on the host the trace names if
 * it names one; its time span overlaps that recording. Only files of that
 * host are aligned (other hosts' realtime clocks differ by their NTP
 * error): the others are left out, named on stderr. Unaligned, every file
 * is shifted so that the recording starts where the trace starts, and every
 * track and the metadata say "unaligned".
 *
 * NCCL kernels of the trace (cat "kernel", ncclDevKernel* / ncclKernel*)
 * are linked to the recorded Coll whose GPU start (mapped) is nearest,
 * within the stated error plus the Coll's GPU error plus LINK_SLACK_NS, of
 * the same function, and on the device and stream that most of its
 * communicator's Colls fit (decided once the recording is read): a flow
 * arrow from the Coll to the kernel.
 *
 * Chrome: every original event and top-level member is written back byte
 * for byte, and the mapping goes into "ncclscopeMerge". Perfetto: the
 * trace's events are drawn as tracks, slices, instants, flows and counters
 * (kineto_draw.h says how, and what has no form there), and two instants
 * on a "ncclscope merge" track carry the mapping and the trace's top-level
 * members as arguments. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_KINETO_MERGE_H
#define NCCLSCOPE_TOOLS_KINETO_MERGE_H

#include "export/export.h"

/* The trace to merge into, and how. */
typedef struct {
  const char* path;
  int unaligned;    /* merge even when it cannot be aligned */
  size_t max_bytes; /* its text and index in memory (ns_kineto_load) */
} ns_kineto_input;

/* Exports DIR merged into the Kineto trace `in`, to out_path, in fmt:
 * ns_format_chrome, ns_format_perfetto or ns_format_perfetto_plain.
 * Returns an exit status (NS_EXIT_*), messages on stderr. */
int ns_kineto_export(const char* dir, const ns_kineto_input* in, const ns_format* fmt, const char* out_path,
                     const ns_export_options* opts);

#endif
