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
#include "ring/ring.h"

#define NS_MAX_CONTEXTS 256
#define NS_PXN_SLAB NS_MAX_CONTEXTS
#define NS_MAX_SLABS (NS_MAX_CONTEXTS + 1)

/* One event. A handle given to NCCL is the slot's address with the slot's
 * generation in the top 16 bits (ns_handle): the writer bumps the generation
 * when it recycles the slot, so a handle NCCL keeps after its event ended
 * (a parent named seconds later, a late stop) is told apart from the event
 * that reuses the slot, by a compare, never attached to it. Fields other
 * threads read are atomics (orderings: docs/memory-ordering.md, S1..S6). */
typedef struct ns_slot {
  _Atomic uint64_t id;       /* event id; W: starter, release (S3); R: children acquire (S5) */
  _Atomic uint64_t meta;     /* entry head bits (type, flags, ctx) | comm << 32 (ns_slot_meta) */
  _Atomic uint32_t gen;      /* generation of the handle out now (its low 16 bits are the handle's); W: the
                              * allocator once, when the slot is first handed out (its slab's epoch), then
                              * the writer at recycling (S4) */
  _Atomic uint32_t running;  /* ns_running_tag(handle's gen16) from start to stop, else 0 (S6) */
  _Atomic uint32_t origin_pid; /* PXN: the process the event runs for */
  _Atomic uint32_t last_state; /* state collapse: the last state recorded + 1 (0: none), its thread only */
  _Atomic uint64_t last_arg;   /* and its argument */
  _Atomic uint32_t repeats;    /* identical states since, not yet recorded */
  char pad[20];
} ns_slot;
_Static_assert(sizeof(ns_slot) == 64, "a slot is one cacheline: handle checks use a mask");

/* What the writer knows of a slot's occupant (recycle.c). Kept beside the
 * slab, not in the slot: the writer never writes a slot's line while its
 * event runs, so the recording thread keeps that line from start to stop
 * (its states and its stop write it) instead of fetching it back from the
 * writer's core after the writer drained the START. */
typedef struct {
  uint64_t id;       /* the occupant's id (from its START) */
  uint64_t start_ns; /* when the writer saw the start; 0: not yet, or recycled since */
  uint32_t type;     /* the occupant's type, and recycle.c's W_* bits */
  uint32_t conn;     /* a ProxyOp's connection (ns_recycle_conn), 0: none or unknown */
} ns_slot_w;

/* Handle <-> slot and generation. User-space addresses fit in 48 bits. */
#define NS_HANDLE_GEN_SHIFT 48
#define NS_HANDLE_ADDR_MASK ((UINT64_C(1) << NS_HANDLE_GEN_SHIFT) - 1)
static inline void* ns_handle(const ns_slot* s, uint32_t gen) {
  return (void*)((uintptr_t)s | (uintptr_t)(gen & 0xFFFFu) << NS_HANDLE_GEN_SHIFT);
}
static inline uint32_t ns_handle_gen(const void* h) { return (uint32_t)((uintptr_t)h >> NS_HANDLE_GEN_SHIFT); }

/* A slot's meta: its low 32 bits are word 0 of the event's ring entries
 * (ns_ent_w0) without kind and size, so that a state or a stop makes its
 * entry's word 0 with one OR (ns_slot_entry_w0); the high 32 bits are the
 * communicator serial. */
static inline uint64_t ns_slot_meta(unsigned type, unsigned flags, unsigned ctx, uint32_t comm) {
  return ns_ent_w0(0, type, flags, ctx, 0) | (uint64_t)comm << 32;
}
#define NS_META_TYPE(m) NS_ENT_TYPE(m)
#define NS_META_FLAGS(m) NS_ENT_FLAGS(m)
#define NS_META_CTX(m) NS_ENT_CTX(m)
#define NS_META_COMM(m) ((uint32_t)((m) >> 32))
/* Word 0 of an entry of kind `kind` and `nwords` words for the event of
 * this meta, with `flags` (NS_RF_*) added to the event's own. */
static inline uint64_t ns_slot_entry_w0(uint64_t meta, unsigned kind, unsigned flags, uint32_t nwords) {
  return (meta & 0xFFFFFFFFu) | ns_ent_w0(kind, 0, flags, 0, nwords);
}

typedef struct ns_slab {
  /* Read by every hot-path call, written only at (de)activation: stays
   * shared in every core's cache. Each slab starts a line of its own (the
   * lines below are per writer only if the slab is line-aligned). */
  _Alignas(64) ns_slot* slots;
  _Atomic uint32_t* queue;    /* free slot indices, FIFO */
  uint32_t n;                 /* slots (power of two) */
  _Atomic uint32_t active;    /* 1 while a context owns it; W init/writer, R hot path relaxed */
  /* activations so far (W: writer at release, R: hot path relaxed, S4) */
  _Atomic uint32_t epoch;
  char pad0[36];
  /* Written by the allocating threads (a start each): their own line, so
   * that a start on one thread does not evict the line above from another
   * thread's cache. */
  _Atomic uint32_t fresh;     /* never-used slots handed out so far (S1) */
  char pad1[4];
  _Atomic uint64_t q_head;    /* consumers (allocating threads) CAS, S1 */
  char pad2[48];
  _Atomic uint64_t q_tail;    /* writer (only producer) release, S1 */
  char pad3[56];
  /* Writer only: slots whose start it saw, in start order. */
  uint32_t* live;
  uint32_t nlive;
  /* Slots [0, populated) are faulted in (set by activate before the context
   * is published, then advanced by the writer only; ns_slab_prefault). */
  uint32_t populated;
  ns_slot_w* w; /* writer only: w[i] is slot i's occupant; zero pages after release */
  char pad4[40];
} ns_slab;
_Static_assert(offsetof(ns_slab, fresh) == 64 && offsetof(ns_slab, q_tail) == 128, "ns_slab: one line per writer");
/* A power of two: a handle's slab is found with a shift, not a multiply. */
_Static_assert(sizeof(ns_slab) == 256, "ns_slab: four lines");

