/* ncclscope: slot region and per-slab FIFO allocator.
 * ns_region_create/destroy and ns_slab_activate run in init/finalize (cold,
 * under the lifecycle mutex); ns_slab_alloc on NCCL's threads (hot, lock-free);
 * ns_slab_free and ns_slab_release on the writer thread only.
 *
 * The region is reserved PROT_NONE and a slab is made writable when a
 * context takes it, so an idle slab costs address space only, even with
 * strict overcommit. */
#include "capture/slab.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/populate.h"

/* Never-used slots kept faulted in ahead of the allocators: more than one
 * poll period of events at millions per second (64 B each: 512 KiB). */
#define NS_PREFAULT_AHEAD 8192u

ns_region ns_reg;
static uint8_t* g_queue_base; /* per-slab queues, slab k at g_queue_base + k * queue_bytes */
static size_t g_queue_bytes;

/* Slab k's writer-side array (ns_slot_w), reserved with the region. */
static ns_slot_w* writer_array(uint32_t k) { return (ns_slot_w*)(ns_reg.wbase + (size_t)k * ns_reg.w_bytes); }

int ns_region_create(uint32_t slots_per_slab) {
  uint32_t n = 64;
  while (n < slots_per_slab && n < (1u << 24)) n <<= 1;
  size_t slab_bytes = (size_t)n * sizeof(ns_slot);
  size_t total = slab_bytes * NS_MAX_SLABS;
  size_t qbytes = ((size_t)n * sizeof(uint32_t) + 4095) & ~(size_t)4095;
  void* base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return -1;
  void* qbase = mmap(NULL, qbytes * NS_MAX_SLABS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (qbase == MAP_FAILED) goto unmap_base;
  size_t wbytes = ((size_t)n * sizeof(ns_slot_w) + 4095) & ~(size_t)4095;
  void* wbase = mmap(NULL, wbytes * NS_MAX_SLABS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (wbase == MAP_FAILED) goto unmap_queues;
  memset(&ns_reg, 0, sizeof ns_reg);
  ns_reg.base = base;
  ns_reg.slab_bytes = slab_bytes;
  ns_reg.total = total;
  ns_reg.n = n;
  ns_reg.shift = (uint32_t)__builtin_ctzll(slab_bytes);
  ns_reg.wbase = wbase;
  ns_reg.w_bytes = wbytes;
  g_queue_base = qbase;
  g_queue_bytes = qbytes;
  for (uint32_t k = 0; k < NS_MAX_SLABS; k++) {
    ns_slab* s = &ns_reg.slabs[k];
    s->slots = (ns_slot*)(ns_reg.base + (size_t)k * slab_bytes);
    s->queue = (_Atomic uint32_t*)(g_queue_base + (size_t)k * qbytes);
    s->w = writer_array(k);
    s->n = n;
  }
  return 0;
unmap_queues:
  munmap(qbase, qbytes * NS_MAX_SLABS);
unmap_base:
  munmap(base, total);
  return -1;
}

void ns_region_destroy(void) {
  for (uint32_t k = 0; k < NS_MAX_SLABS; k++) free(ns_reg.slabs[k].live);
  if (ns_reg.base) munmap(ns_reg.base, ns_reg.total);
  if (g_queue_base) munmap(g_queue_base, g_queue_bytes * NS_MAX_SLABS);
  if (ns_reg.wbase) munmap(ns_reg.wbase, ns_reg.w_bytes * NS_MAX_SLABS);
  memset(&ns_reg, 0, sizeof ns_reg);
  g_queue_base = NULL;
  g_queue_bytes = 0;
}

int ns_slab_activate(uint32_t k) {
  ns_slab* s = &ns_reg.slabs[k];
  if (!s->live) {
    s->live = malloc((size_t)s->n * sizeof *s->live);
    if (!s->live) return -1;
  }
  if (mprotect(s->slots, ns_reg.slab_bytes, PROT_READ | PROT_WRITE) != 0) return -1;
  if (mprotect((void*)s->queue, g_queue_bytes, PROT_READ | PROT_WRITE) != 0) return -1;
  if (mprotect(s->w, ns_reg.w_bytes, PROT_READ | PROT_WRITE) != 0) return -1;
  /* nlive belongs to the writer: 0 at region creation and after ns_slab_release. */
  atomic_store_explicit(&s->fresh, 0, memory_order_relaxed);
  atomic_store_explicit(&s->q_head, 0, memory_order_relaxed);
  atomic_store_explicit(&s->q_tail, 0, memory_order_relaxed);
  /* The first slots of a new communicator are faulted in here (cold path),
   * the rest by the writer as `fresh` advances. */
  s->populated = 0;
  ns_slab_prefault(k);
  /* Published to the hot path by init's return (the context pointer). */
  atomic_store_explicit(&s->active, 1, memory_order_release);
  return 0;
}

void ns_slab_release(uint32_t k) {
  ns_slab* s = &ns_reg.slabs[k];
  atomic_store_explicit(&s->active, 0, memory_order_relaxed);
  s->nlive = 0;
  /* the slots' generations restart with the zeroed pages, at the next
   * epoch's offset (ns_slab_alloc): the next communicator's handles differ
   * from this one's */
  atomic_store_explicit(&s->epoch, atomic_load_explicit(&s->epoch, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  /* Zero pages (stale handles then read running == 0) and give the memory back. */
  madvise(s->slots, ns_reg.slab_bytes, MADV_DONTNEED);
  madvise((void*)s->queue, g_queue_bytes, MADV_DONTNEED);
  madvise(s->w, ns_reg.w_bytes, MADV_DONTNEED); /* what the writer knew of them, too */
  atomic_store_explicit(&s->fresh, 0, memory_order_relaxed);
  atomic_store_explicit(&s->q_head, 0, memory_order_relaxed);
  atomic_store_explicit(&s->q_tail, 0, memory_order_relaxed);
  s->populated = 0;
}

void ns_slab_prefault(uint32_t k) {
  ns_slab* s = &ns_reg.slabs[k];
  if (s->populated >= s->n) return;
  uint32_t fresh = atomic_load_explicit(&s->fresh, memory_order_relaxed);
  if (fresh >= s->n) {
    s->populated = s->n; /* every slot was used once: all pages are in */
    return;
  }
  if (s->populated >= fresh + NS_PREFAULT_AHEAD / 2) return;
  uint32_t end = fresh + NS_PREFAULT_AHEAD;
  if (end > s->n) end = s->n;
  if (ns_populate_write(&s->slots[s->populated], (size_t)(end - s->populated) * sizeof(ns_slot)) != 0 ||
      ns_populate_write(&s->w[s->populated], (size_t)(end - s->populated) * sizeof(ns_slot_w)) != 0)
    end = s->n; /* unsupported kernel: stop trying, allocators (and the writer) fault pages in */
  s->populated = end;
}

ns_slot* ns_slab_alloc(uint32_t k) {
  ns_slab* s = &ns_reg.slabs[k];
  /* Fresh slots first: the FIFO of freed ones is used only when every slot
   * has been used once, so addresses come back as late as possible. */
  if (atomic_load_explicit(&s->fresh, memory_order_relaxed) < s->n) {
    /* S1: relaxed RMW: it only hands out distinct indices; a fresh slot has
     * no previous user whose writes we must see. */
    uint32_t i = atomic_fetch_add_explicit(&s->fresh, 1, memory_order_relaxed);
    if (i < s->n) {
      /* the slot after it is most likely this thread's next: fetch it for writing now */
      if (i + 1 < s->n) __builtin_prefetch(&s->slots[i + 1], 1, 3);
      /* its first generation (the writer reads it once it drained our START, S4) */
      atomic_store_explicit(&s->slots[i].gen, ns_epoch_gen(atomic_load_explicit(&s->epoch, memory_order_relaxed)),
                            memory_order_relaxed);
      return &s->slots[i];
    }
  }
  uint64_t head = atomic_load_explicit(&s->q_head, memory_order_relaxed);
  for (;;) {
    /* S1: acquire pairs with the writer's release of q_tail: the queue entry
     * and the writer's last touches of that slot are visible. */
    uint64_t tail = atomic_load_explicit(&s->q_tail, memory_order_acquire);
    if (head >= tail) return NULL;
    uint32_t idx = atomic_load_explicit(&s->queue[head & (s->n - 1)], memory_order_relaxed);
    /* A stale `head` makes the CAS fail, and the value read is discarded:
     * the writer can only overwrite position `head` after it was consumed. */
    if (atomic_compare_exchange_weak_explicit(&s->q_head, &head, head + 1, memory_order_acquire,
                                              memory_order_relaxed)) {
      /* The next allocation's slot, from the queue line just read: the
       * writer wrote it when it recycled it, so fetch it for writing now.
       * Possibly not yet produced (a stale index): a hint, bounds-checked. */
      uint32_t next = atomic_load_explicit(&s->queue[(head + 1) & (s->n - 1)], memory_order_relaxed);
      if (next < s->n) __builtin_prefetch(&s->slots[next], 1, 3);
      return idx < s->n ? &s->slots[idx] : NULL;
    }
  }
}

void ns_slab_free(uint32_t k, ns_slot* slot) {
  ns_slab* s = &ns_reg.slabs[k];
  /* S4: the handle out for this event is over: every later use of it fails
   * its generation check (the release store of q_tail publishes this before
   * the slot can be handed out again). Writer only: no RMW needed. */
  atomic_store_explicit(&slot->gen, atomic_load_explicit(&slot->gen, memory_order_relaxed) + 1, memory_order_relaxed);
  atomic_store_explicit(&slot->running, 0, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&s->q_tail, memory_order_relaxed); /* writer's own */
  atomic_store_explicit(&s->queue[tail & (s->n - 1)], (uint32_t)(slot - s->slots), memory_order_relaxed);
  /* S1: release publishes the queue entry and our recycling of the slot. */
  atomic_store_explicit(&s->q_tail, tail + 1, memory_order_release);
}

uint32_t ns_slab_free_count(uint32_t k) {
  ns_slab* s = &ns_reg.slabs[k];
  uint32_t fresh = atomic_load_explicit(&s->fresh, memory_order_relaxed);
  uint64_t q = atomic_load_explicit(&s->q_tail, memory_order_relaxed) -
               atomic_load_explicit(&s->q_head, memory_order_relaxed);
  return (fresh < s->n ? s->n - fresh : 0) + (uint32_t)q;
}
