/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the trace's string table (strtab.h). Strings are found by a
 * 64-bit hash of their bytes (src/util/idmap); by_id keeps the copies. */
#include "writer/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"

struct ns_strtab {
  ns_idmap by_hash;   /* FNV-1a 64 of the bytes -> id */
  char** by_id;       /* by_id[id]: the interned copy, NUL-terminated */
  uint32_t by_id_cap, next_id;
};

ns_strtab* ns_strtab_new(void) {
  ns_strtab* t = calloc(1, sizeof *t);
  if (!t) return NULL;
  ns_idmap_init(&t->by_hash);
  t->next_id = 1;
  return t;
}

void ns_strtab_free(ns_strtab* t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->by_id_cap; i++) free(t->by_id[i]);
  free(t->by_id);
  ns_idmap_free(&t->by_hash);
  free(t);
}

const char* ns_strtab_str(const ns_strtab* t, uint32_t id) {
  if (!t || id == 0 || id >= t->by_id_cap) return NULL;
  return t->by_id[id];
}

static uint64_t fnv1a64(const char* s, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h ? h : 1; /* the map never stores key 0 */
}

/* A new id for a copy of s; 0 when out of memory. */
static uint32_t add(ns_strtab* t, const char* s, size_t n) {
  uint32_t id = t->next_id;
  if (id >= t->by_id_cap) {
    uint32_t ncap = t->by_id_cap ? t->by_id_cap * 2 : 256;
    char** nb = realloc(t->by_id, ncap * sizeof *nb);
    if (!nb) return 0;
    memset(nb + t->by_id_cap, 0, (ncap - t->by_id_cap) * sizeof *nb);
    t->by_id = nb;
    t->by_id_cap = ncap;
  }
  char* copy = malloc(n + 1);
  if (!copy) return 0;
  memcpy(copy, s, n);
  copy[n] = 0;
  t->by_id[id] = copy;
  t->next_id++;
  return id;
}

uint32_t ns_strtab_intern(ns_strtab* t, const char* s, size_t n, ns_strings_encoder* enc, ns_buf* encbuf,
                          int* enc_open) {
  if (!t) return 0;
  uint64_t h = fnv1a64(s, n);
  int inserted;
  uint64_t* slot = ns_idmap_put(&t->by_hash, h, &inserted);
  if (slot && !inserted) {
    const char* known = t->by_id[*slot];
    if (strlen(known) == n && memcmp(known, s, n) == 0) return (uint32_t)*slot;
    /* Two strings with one 64-bit hash: this one gets ids of its own, never deduplicated. */
    slot = NULL;
  }
  uint32_t id = add(t, s, n);
  if (slot && inserted) {
    if (id) *slot = id;
    else ns_idmap_del(&t->by_hash, h);
  }
  if (!id) return 0;
  if (!*enc_open) {
    ns_strings_begin(enc, encbuf);
    *enc_open = 1;
  }
  ns_strings_put(enc, id, s, n);
  return id;
}
