/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: per-thread single-producer/single-consumer rings.
 *
 * Producer: the NCCL thread that owns the ring (claimed on its first event,
 * found again through an initial-exec TLS pointer). Consumer: the writer
 * thread. Entries are variable-sized, in 8-byte words; an entry never wraps:
 * when it does not fit before the end, a PAD entry fills the tail first.
 * A full ring drops the entry (the caller counts it); the producer never
 * waits for and never wakes the consumer. See docs/memory-ordering.md (R1..R4).
 */
#ifndef NCCLSCOPE_RING_H
#define NCCLSCOPE_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "ncclscope/record.h"

/* Entry kinds (word 0, bits 0..3). */
enum { NS_ENT_PAD = 0, NS_ENT_START = 1, NS_ENT_STOP = 2, NS_ENT_STATE = 3, NS_ENT_REPEAT = 4 };

/* Word 0 of every entry:
 *   bits 0..3 kind | 4..7 type | 8..15 flags (NS_RF_*) | 16..31 context index
 *   (NS_CTX_NONE for PXN, and for stops, states and repeats: the writer knows
 *   the event's) | 32..63 size in words, header included. */
#define NS_CTX_NONE 0xFFFFu
_Static_assert(NS_EV_COUNT <= 16, "an entry's word 0 holds the event type in 4 bits");
static inline uint64_t ns_ent_w0(unsigned kind, unsigned type, unsigned flags, unsigned ctx, uint32_t nwords) {
  return (uint64_t)(kind & 0xF) | (uint64_t)(type & 0xF) << 4 | (uint64_t)(flags & 0xFF) << 8 |
         (uint64_t)(ctx & 0xFFFF) << 16 | (uint64_t)nwords << 32;
}
#define NS_ENT_KIND(w0) ((unsigned)((w0)&0xF))
#define NS_ENT_TYPE(w0) ((unsigned)(((w0) >> 4) & 0xF))
#define NS_ENT_FLAGS(w0) ((unsigned)(((w0) >> 8) & 0xFF))
#define NS_ENT_CTX(w0) ((unsigned)(((w0) >> 16) & 0xFFFF))
#define NS_ENT_WORDS(w0) ((uint32_t)((w0) >> 32))

/* The common head of every entry but PAD, by word index. The capture
 * writes and the writer reads entries through these names and accessors
 * only (plain 64-bit words: no struct is laid over the ring's words). */
enum {
  NS_ENT_W0 = 0,       /* ns_ent_w0 */
  NS_ENT_TICK = 1,     /* ns_clock_ticks() at the call */
  NS_ENT_ID = 2,       /* event id */
  NS_ENT_COMM_AUX = 3, /* ns_ent_comm_aux(comm, aux) */
  NS_ENT_HEAD_WORDS = 4
};
/* Word NS_ENT_COMM_AUX: bits 0..31 comm | 32..63 aux.
 *   comm: START: communicator serial, 0 = unknown (PXN); others: 0.
 *   aux:  START: origin pid (PXN; 0 for a PXN child: the writer takes its parent's);
 *         STATE: bits 0..7 NCCL's state id | 8..31 repeats of the event's
 *         previous state (saturated at NS_ENT_STATE_REPEATS_MAX);
 *         STOP: repeats of the event's last state; REPEAT: the repeats. */
static inline uint64_t ns_ent_comm_aux(uint32_t comm, uint32_t aux) { return (uint64_t)comm | (uint64_t)aux << 32; }
#define NS_ENT_COMM(w) ((uint32_t)(w))
#define NS_ENT_AUX(w) ((uint32_t)((w) >> 32))
#define NS_ENT_STATE_REPEATS_MAX 0xFFFFFFu
/* A STATE's word NS_ENT_COMM_AUX (repeats at most NS_ENT_STATE_REPEATS_MAX). */
static inline uint64_t ns_ent_state_comm_aux(int state, uint32_t repeats) {
  return (uint64_t)(uint8_t)state << 32 | (uint64_t)repeats << 40;
}
#define NS_ENT_AUX_STATE(aux) ((aux)&0xFFu)
#define NS_ENT_AUX_REPEATS(aux) ((aux) >> 8)
/* After the head. START: parent (id or raw foreign handle), nums[layout.nums],
 * then the strings: per string one length byte (NS_STR_NULL for NULL) and
 * its bytes, padded to a word. STATE: arg. STOP, REPEAT: nothing (a REPEAT
 * carries a collapsed state's repeats that could not wait for the event's
 * next entry, ns_collapse). */
