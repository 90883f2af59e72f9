/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the intervals of one trace file written as OTF2 events,
 * properly nested per location and in time order as OTF2 wants them:
 * NCCL's events overlap without nesting (steps in flight, the collectives
 * of a group), so an interval that does not nest on its track's location
 * goes to the track's first further lane ("... #2", a location of its own)
 * where it does. A collective with an MPI counterpart (coll_op) gets an
 * MpiCollectiveBegin/End inside its region when it lands on its rank's
 * member location (the lane of its first collective) and no other
 * collective record is open there; else the region only, counted.
 * Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_OTF2_NESTING_H
#define NCCLSCOPE_TOOLS_OTF2_NESTING_H

#include <stdint.h>

#include "otf2/otf2_state.h"

/* Writes the file's intervals (s->ivs): those that never stopped end at
 * `end` (at their start if that is later), then sorted by track, start and
 * length (the outer one first), each entered on its lane and left when one
 * after its end comes, the rest left at the end. Sets s->d.failed when out
 * of memory. */
void ns_otf2_write_nested(ns_otf2_state* s, uint64_t end);

#endif
