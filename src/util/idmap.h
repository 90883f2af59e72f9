/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the one hash map for every id table (events by id, strings by
 * id or hash, tracks by key): 64-bit keys to 64-bit values.
 *
 * Open addressing with linear probing; a removal shifts the entries of its
 * probe run back, so no tombstones accumulate and lookups stay short
 * however many keys come and go. The table doubles at half full. Key 0 is
 * never stored (it marks an empty bucket): callers use ids, which are never
 * 0, or set a high bit. Values are the caller's: an index, a pointer, a
 * count. Single-threaded; never on NCCL's threads (it allocates).
 */
#ifndef NCCLSCOPE_UTIL_IDMAP_H
#define NCCLSCOPE_UTIL_IDMAP_H

#include <stddef.h>
#include <stdint.h>

/* A key beside its value: a lookup on a cold table costs one cache miss, not two. */
typedef struct {
  uint64_t key; /* 0: empty bucket */
  uint64_t val;
} ns_idmap_bucket;

typedef struct {
  ns_idmap_bucket* b;
  size_t cap;     /* buckets, a power of two (0 before the first insert) */
  size_t len;     /* keys stored */
  unsigned shift; /* 64 - log2(cap) */
} ns_idmap;

/* An empty map (no allocation until the first insert). */
void ns_idmap_init(ns_idmap* m);
void ns_idmap_free(ns_idmap* m);
/* The value slot of key, or NULL when absent (or key 0). */
uint64_t* ns_idmap_get(const ns_idmap* m, uint64_t key);
/* The value slot of key, inserted with value 0 when absent (*inserted = 1).
 * NULL when out of memory or key 0; the map is unchanged then. The slot is
 * valid until the next insert or removal. */
uint64_t* ns_idmap_put(ns_idmap* m, uint64_t key, int* inserted);
/* Removes key; 1 if it was there. */
int ns_idmap_del(ns_idmap* m, uint64_t key);

/* Iteration over the stored keys, in no order; the map must not change
 * during it:  for (size_t i = 0; ns_idmap_next(m, &i, &k, &v);) ...  */
int ns_idmap_next(const ns_idmap* m, size_t* pos, uint64_t* key, uint64_t* val);

/* The bijective 64-bit mix the map hashes keys with; callers use it to
 * fold larger keys (a string, a tuple) into one 64-bit key. */
uint64_t ns_idmap_mix(uint64_t k);
/* A key for the n bytes at s in the space of seed (a table, a sequence):
 * FNV-1a over seed and bytes, folded by ns_idmap_mix; never 0. Distinct
 * strings may collide (1 in 2^64 a pair): for tables where that is harmless
 * or checked. */
uint64_t ns_idmap_text_key(uint64_t seed, const char* s, size_t n);

/* A direct-mapped table of recent keys beside a map, for ids looked up soon
 * after they were put (a state or a stop names an event its thread started a
 * few events before): slot key % NS_IDMAP_RECENT holds one pair. It is the
 * home of the newest keys (the assembler's entries: ns_idmap_home_*): a key
 * goes into the map only when a newer key takes its slot, so a key lives in
 * exactly one of the two, and the many that come and go within a few
 * hundred others never touch the map. Key 0 is never stored, as in the map. */
#define NS_IDMAP_RECENT 512u

typedef struct {
  ns_idmap_bucket slot[NS_IDMAP_RECENT];
} ns_idmap_recent;

/* The slot of key: its pair, another key's, or an empty one (key 0). */
static inline ns_idmap_bucket* ns_idmap_recent_slot(ns_idmap_recent* r, uint64_t key) {
  return &r->slot[key % NS_IDMAP_RECENT];
}

/* ns_idmap_home_slot with make, past the recent table (idmap.c). */
uint64_t* ns_idmap_home_make(ns_idmap_recent* r, ns_idmap* m, uint64_t key, int* made);

/* The value slot of key in its home, the recent table r or the map m; NULL
 * when it is in neither. With make, a key in neither is put in its slot of
 * r, value 0 (*made = 1), and the slot's occupant moves to m (the key goes
 * to m itself when there is no room for that move); NULL then only when out
 * of memory (nothing changed) or key 0. The slot is valid until r or m next
 * changes. */
static inline uint64_t* ns_idmap_home_slot(ns_idmap_recent* r, ns_idmap* m, uint64_t key, int make, int* made) {
  ns_idmap_bucket* b = ns_idmap_recent_slot(r, key);
  *made = 0;
  if (b->key == key && key) return &b->val;
  return make ? ns_idmap_home_make(r, m, key, made) : ns_idmap_get(m, key);
}

/* Takes key out of wherever it lives. */
static inline void ns_idmap_home_del(ns_idmap_recent* r, ns_idmap* m, uint64_t key) {
  ns_idmap_bucket* b = ns_idmap_recent_slot(r, key);
  if (b->key == key)
    b->key = b->val = 0;
  else
    ns_idmap_del(m, key);
}

#endif
