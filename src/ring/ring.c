/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the ring pool. Created by the first init of a session and
 * destroyed by the last finalize (after the writer thread was joined).
 * Claiming runs once per producer thread (cold: a CAS scan, gettid, the
 * thread name); draining runs on the writer thread. */
#include "ring/ring.h"

#include "util/populate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread ns_ring_tls ns_tls __attribute__((tls_model("initial-exec")));
/* R6: bumped (relaxed) by session start before any context is published;
 * hot-path readers only compare it with their TLS copy, and the context
 * publication (init's return to NCCL) orders it for them. */
_Atomic uint32_t ns_ring_gen;

static ns_ring* g_rings;
static uint32_t g_count;
static size_t g_ring_bytes;
static uint8_t* g_words_region;
static pthread_key_t g_key;
static int g_key_ok;
static _Atomic uint32_t g_next_serial; /* claim only (cold): relaxed RMW, uniqueness is all it gives */
static _Atomic uint32_t g_claim_cursor; /* claim only: a hint where to start scanning */
static _Atomic uint64_t g_unringed_drops; /* relaxed RMW counter, read after join */

static void ring_thread_exit(void* p) {
  ns_ring* r = p;
  /* R5: release hands the ring's last entries over with it; the writer
   * acquires the state, drains, then frees the ring. */
  uint32_t owned = NS_RING_OWNED;
  atomic_compare_exchange_strong_explicit(&r->state, &owned, NS_RING_DEAD, memory_order_release,
                                          memory_order_relaxed);
}

void ns_ring_prefault(ns_ring* r) {
  if (r->w_populated) return;
  r->w_populated = 1; /* once: a kernel without MADV_POPULATE_WRITE is not asked again */
  (void)ns_populate_write(r->words, (size_t)(r->mask + 1) * sizeof(uint64_t));
}

int ns_ring_pool_create(uint32_t count, uint32_t bytes) {
  size_t rb = 4096;
  while (rb < bytes) rb <<= 1;
  g_rings = calloc(count, sizeof *g_rings);
  if (!g_rings) return -1;
  void* region = mmap(NULL, rb * count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) goto free_rings;
  if (pthread_key_create(&g_key, ring_thread_exit) != 0) goto unmap;
  g_key_ok = 1;
  g_words_region = region;
  g_ring_bytes = rb;
  g_count = count;
  for (uint32_t i = 0; i < count; i++) {
    ns_ring* r = &g_rings[i];
    r->words = (uint64_t*)(g_words_region + (size_t)i * rb);
    r->mask = rb / 8 - 1;
    r->index = i;
  }
  atomic_store_explicit(&g_next_serial, 0, memory_order_relaxed);
  atomic_store_explicit(&g_claim_cursor, 0, memory_order_relaxed);
  atomic_store_explicit(&g_unringed_drops, 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&ns_ring_gen, 1, memory_order_relaxed); /* R6 */
  return 0;
unmap:
  munmap(region, rb * count);
free_rings:
  free(g_rings);
  g_rings = NULL;
  return -1;
}

void ns_ring_pool_destroy(void) {
  if (g_key_ok) pthread_key_delete(g_key); /* no destructor may run into unloaded code */
  g_key_ok = 0;
  /* R5: acquire pairs with the release CAS of ring_thread_exit: a producer
   * thread that exited after the writer's last drain has its destructor's
   * write to the ring happen before the ring memory is freed below. */
  for (uint32_t i = 0; i < g_count; i++) (void)atomic_load_explicit(&g_rings[i].state, memory_order_acquire);
  if (g_words_region) munmap(g_words_region, g_ring_bytes * g_count);
  free(g_rings);
  g_rings = NULL;
  g_words_region = NULL;
  g_count = 0;
  g_ring_bytes = 0;
  /* The next session gets a new generation, so stale TLS pointers are ignored. */
  atomic_fetch_add_explicit(&ns_ring_gen, 1, memory_order_relaxed);
}

uint32_t ns_ring_pool_count(void) { return g_count; }
ns_ring* ns_ring_pool_get(uint32_t i) { return i < g_count ? &g_rings[i] : NULL; }
uint64_t ns_ring_pool_unringed_drops(void) {
  return atomic_load_explicit(&g_unringed_drops, memory_order_relaxed);
}
void ns_ring_count_unringed(void) { atomic_fetch_add_explicit(&g_unringed_drops, 1, memory_order_relaxed); }

