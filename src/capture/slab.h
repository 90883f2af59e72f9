/* ncclscope: event slots ("handles") in one process-wide reserved region.
 *
 * The region holds NS_MAX_SLABS slabs: one per context-table entry plus the
 * PXN slab (the last). A handle NCCL gives back is trusted only if it is the
 * address of a slot of an active slab: one subtraction, one compare, one
 * mask (ns_slot_from_handle). Allocation pops a FIFO of free slot indices
 * (fresh slots first), so a freed address is reused as late as possible.
 * Many NCCL threads allocate; only the writer thread frees. See
 * docs/memory-ordering.md (S1..S6) and docs/design.md (hierarchy).
 */
#ifndef NCCLSCOPE_SLAB_H
#define NCCLSCOPE_SLAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/hot.h"

#define NS_MAX_CONTEXTS 256
#define NS_PXN_SLAB NS_MAX_CONTEXTS
#define NS_MAX_SLABS (NS_MAX_CONTEXTS + 1)

/* One event. Fields children read are atomics (relaxed: the values are set
 * before NCCL publishes the handle to the child's thread, and a late reader
 * of a recycled slot must see a value, not undefined behaviour). */
typedef struct ns_slot {
  _Atomic uint64_t id;       /* event id; W: starter; R: stop/state/children */
  _Atomic uint64_t meta;     /* type | flags << 8 | ctx << 16 | comm << 32 (ns_slot_meta) */
  _Atomic uint64_t parent;   /* parent slot address whose refs we hold, 0 if none */
  _Atomic uint64_t parent_id;/* that parent's id, checked before releasing it */
  _Atomic int32_t refs;      /* running + expected + live children; -1 = recycled (S2..S4) */
  _Atomic int32_t expected;  /* expected KernelCh children not yet started (S5) */
  _Atomic uint32_t running;  /* 1 from start to stop (S6) */
  _Atomic uint32_t origin_pid; /* PXN: the process the event runs for */
  uint64_t w_zero_ns;        /* writer only: when refs was first seen at 0 */
  uint64_t w_start_ns;       /* writer only: when the writer saw the start; NS_SLOT_PINNED */
} ns_slot;
/* w_start_ns of a graph-captured API event (GroupApi, CollApi, P2pApi with
 * graphCaptured): NCCL names its handle as the parent of the Coll/P2p it
 * re-emits at every replay of the graph, however late, so the writer keeps
 * the slot until its communicator ends (or the slab runs short of slots). */
#define NS_SLOT_PINNED UINT64_MAX
_Static_assert(sizeof(ns_slot) == 64, "a slot is one cacheline: handle checks use a mask");

static inline uint64_t ns_slot_meta(unsigned type, unsigned flags, unsigned ctx, uint32_t comm) {
  return (uint64_t)(type & 0xFF) | (uint64_t)(flags & 0xFF) << 8 | (uint64_t)(ctx & 0xFFFF) << 16 |
         (uint64_t)comm << 32;
}
#define NS_META_TYPE(m) ((unsigned)((m)&0xFF))
#define NS_META_FLAGS(m) ((unsigned)(((m) >> 8) & 0xFF))
#define NS_META_CTX(m) ((unsigned)(((m) >> 16) & 0xFFFF))
#define NS_META_COMM(m) ((uint32_t)((m) >> 32))

typedef struct ns_slab {
  ns_slot* slots;
  _Atomic uint32_t* queue;    /* free slot indices, FIFO */
  uint32_t n;                 /* slots (power of two) */
  _Atomic uint32_t active;    /* 1 while a context owns it; W init/writer, R hot path relaxed */
  _Atomic uint32_t fresh;     /* never-used slots handed out so far (S1) */
  char pad0[36];
  _Atomic uint64_t q_head;    /* consumers (allocating threads) CAS, S1 */
  char pad1[56];
  _Atomic uint64_t q_tail;    /* writer (only producer) release, S1 */
  /* Writer only: slots whose start it saw, in start order. */
  uint32_t* live;
  uint32_t nlive;
  /* Slots [0, populated) are faulted in (set by activate before the context
   * is published, then advanced by the writer only; ns_slab_prefault). */
  uint32_t populated;
} ns_slab;

typedef struct {
  uint8_t* base;   /* slots of every slab, slab k at base + k * slab_bytes */
  size_t slab_bytes;
  size_t total;    /* NS_MAX_SLABS * slab_bytes */
  uint32_t n;      /* slots per slab */
  uint32_t shift;  /* log2(slab_bytes) */
  ns_slab slabs[NS_MAX_SLABS];
} ns_region;

extern ns_region ns_reg;

/* Session start/end (cold). slots_per_slab is rounded up to a power of two. */
int ns_region_create(uint32_t slots_per_slab);
void ns_region_destroy(void);
/* Makes slab k usable (init, PXN at session start). 0 or -1. */
int ns_slab_activate(uint32_t k);
/* Writer: frees every slot of slab k and returns its memory (after COMM_FINI). */
void ns_slab_release(uint32_t k);

/* Hot path: the slot `h` names, or NULL if `h` is not a slot of an active slab. */
static inline ns_slot* ns_slot_from_handle(const void* h) {
  uintptr_t off = (uintptr_t)h - (uintptr_t)ns_reg.base;
  if (off >= ns_reg.total || (off & (sizeof(ns_slot) - 1))) return NULL;
  /* An inactive slab may be PROT_NONE: never touch it. */
  if (!atomic_load_explicit(&ns_reg.slabs[off >> ns_reg.shift].active, memory_order_relaxed)) return NULL;
  return (ns_slot*)h;
}
static inline uint32_t ns_slot_slab(const ns_slot* s) {
  return (uint32_t)(((uintptr_t)s - (uintptr_t)ns_reg.base) >> ns_reg.shift);
}

/* Ends a stopped event's hold on slots: the parent's reference, if the
 * parent slot still holds the event we attached to (S4 may have
 * force-recycled it), then the event's own running reference. Called by the
 * writer when it drains the STOP entry (S7), or by the stopper itself when
 * that entry was dropped. Release decrements: S2. */
static inline void ns_slot_release(ns_slot* s) {
  ns_slot* p = (ns_slot*)(uintptr_t)atomic_load_explicit(&s->parent, memory_order_relaxed);
  if (p && atomic_load_explicit(&p->id, memory_order_relaxed) ==
               atomic_load_explicit(&s->parent_id, memory_order_relaxed))
    atomic_fetch_sub_explicit(&p->refs, 1, memory_order_release);
  atomic_fetch_sub_explicit(&s->refs, 1, memory_order_release);
}

/* Writer: faults in never-used slots of slab k ahead of the allocators, so
 * that a fresh slot does not cost its starter a page fault. */
void ns_slab_prefault(uint32_t k);

/* Hot path: a free slot of slab k or NULL (exhausted). */
NS_HOT ns_slot* ns_slab_alloc(uint32_t k);
/* Writer: returns slot `s` of slab k to the FIFO. */
void ns_slab_free(uint32_t k, ns_slot* s);
/* Free slots left (approximate; writer's pressure check). */
uint32_t ns_slab_free_count(uint32_t k);

#endif
