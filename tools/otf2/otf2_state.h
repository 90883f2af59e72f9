/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the state of `export --format otf2` (export_otf2.c): the
 * archive and its definitions, and for the trace file being walked its
 * tracks (a thread's events, a communicator's ops, a GPU's kernels), each
 * with the lanes it has become in the archive, and the intervals its events
 * made, kept until the file's end, when otf2_nesting.c writes them.
 * Internal to those files. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_OTF2_STATE_H
#define NCCLSCOPE_TOOLS_OTF2_STATE_H

#include <otf2/otf2.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export_walk.h"
#include "ncclscope/analysis.h"
#include "otf2/otf2_defs.h"
#include "util/idmap.h"

/* ns_otf2_iv.has: the bit of attribute A_* (otf2_defs.h), set when the interval has it. */
#define NS_OTF2_HAS(a) (1u << (a))

/* One event's interval on one track, kept until the end of its file. */
typedef struct {
  uint64_t s, e; /* OTF2 ticks */
  uint64_t order;
  uint64_t event_id, parent_id, bytes, seq, sent, recv;
  int64_t channel, peer;
  double err_us;
  uint32_t track, region, comm; /* comm: index in comms, for coll_op */
  int32_t rank, root;
  uint16_t has;    /* NS_OTF2_HAS(A_*) */
  uint8_t coll_op; /* OTF2_CollectiveOp + 1; 0: none */
  uint8_t coll_emitted;
} ns_otf2_iv;

typedef struct {
  uint64_t loc;
  uint32_t* stack; /* intervals open on it, outermost first */
  uint32_t n, cap;
  uint32_t coll_open; /* collective records open (at most 1) */
} ns_otf2_lane;

typedef struct {
  int kind;
  char name[160];
  uint64_t group;
  OTF2_LocationType type;
  ns_otf2_lane* lanes;
  uint32_t nlanes;
} ns_otf2_track;

typedef struct {
  ns_walk* walk; /* first member: set by the caller (export.h) */
  OTF2_Archive* archive;
  ns_otf2_defs d;
  OTF2_AttributeList* attrs;
  uint64_t t_min, t_max, events, colls_recorded, colls_regions_only;
  /* the file being walked */
  int ready; /* file_setup done */
  int64_t offset;
  uint64_t pgroup;
  ns_analysis* a;
  ns_idmap track_index; /* key -> index + 1 in tracks */
  ns_otf2_track* tracks;
  size_t ntracks;
  ns_idmap gpu_groups; /* hash of the GPU uuid -> group + 1 */
  ns_otf2_iv* ivs;
  size_t nivs, cap;
} ns_otf2_state;

#endif