enum { NS_ENT_START_PARENT = 4, NS_ENT_START_NUMS = 5, NS_ENT_STATE_ARG = 4, NS_ENT_STATE_WORDS = 5 };
#define NS_ENT_STOP_WORDS NS_ENT_HEAD_WORDS
#define NS_ENT_REPEAT_WORDS NS_ENT_HEAD_WORDS
#define NS_STR_NULL 0xFFu
#define NS_STR_MAX 63 /* longer strings are truncated (NS_RF_STR_TRUNC) */

typedef enum { NS_RING_FREE = 0, NS_RING_OWNED = 1, NS_RING_DEAD = 2 } ns_ring_state;

/* State collapse (producer only): the last state each of the recent events
 * recorded on this thread, in the place its id gives. A state equal to its
 * event's last one (state, argument) is only counted; the count travels
 * with the event's next entry, or in a REPEAT entry when another event
 * takes the place. NCCL records SendPeerWait once per proxy pass for every
 * step waiting on its receiver (2.27+), interleaved over the channels of
 * its connections. A thread's ids are consecutive, so any
 * NS_COLLAPSE_SLOTS events started one after another have places of their
 * own: up to that many interleaved events collapse (more are recorded
 * uncollapsed, their counts still exact). */
#define NS_COLLAPSE_SLOTS 128
typedef struct {
  uint64_t id;      /* 0: free */
  uint64_t arg;
  uint32_t key;     /* state + 1 | has_arg << 8 | type << 16 | pxn << 20 */
  uint32_t repeats; /* identical states since, not yet recorded */
  uint64_t pad;     /* 32 bytes: a place never spans two cache lines */
} ns_collapse;
static inline ns_collapse* ns_collapse_of(ns_collapse* table, uint64_t id) {
  return &table[id & (NS_COLLAPSE_SLOTS - 1)];
}

typedef struct ns_ring {
  /* Producer cacheline. */
  _Atomic uint64_t head;  /* words published; W producer (release, R1), R writer (acquire, R2) */
  uint64_t pending_head;  /* producer only: head after the entry being written */
  uint64_t cached_tail;   /* producer only: last tail seen */
  uint64_t next_id;       /* producer only: per-ring event counter */
  uint64_t* words;
  uint64_t mask;          /* capacity in words - 1 (power of two) */
  uint64_t id_base;       /* (serial mod 2^16) << 40: ids fit a handle's 56 bits (capture/handle.h) */
  uint64_t prefetched;    /* producer only: words up to here were asked for (ns_ring_commit) */
  /* Consumer cacheline. */
  _Atomic uint64_t tail;  /* words consumed; W writer (release, R3), R producer (acquire, R4) */
  char pad1[56];
  /* Cold: claim and counters. */
  _Atomic uint32_t state;  /* ns_ring_state: claim CAS (acquire) / release stores, see R5 */
  uint32_t serial;         /* set by the claimer before its first publish */
  uint32_t tid;
  uint32_t index;
  uint32_t w_populated;    /* writer only: its words were faulted in (ns_ring_prefault) */
  char name[16];
  /* Written only by the producer, read by the writer: relaxed load/store pairs
   * (a counter, no ordering needed; the writer's final read follows a join). */
  _Atomic uint64_t dropped[NS_EV_COUNT];
  /* Producer only. */
  _Alignas(64) ns_collapse collapse[NS_COLLAPSE_SLOTS];
} ns_ring;

/* Reserves `nwords` contiguous words; NULL if the ring is full. Follow with
 * ns_ring_commit, or do nothing to abandon the reservation. */
static inline uint64_t* ns_ring_reserve(ns_ring* r, uint32_t nwords) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* own variable */
  uint64_t cap = r->mask + 1;
  uint64_t pos = head & r->mask;
  uint64_t pad = pos + nwords > cap ? cap - pos : 0;
  uint64_t need = pad + nwords;
  if (head + need - r->cached_tail > cap) {
    /* R4: acquire pairs with the writer's release of tail (R3): the words it
     * consumed are no longer read once we see the new tail. */
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head + need - r->cached_tail > cap) return 0;
  }
  if (pad) {
    r->words[pos] = ns_ent_w0(NS_ENT_PAD, 0, 0, 0, (uint32_t)pad);
    head += pad;
    pos = 0;
  }
  r->pending_head = head + nwords;
  return &r->words[pos];
}

