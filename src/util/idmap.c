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

/* The bucket a key probes from: multiplicative (Fibonacci) hashing, the
 * high bits of key * 2^64/phi. One multiply: ids are mostly consecutive
 * counters, which it spreads evenly; callers fold other keys with
 * ns_idmap_mix first. */
static size_t home(const ns_idmap* m, uint64_t key) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

void ns_idmap_init(ns_idmap* m) { memset(m, 0, sizeof *m); }

void ns_idmap_free(ns_idmap* m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

uint64_t* ns_idmap_get(const ns_idmap* m, uint64_t key) {
  if (!key || !m->cap) return NULL;
  for (size_t i = home(m, key);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) return &m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

static int grow(ns_idmap* m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  uint64_t* keys = calloc(cap, sizeof *keys);
  uint64_t* vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  ns_idmap old = *m;
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  m->shift = 64 - (unsigned)__builtin_ctzll(cap);
  for (size_t j = 0; j < old.cap; j++) {
    if (!old.keys[j]) continue;
    size_t i = home(m, old.keys[j]);
    while (keys[i]) i = (i + 1) & (cap - 1);
    keys[i] = old.keys[j];
    vals[i] = old.vals[j];
  }
  free(old.keys);
  free(old.vals);
  return 0;
}

uint64_t* ns_idmap_put(ns_idmap* m, uint64_t key, int* inserted) {
  *inserted = 0;
  if (!key) return NULL;
  uint64_t* v = ns_idmap_get(m, key);
  if (v) return v;
  if ((m->len + 1) * 2 > m->cap && grow(m) != 0) return NULL;
  size_t i = home(m, key);
  while (m->keys[i]) i = (i + 1) & (m->cap - 1);
  m->keys[i] = key;
  m->vals[i] = 0;
  m->len++;
  *inserted = 1;
  return &m->vals[i];
}

int ns_idmap_del(ns_idmap* m, uint64_t key) {
  if (!key || !m->cap) return 0;
  size_t mask = m->cap - 1, i = home(m, key);
  while (m->keys[i] != key) {
    if (!m->keys[i]) return 0;
    i = (i + 1) & mask;
  }
  /* Backward shift: an entry after the hole moves into it unless its home
   * lies in the cyclic range (hole, entry], where the hole does not break
   * its probe run. */
  for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
    size_t h = home(m, m->keys[j]);
    if (((j - h) & mask) >= ((j - i) & mask)) {
      m->keys[i] = m->keys[j];
      m->vals[i] = m->vals[j];
      i = j;
    }
  }
  m->keys[i] = 0;
  m->len--;
  return 1;
}

int ns_idmap_next(const ns_idmap* m, size_t* pos, uint64_t* key, uint64_t* val) {
  for (size_t i = *pos; i < m->cap; i++)
    if (m->keys[i]) {
      *key = m->keys[i];
      *val = m->vals[i];
      *pos = i + 1;
      return 1;
    }
  *pos = m->cap;
  return 0;
}
