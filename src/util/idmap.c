/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the id hash map (see idmap.h). Single-threaded. */
#include "util/idmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t ns_idmap_mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

uint64_t ns_idmap_text_key(uint64_t seed, const char* s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  h = ns_idmap_mix(h ^ n);
  return h ? h : 1;
}

/* The bucket a key probes from: multiplicative (Fibonacci) hashing, the
 * high bits of key * 2^64/phi. One multiply: ids are mostly consecutive
 * counters, which it spreads evenly; callers fold other keys with
 * ns_idmap_mix first. */
static size_t home(const ns_idmap* m, uint64_t key) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

void ns_idmap_init(ns_idmap* m) { memset(m, 0, sizeof *m); }

void ns_idmap_free(ns_idmap* m) {
  free(m->b);
  memset(m, 0, sizeof *m);
}

uint64_t* ns_idmap_get(const ns_idmap* m, uint64_t key) {
  if (!key || !m->cap) return NULL;
  for (size_t i = home(m, key);; i = (i + 1) & (m->cap - 1)) {
    if (m->b[i].key == key) return &m->b[i].val;
    if (!m->b[i].key) return NULL;
  }
}

static int grow(ns_idmap* m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  ns_idmap_bucket* b = calloc(cap, sizeof *b);
  if (!b) return -1;
  ns_idmap old = *m;
  m->b = b;
  m->cap = cap;
  m->shift = 64 - (unsigned)__builtin_ctzll(cap);
  for (size_t j = 0; j < old.cap; j++) {
    if (!old.b[j].key) continue;
    size_t i = home(m, old.b[j].key);
    while (b[i].key) i = (i + 1) & (cap - 1);
    b[i] = old.b[j];
  }
  free(old.b);
  return 0;
}

uint64_t* ns_idmap_put(ns_idmap* m, uint64_t key, int* inserted) {
  *inserted = 0;
  if (!key) return NULL;
  if ((m->len + 1) * 2 > m->cap) { /* full enough to grow: only for a key not there yet */
    uint64_t* v = ns_idmap_get(m, key);
    if (v) return v;
    if (grow(m) != 0) return NULL;
  }
  /* One probe run: the key, or the empty bucket that ends its run. */
  size_t i = home(m, key);
  while (m->b[i].key && m->b[i].key != key) i = (i + 1) & (m->cap - 1);
  if (m->b[i].key) return &m->b[i].val;
  m->b[i].key = key;
  m->b[i].val = 0;
  m->len++;
  *inserted = 1;
  return &m->b[i].val;
}

int ns_idmap_del(ns_idmap* m, uint64_t key) {
  if (!key || !m->cap) return 0;
  size_t mask = m->cap - 1, i = home(m, key);
  while (m->b[i].key != key) {
    if (!m->b[i].key) return 0;
    i = (i + 1) & mask;
  }
  /* Backward shift: an entry after the hole moves into it unless its home
   * lies in the cyclic range (hole, entry], where the hole does not break
   * its probe run. */
  for (size_t j = (i + 1) & mask; m->b[j].key; j = (j + 1) & mask) {
    size_t h = home(m, m->b[j].key);
    if (((j - h) & mask) >= ((j - i) & mask)) {
      m->b[i] = m->b[j];
      i = j;
    }
  }
  m->b[i].key = 0;
  m->len--;
  return 1;
}

int ns_idmap_next(const ns_idmap* m, size_t* pos, uint64_t* key, uint64_t* val) {
  for (size_t i = *pos; i < m->cap; i++)
    if (m->b[i].key) {
      *key = m->b[i].key;
      *val = m->b[i].val;
      *pos = i + 1;
      return 1;
    }
  *pos = m->cap;
  return 0;
}

uint64_t* ns_idmap_home_make(ns_idmap_recent* r, ns_idmap* m, uint64_t key, int* made) {
  uint64_t* v = ns_idmap_get(m, key);
  if (v || !key) return v;
  ns_idmap_bucket* b = ns_idmap_recent_slot(r, key);
  int inserted;
  if (b->key) {
    uint64_t* moved = ns_idmap_put(m, b->key, &inserted);
    if (!moved) { /* no room to move the occupant: the key lives in the map, if there is room there */
      v = ns_idmap_put(m, key, &inserted);
      *made = v != NULL;
      return v;
    }
    *moved = b->val;
  }
  b->key = key;
  b->val = 0;
  *made = 1;
  return &b->val;
}
