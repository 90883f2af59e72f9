/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the NCCL kernels of a Kineto trace linked to the recorded
 * Colls of the trace's process (kineto_merge.h). A Coll with GPU times is
 * linked to the kernel nearest its GPU start (mapped onto the trace's
 * clock), within its file's stated error plus the Coll's GPU error plus
 * LINK_SLACK_NS; one without, to the first kernel in [start - error,
 * start + LAUNCH_WINDOW_NS] (a stream runs its kernels in order). The
 * kernel is one of the Coll's function, not linked yet, and on the device
 * and stream that most of its communicator's Colls fit. So Colls are noted
 * as they are drawn and linked at the end, in time order, once every
 * communicator's stream is known. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_KINETO_LINK_H
#define NCCLSCOPE_TOOLS_KINETO_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "merge/kineto_clock.h"
#include "merge/kineto_trace.h"
#include "timeline/timeline_draw.h"
#include "util/json_writer.h"

typedef struct {
  const ns_kineto_trace* tr;
  size_t* kernels; /* NCCL kernel events (indices), by ts */
  size_t nkernels;
  uint8_t* kernel_used;
  struct ns_klink_vote* votes; /* per communicator: the device and stream its Colls' kernels are on */
  size_t nvotes;
  struct ns_klink_coll* pending; /* Colls to link at the end */
  size_t npending, cap_pending;
  uint64_t linked, colls_with_gpu, nresiduals;
  int64_t* residuals; /* kernel ts - mapped Coll gpuStart, ns */
  ns_json scratch;
} ns_klinker;

/* The NCCL kernels of tr, by time: 0, or -1 when out of memory (l is
 * ns_klink_free's either way). */
int ns_klink_init(ns_klinker* l, const ns_kineto_trace* tr);
/* Notes a Coll slice of the trace's process, drawn at ts (the output's
 * clock) by the layout's pid; k: its trace file's mapping. */
void ns_klink_note(ns_klinker* l, const ns_draw_slice* s, uint32_t pid, uint64_t ts, const ns_kfile* k);

/* One link: the Coll's slice (the layout's pid and tid, its start on the
 * output's clock) and the trace's kernel event. */
typedef void (*ns_klink_fn)(void* ctx, uint32_t pid, uint32_t tid, uint64_t ts, size_t event);
/* Links the noted Colls, in time order, each to a kernel on its
 * communicator's stream; fn(ctx, ...) for each link made. */
void ns_klink_all(ns_klinker* l, ns_klink_fn fn, void* ctx);
/* The links' residuals (kernel start - the Coll's GPU start on the trace's
 * clock, ns): their median and largest magnitude; 0 when there is none. */
int ns_klink_residuals(ns_klinker* l, int64_t* median, int64_t* maxabs);
void ns_klink_free(ns_klinker* l);

#endif
