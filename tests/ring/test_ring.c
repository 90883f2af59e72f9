/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope ring unit test: per-thread rings. Wrap with PAD entries,
 * full-ring drops, and a multi-producer stress with a concurrent consumer
 * checking written = read + dropped, per-producer order and content, and
 * id uniqueness across threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "ring/ring.h"

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* ---- single thread: wrap and full ---- */
static uint64_t seen_words, seen_entries;
static void count_fn(void* u, ns_ring* r, const uint64_t* e, uint32_t n) {
  (void)u, (void)r;
  seen_entries++;
  seen_words += n;
  for (uint32_t i = 1; i < n; i++) CHECK_U64(e[i], e[1] + i - 1);
}

static void single(void) {
  CHECK_U64(ns_ring_pool_create(2, 4096), 0);
  ns_ring* r = ns_ring_self();
  CHECK_TRUE(r != NULL);
  CHECK_TRUE(ns_ring_self() == r);
  CHECK_U64(r->mask + 1, 512);
  uint64_t written = 0, full = 0, val = 0;
  for (int round = 0; round < 50; round++) {
    for (int k = 0; k < 40; k++) {
      uint32_t n = 3 + (uint32_t)((round * 7 + k) % 29);
      uint64_t* w = ns_ring_reserve(r, n);
      if (!w) {
        full++;
        continue;
      }
      w[0] = ns_ent_w0(NS_ENT_STOP, 1, 0, 0, n);
      for (uint32_t i = 1; i < n; i++) w[i] = val + i - 1;
      val += 1000;
      ns_ring_commit(r);
      written++;
    }
    ns_ring_drain(r, count_fn, NULL);
  }
  CHECK_U64(seen_entries, written);
  CHECK_TRUE(full > 0); /* 40 entries of up to 31 words do not fit 512 words */
  CHECK_TRUE(atomic_load(&r->head) > 512 * 10); /* wrapped many times */
  ns_ring_pool_destroy();
}

/* ---- stress ---- */
enum { PRODUCERS = 3, PER = 200000 };
static _Atomic int done_producers;
static uint64_t dropped[PRODUCERS], written_n[PRODUCERS], read_n[PRODUCERS], last_seq[PRODUCERS];
static uint64_t* ids[PRODUCERS];
static int order_errors;

static void* producer(void* arg) {
  int p = (int)(intptr_t)arg;
  ns_ring* r = ns_ring_self();
  ids[p] = malloc(PER * sizeof(uint64_t));
  for (uint64_t i = 0; i < PER; i++) {
    ids[p][i] = ns_ring_next_id(r);
    uint32_t n = 4 + (uint32_t)(i % 13);
    uint64_t* w = ns_ring_reserve(r, n);
    if (!w) {
      dropped[p]++;
      continue;
    }
    w[0] = ns_ent_w0(NS_ENT_START, 0, 0, (unsigned)p, n);
    w[1] = i + 1;
    for (uint32_t k = 2; k < n; k++) w[k] = (i + 1) * 31 + k;
    ns_ring_commit(r);
    written_n[p]++;
  }
  atomic_fetch_add(&done_producers, 1);
  return NULL;
}

static void stress_fn(void* u, ns_ring* r, const uint64_t* e, uint32_t n) {
  (void)u, (void)r;
  unsigned p = NS_ENT_CTX(e[0]);
  if (p >= PRODUCERS) {
    order_errors++;
    return;
  }
  if (e[1] <= last_seq[p]) order_errors++;
  last_seq[p] = e[1];
  for (uint32_t k = 2; k < n; k++)
    if (e[k] != e[1] * 31 + k) order_errors++;
  read_n[p]++;
}

static void stress(void) {
  CHECK_U64(ns_ring_pool_create(PRODUCERS + 1, 16384), 0);
  pthread_t th[PRODUCERS];
  for (int p = 0; p < PRODUCERS; p++) pthread_create(&th[p], NULL, producer, (void*)(intptr_t)p);
  while (atomic_load(&done_producers) < PRODUCERS)
    for (uint32_t i = 0; i < ns_ring_pool_count(); i++) ns_ring_drain(ns_ring_pool_get(i), stress_fn, NULL);
  for (int p = 0; p < PRODUCERS; p++) pthread_join(th[p], NULL);
  for (uint32_t i = 0; i < ns_ring_pool_count(); i++) ns_ring_drain(ns_ring_pool_get(i), stress_fn, NULL);
  uint64_t tw = 0, tr = 0, td = 0;
  for (int p = 0; p < PRODUCERS; p++) {
    CHECK_U64(written_n[p] + dropped[p], PER);
    CHECK_U64(read_n[p], written_n[p]);
    tw += written_n[p], tr += read_n[p], td += dropped[p];
  }
  CHECK_U64(order_errors, 0);
  printf("stress: written %llu = read %llu, dropped %llu\n", (unsigned long long)tw, (unsigned long long)tr,
         (unsigned long long)td);
  /* ids: unique across threads, no shared counter */
  uint64_t* all = malloc(PRODUCERS * PER * sizeof(uint64_t));
  for (int p = 0; p < PRODUCERS; p++) {
    for (int i = 0; i < PER; i++) all[(size_t)p * PER + i] = ids[p][i];
    free(ids[p]);
  }
  qsort(all, PRODUCERS * PER, sizeof *all, cmp_u64);
  int dups = 0;
  for (size_t i = 1; i < (size_t)PRODUCERS * PER; i++) dups += all[i] == all[i - 1];
  CHECK_U64(dups, 0);
  CHECK_TRUE(all[0] != 0);
  free(all);
  /* Threads exited: their rings went DEAD through the key destructor. */
  int dead = 0;
  for (uint32_t i = 0; i < ns_ring_pool_count(); i++)
    dead += atomic_load(&ns_ring_pool_get(i)->state) == NS_RING_DEAD;
  CHECK_U64(dead, PRODUCERS);
  ns_ring_pool_destroy();
}

int main(void) {
  single();
  stress();
  CHECK_DONE();
}