ns_ring* ns_ring_claim_slow(void) {
  uint32_t gen = atomic_load_explicit(&ns_ring_gen, memory_order_relaxed);
  ns_tls.gen = gen;
  ns_tls.ring = NS_RING_NONE;
  if (!g_rings) return NULL;
  uint32_t start = atomic_fetch_add_explicit(&g_claim_cursor, 1, memory_order_relaxed);
  for (uint32_t k = 0; k < g_count; k++) {
    ns_ring* r = &g_rings[(start + k) % g_count];
    uint32_t expect = NS_RING_FREE;
    /* R5: acquire pairs with the writer's release when it freed the ring
     * after draining it: the previous owner's words are consumed. */
    if (!atomic_compare_exchange_strong_explicit(&r->state, &expect, NS_RING_OWNED, memory_order_acquire,
                                                 memory_order_relaxed))
      continue;
    r->serial = atomic_fetch_add_explicit(&g_next_serial, 1, memory_order_relaxed) + 1;
    /* Ids are unique while fewer than 2^16 claims separate two rings' owners
     * (a handle holds 56 bits of id); the trace's ring serial stays whole. */
    r->id_base = (uint64_t)(r->serial & 0xFFFFu) << 40;
    memset(r->collapse, 0, sizeof r->collapse);
    r->next_id = 0;
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* ordered by the CAS above */
    r->pending_head = atomic_load_explicit(&r->head, memory_order_relaxed);
    r->prefetched = r->pending_head;
    r->tid = (uint32_t)syscall(SYS_gettid);
    memset(r->name, 0, sizeof r->name);
    prctl(PR_GET_NAME, r->name, 0, 0, 0);
    r->name[sizeof r->name - 1] = 0;
    if (g_key_ok) pthread_setspecific(g_key, r);
    ns_tls.ring = r;
    return r;
  }
  return NULL;
}

int ns_ring_has_data(ns_ring* r) {
  return atomic_load_explicit(&r->head, memory_order_acquire) !=
         atomic_load_explicit(&r->tail, memory_order_relaxed);
}

unsigned ns_ring_fill_percent(ns_ring* r) {
  uint64_t used = atomic_load_explicit(&r->head, memory_order_relaxed) -
                  atomic_load_explicit(&r->tail, memory_order_relaxed);
  return (unsigned)(used * 100 / (r->mask + 1));
}

/* Whether an entry of n words at tail lies within the published words and
 * does not wrap (a broken invariant otherwise: the caller stops reading). */
static inline int entry_ok(const ns_ring* r, uint64_t tail, uint64_t head, uint32_t n) {
  return n != 0 && n <= head - tail && (tail & r->mask) + n <= r->mask + 1;
}

const uint64_t* ns_ring_find_start(ns_ring* r, uint64_t id) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire); /* R2 */
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);  /* own variable */
  while (tail < head) {
    const uint64_t* e = &r->words[tail & r->mask];
    uint32_t n = NS_ENT_WORDS(e[NS_ENT_W0]);
    if (!entry_ok(r, tail, head, n)) return NULL;
    if (NS_ENT_KIND(e[NS_ENT_W0]) == NS_ENT_START && n > NS_ENT_ID && e[NS_ENT_ID] == id) return e;
    tail += n;
  }
  return NULL;
}

uint64_t ns_ring_drain(ns_ring* r, ns_ring_entry_fn fn, void* user) {
  /* R2: acquire pairs with the producer's release of head (R1). */
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* own variable */
  uint64_t start = tail;
  while (tail < head) {
    const uint64_t* e = &r->words[tail & r->mask];
    uint32_t n = NS_ENT_WORDS(e[NS_ENT_W0]);
    if (!entry_ok(r, tail, head, n)) {
      tail = head; /* broken invariant: discard, never crash */
      break;
    }
    if (NS_ENT_KIND(e[NS_ENT_W0]) != NS_ENT_PAD) fn(user, r, e, n);
    uint64_t before = tail;
    tail += n;
    /* R3 every 4096 words: a long drain (the analysis runs inside fn) gives
     * the producer its space back as it goes, not only at the end. */
    if ((before ^ tail) >> 12) atomic_store_explicit(&r->tail, tail, memory_order_release);
  }
  /* R3: release: our reads of the consumed words happen before the producer
   * may overwrite them (its acquire of tail, R4). */
  atomic_store_explicit(&r->tail, tail, memory_order_release);
  return tail - start;
}