static inline void ns_ring_commit(ns_ring* r) {
  /* R1: release publishes the entry's words (and, on the first entry, the
   * ring's serial/tid) to the writer's acquire of head (R2). */
  atomic_store_explicit(&r->head, r->pending_head, memory_order_release);
}

/* After a START (the largest entries, the first of a burst): the lines the
 * next entries will write were last read by the writer a lap ago; ask for
 * them now, for writing, so that the next calls do not wait for them (NCCL
 * calls in bursts, microseconds apart). A hint only: no fault, nothing
 * published. Not after states and stops: in a tight loop that keeps the
 * ring nearly full it takes lines from under the draining writer. */
static inline void ns_ring_prefetch_next(ns_ring* r) {
  uint64_t ahead = r->pending_head + 16;
  if (ahead > r->prefetched) { /* once per line */
    __builtin_prefetch(&r->words[(r->pending_head + 8) & r->mask], 1, 3);
    __builtin_prefetch(&r->words[ahead & r->mask], 1, 3);
    r->prefetched = (ahead | 7) + 1;
  }
}

static inline uint64_t ns_ring_next_id(ns_ring* r) { return r->id_base | ++r->next_id; }

/* ---- the pool (ring.c) ---- */

/* Preallocates `count` rings of `bytes` each (rounded to a power of two). 0 or -1. */
int ns_ring_pool_create(uint32_t count, uint32_t bytes);
void ns_ring_pool_destroy(void);
uint32_t ns_ring_pool_count(void);
ns_ring* ns_ring_pool_get(uint32_t i);
/* Drops that happened on threads that found no free ring. */
uint64_t ns_ring_pool_unringed_drops(void);

/* Per-thread lookup. Session generation: a TLS pointer from an older session
 * of this loaded instance is never used. */
typedef struct {
  ns_ring* ring;
  uint32_t gen;
} ns_ring_tls;
extern __thread ns_ring_tls ns_tls __attribute__((tls_model("initial-exec")));
extern _Atomic uint32_t ns_ring_gen; /* W: session start (relaxed); see R6 */
#define NS_RING_NONE ((ns_ring*)1)    /* this thread found the pool exhausted */

ns_ring* ns_ring_claim_slow(void);
/* Counts a drop of a thread without a ring. */
void ns_ring_count_unringed(void);

/* The calling thread's ring, claiming one on first use; NULL if none. */
static inline ns_ring* ns_ring_self(void) {
  ns_ring* r = ns_tls.ring;
  if (__builtin_expect(r != 0 && ns_tls.gen == atomic_load_explicit(&ns_ring_gen, memory_order_relaxed), 1))
    return r == NS_RING_NONE ? 0 : r;
  return ns_ring_claim_slow();
}

/* The calling thread's ring when it has claimed one in this session, else
 * NULL without trying (no call: ns_ring_self() is the general form). */
static inline ns_ring* ns_ring_claimed(void) {
  ns_ring* r = ns_tls.ring;
  if (__builtin_expect(r != 0 && r != NS_RING_NONE &&
                           ns_tls.gen == atomic_load_explicit(&ns_ring_gen, memory_order_relaxed), 1))
    return r;
  return 0;
}

/* Writer side. Returns the number of words consumed after calling `fn` for
 * every published entry (PAD entries skipped). A malformed size ends the
 * drain and discards the rest (a broken invariant disables the ring's
 * content rather than crash). */
typedef void (*ns_ring_entry_fn)(void* user, ns_ring* r, const uint64_t* entry, uint32_t nwords);
uint64_t ns_ring_drain(ns_ring* r, ns_ring_entry_fn fn, void* user);
/* Writer: the START entry of event id among r's published words it has not
 * drained yet, or NULL (read only: the words stay for the drain). */
const uint64_t* ns_ring_find_start(ns_ring* r, uint64_t id);
/* Writer: faults in an owned ring's words once per session, so that its
 * producer does not page-fault on its first pass around the ring. */
void ns_ring_prefault(ns_ring* r);
/* 1 if the ring holds published entries. */
int ns_ring_has_data(ns_ring* r);
/* How full the ring is, in percent of its words (writer side, before a drain). */
unsigned ns_ring_fill_percent(ns_ring* r);

#endif