typedef struct {
  uint8_t* base;   /* slots of every slab, slab k at base + k * slab_bytes */
  size_t slab_bytes;
  size_t total;    /* NS_MAX_SLABS * slab_bytes */
  uint32_t n;      /* slots per slab */
  uint32_t shift;  /* log2(slab_bytes) */
  uint8_t* wbase;  /* the slabs' ns_slot_w arrays, slab k's at wbase + k * w_bytes */
  size_t w_bytes;
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

/* Hot path: the slot `h` names, or NULL if `h` is not a slot of an active
 * slab. Whether the slot still holds h's event is the generation's to say
 * (ns_slot_current). */
static inline ns_slot* ns_slot_from_handle(const void* h) {
  uintptr_t addr = (uintptr_t)h & NS_HANDLE_ADDR_MASK;
  uintptr_t off = addr - (uintptr_t)ns_reg.base;
  if (off >= ns_reg.total || (off & (sizeof(ns_slot) - 1))) return NULL;
  /* An inactive slab may be PROT_NONE: never touch it. */
  if (!atomic_load_explicit(&ns_reg.slabs[off >> ns_reg.shift].active, memory_order_relaxed)) return NULL;
  return (ns_slot*)addr;
}
static inline uint32_t ns_slot_slab(const ns_slot* s) {
  return (uint32_t)(((uintptr_t)s - (uintptr_t)ns_reg.base) >> ns_reg.shift);
}
/* Writer: what it knows of slot s's occupant. */
static inline ns_slot_w* ns_slot_writer(const ns_slot* s) {
  ns_slab* sl = &ns_reg.slabs[ns_slot_slab(s)];
  return &sl->w[s - sl->slots];
}

/* A handle's 16 generation bits. A slot's generation starts, when the slot
 * is first handed out after its slab was (re)activated, at an offset given
 * by the slab's activations (ns_epoch_gen, in ns_slab_alloc), so that a
 * handle of an earlier communicator in the same slab (whose slots were
 * zeroed when it ended) does not match a new event; from then on the hot
 * path reads it as it is. */
static inline uint32_t ns_gen16(uint32_t gen) { return gen & 0xFFFFu; }
static inline uint32_t ns_epoch_gen(uint32_t epoch) { return (epoch * 0x9E37u) & 0xFFFFu; }
/* `running` while the event of the handle with these generation bits runs:
 * one compare checks both that the slot still holds the handle's event and
 * that it was not stopped (S6). Never 0. */
static inline uint32_t ns_running_tag(uint32_t gen16) { return 0x10000u | gen16; }
static inline void* ns_slot_handle(const ns_slot* s) {
  return ns_handle(s, ns_gen16(atomic_load_explicit(&s->gen, memory_order_relaxed)));
}

/* Does slot s still hold the event of handle h (relaxed: a check of the
 * hot path's own calls; see ns_slot_read_id for a parent's id)? */
static inline int ns_slot_current(const ns_slot* s, const void* h) {
  return ns_gen16(atomic_load_explicit(&s->gen, memory_order_relaxed)) == ns_handle_gen(h);
}

/* The id of the event handle h named, if slot s still holds it: a seqlock
 * read (S5). 0 if the writer recycled the slot meanwhile. */
static inline uint64_t ns_slot_read_id(const ns_slot* s, const void* h, uint64_t* meta) {
  uint32_t g1 = atomic_load_explicit(&s->gen, memory_order_acquire);
  uint64_t id = atomic_load_explicit(&s->id, memory_order_acquire);
  *meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint32_t g2 = atomic_load_explicit(&s->gen, memory_order_relaxed);
  return g1 == g2 && ns_gen16(g1) == ns_handle_gen(h) ? id : 0;
}

/* Writer: faults in never-used slots of slab k ahead of the allocators, so
 * that a fresh slot does not cost its starter a page fault. */
void ns_slab_prefault(uint32_t k);

/* Hot path: a free slot of slab k or NULL (exhausted). */
NS_HOT ns_slot* ns_slab_alloc(uint32_t k);
/* Writer: ends slot `s`'s current handle (generation + 1) and returns it to the FIFO of slab k. */
void ns_slab_free(uint32_t k, ns_slot* s);
/* Free slots left (approximate; writer's pressure check). */
uint32_t ns_slab_free_count(uint32_t k);

#endif
