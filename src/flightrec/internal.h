/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: the structures its three files share
 * (flightrec.c: records -> operations; watchdog.c: stuck operations and what
 * they wait for; dump.c: the JSON). Single-threaded, see flightrec.h. */
#ifndef NCCLSCOPE_FLIGHTREC_INTERNAL_H
#define NCCLSCOPE_FLIGHTREC_INTERNAL_H

#include "flightrec/flightrec.h"
#include "ncclscope/nccl_names.h"
#include "ncclscope/events.h"
#include "util/idmap.h"

#define FR_EPISODES 32 /* episodes kept for the dump */
#define FR_POS_BITS 40 /* positions in an `ops` value: 10^12 operations per communicator */
#define FR_SEQ_FUNCS (NS_FUNC_ALLGATHERV + 1) /* collective functions numbered by seqNumber (NS_FUNC_*) */

typedef struct {
  uint32_t comm; /* serial; 0: a free entry */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  char name[64];
  int want_kch, want_pop; /* the communicator records KernelCh (ABI v3+) / ProxyOp */
  uint32_t abi;
  ns_fr_op* ring;      /* ring_mask + 1 operations; position p is ring[p & ring_mask] (fr_at) */
  uint64_t head;       /* position of the next operation */
  uint64_t first_open; /* position of the oldest operation not done (head: none) */
  uint64_t episode_op; /* id of the operation last reported stuck, 0 none */
  int episode_open;    /* it has not completed yet */
  ns_fr_stuck episode; /* what was reported, for the cleared entry */
  uint64_t episodes;   /* episodes reported for this communicator */
  /* Per function: its last Coll seqNumber + 1 posted (START) and completed, 0 none (ns_fr_inflight's posted). */
  uint64_t posted[FR_SEQ_FUNCS], completed[FR_SEQ_FUNCS];
  /* ns_fr_settle's last look for a later KernelCh: from the operation at
   * settle_pos up to settle_head, none (a hang does not rescan every tick). */
  uint64_t settle_pos, settle_head;
} fr_comm;

/* The recorder's part of a ProxyOp's, ProxyStep's or KernelCh's event
 * (ns_fr_attach): where its operation and channel sit in the recorder's
 * tables. Zero (op_at 0) until it is followed, and again once it ended. */
typedef struct {
  uint64_t op_at; /* its operation's value in `ops` (valid while that ring slot still holds the op); 0: not followed */
  int64_t step;   /* ProxyStep: its step */
  uint32_t chan_at; /* index of its channel in the operation's ch (valid while that entry is the channel) */
  uint8_t dir;      /* ProxyOp / ProxyStep: 0 receive, 1 send */
} fr_child;

struct ns_fr {
  ns_fr_config cfg;
  /* ns_fr_set_detail: NCCL's mask has full detail from detail_ts on
   * (detail_full), and had detail_prev before. */
  int detail_full, detail_prev;
  uint64_t detail_ts;
  int detail_dynamic; /* the mask has been without full detail at least once */
  /* Each ring holds the next power of two at or above cfg.entries, so a
   * position finds its slot with a mask, not a division; the operations
   * kept are still the last cfg.entries (op_new forgets the older ones). */
  uint64_t ring_mask;
  fr_comm* comms;
  size_t ncomms, capcomms;
  ns_idmap comm_index; /* serial -> index + 1 in comms */
  ns_idmap ops;        /* op id -> (comm index << FR_POS_BITS | its position) + 1 */
  const ns_asm* as;    /* the assembler whose events it follows (ns_fr_attach) */
  size_t area;         /* its part of each event: ns_event_area(e, area) */
  size_t children_live;               /* children followed now */
  ns_name_memo memo_func, memo_dtype; /* op_take_start's name lookups */
  ns_fr_stuck episodes[FR_EPISODES]; /* the last ones, in order: n_episodes % FR_EPISODES is next */
  ns_fr_stats st;
};

/* The communicator with that serial, NULL if unknown. */
fr_comm* fr_comm_of(const ns_fr* fr, uint32_t comm);
/* A string of the trace, "" when unknown. */
const char* fr_str(const ns_fr* fr, uint32_t id);
/* The operation at position pos of c. */
static inline ns_fr_op* fr_at(const ns_fr* fr, const fr_comm* c, uint64_t pos) {
  return &c->ring[pos & fr->ring_mask];
}

/* What an `ops` value names: the communicator (an index in comms) and the position there. */
static inline size_t fr_value_comm(uint64_t at) { return (size_t)((at - 1) >> FR_POS_BITS); }
static inline uint64_t fr_value_pos(uint64_t at) { return (at - 1) & ((1ull << FR_POS_BITS) - 1); }

#endif
