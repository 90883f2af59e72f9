/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a Kineto trace's events drawn through a timeline drawer
 * (timeline_draw.h), for an output format that cannot carry the trace's
 * JSON text as it stands (Perfetto's protobuf): the merge (kineto_merge.c)
 * draws the user's events beside the recording's.
 *
 * What each event becomes:
 *  - "M" process_name, process_labels, process_sort_index, thread_name,
 *    thread_sort_index: the names, labels and order of the tracks;
 *  - "X": a slice on its thread's track, its "args" as arguments (an empty
 *    array or object has no form in Perfetto's annotations: no value). The
 *    slices of a track are drawn sorted by start (the longer first at equal
 *    starts); one that overlaps an earlier one without nesting goes to the
 *    thread's first "overlapping #k" track where it nests (beyond
 *    KD_OVERLAP_MAX: an async slice), so that a format of begin/end pairs
 *    keeps every start and duration;
 *  - "i"/"I": an instant ("s":"g" or "p": on the process track);
 *  - "s"/"t"/"f": flow points. A point joins the slice of its track that
 *    starts at its time (Kineto puts them at the starts of the launch call
 *    and of the kernel), else a zero-length slice of its own name; the
 *    points of one flow (category and "id") share one flow id;
 *  - "C": counter samples, when every value is a non-negative integer;
 *  - anything else is counted as not drawn, with its phase.
 * A pid or tid that is not a 32-bit non-negative integer (Kineto writes
 * some as strings) gets a number of its own: pids above every numeric pid
 * (ns_kineto_pid_limit), tids from KD_SYNTH_TID. Times are the trace's own
 * nanoseconds; an event before 0 is drawn at 0 and counted.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_KINETO_DRAW_H
#define NCCLSCOPE_TOOLS_KINETO_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "merge/kineto_trace.h"
#include "timeline/timeline_draw.h"

#define KD_SYNTH_TID 0x80000000u   /* tids given to the ones that are not numbers */
#define KD_OVERLAP_TID 0xC0000000u /* "overlapping #k" tracks */
#define KD_OVERLAP_MAX 32          /* per thread; beyond, async slices */

typedef struct {
  uint64_t slices, instants, flow_points, counters, names;
  uint64_t overlapping; /* slices drawn on an "overlapping #k" track */
  uint64_t async;       /* slices drawn as async slices (more overlap than KD_OVERLAP_MAX tracks) */
  uint64_t clamped;     /* events before 0, drawn at 0 */
  uint64_t not_drawn;
  char not_drawn_phases[24]; /* their phases, each once ('?': none given) */
} ns_kineto_drawn;

/* A flow id to add to the slice of trace event `event` (an "X"). */
typedef struct {
  size_t event;
  uint64_t flow_id;
} ns_kineto_link;

/* One more than the largest pid the drawing uses: numeric pids and the
 * numbers given to the others. -1 when out of memory. */
int64_t ns_kineto_pid_limit(const ns_kineto_trace* tr);

/* Draws every event of tr through d (d's finish is not called). links: flow
 * ids added to the slices of those events, in any order. The trace's own
 * flows get ids flow_base + 1, + 2, ... 0, or -1 when out of memory. */
int ns_kineto_draw(const ns_kineto_trace* tr, const ns_drawer* d, const ns_kineto_link* links, size_t nlinks,
                   uint64_t flow_base, ns_kineto_drawn* out);

#endif
