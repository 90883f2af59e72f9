/* ncclscope: string interning for the writer thread (writer thread only).
 * An open-addressing hash of every string seen in this trace; a string's
 * id is written in a STRINGS block before the first EVENTS block using it. */
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"

typedef struct {
  uint32_t hash;
  uint32_t id;
  uint32_t len;
  char* s;
} strent;

struct ns_strtab {
  strent* tab;
  uint32_t cap, used, next_id;
  const char** by_id; /* by_id[id]: the interned copy (owned by tab), for the analysis */
  uint32_t by_id_cap;
};

ns_strtab* ns_strtab_new(void) {
  ns_strtab* t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->cap = 256;
  t->tab = calloc(t->cap, sizeof *t->tab);
  if (!t->tab) {
    free(t);
    return NULL;
  }
  t->next_id = 1;
  return t;
}

void ns_strtab_free(ns_strtab* t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->cap; i++) free(t->tab[i].s);
  free(t->tab);
  free(t->by_id);
  free(t);
}

const char* ns_strtab_str(const ns_strtab* t, uint32_t id) {
  if (!t || id == 0 || id >= t->by_id_cap) return NULL;
  return t->by_id[id];
}

static int remember(ns_strtab* t, uint32_t id, const char* s) {
  if (id >= t->by_id_cap) {
    uint32_t ncap = t->by_id_cap ? t->by_id_cap * 2 : 256;
    while (ncap <= id) ncap *= 2;
    const char** nb = realloc(t->by_id, ncap * sizeof *nb);
    if (!nb) return -1;
    memset(nb + t->by_id_cap, 0, (ncap - t->by_id_cap) * sizeof *nb);
    t->by_id = nb;
    t->by_id_cap = ncap;
  }
  t->by_id[id] = s;
  return 0;
}

static uint32_t fnv1a(const char* s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h | 1; /* 0 marks an empty bucket */
}

static int grow(ns_strtab* t) {
  uint32_t ncap = t->cap * 2;
  strent* nt = calloc(ncap, sizeof *nt);
  if (!nt) return -1;
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!t->tab[i].hash) continue;
    uint32_t j = t->tab[i].hash & (ncap - 1);
    while (nt[j].hash) j = (j + 1) & (ncap - 1);
    nt[j] = t->tab[i];
  }
  free(t->tab);
  t->tab = nt;
  t->cap = ncap;
  return 0;
}

uint32_t ns_strtab_intern(ns_strtab* t, const char* s, size_t n, ns_strings_encoder* enc, ns_buf* encbuf,
                          int* enc_open) {
  if (!t) return 0;
  uint32_t h = fnv1a(s, n);
  uint32_t j = h & (t->cap - 1);
  while (t->tab[j].hash) {
    strent* e = &t->tab[j];
    if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0) return e->id;
    j = (j + 1) & (t->cap - 1);
  }
  if ((t->used + 1) * 2 > t->cap) {
    if (grow(t)) return 0;
    j = h & (t->cap - 1);
    while (t->tab[j].hash) j = (j + 1) & (t->cap - 1);
  }
  char* copy = malloc(n + 1);
  if (!copy) return 0;
  memcpy(copy, s, n);
  copy[n] = 0;
  strent* e = &t->tab[j];
  e->hash = h;
  e->len = (uint32_t)n;
  e->s = copy;
  e->id = t->next_id++;
  t->used++;
  (void)remember(t, e->id, copy); /* on failure the analysis sees NULL for it */
  if (!*enc_open) {
    ns_strings_begin(enc, encbuf);
    *enc_open = 1;
  }
  ns_strings_put(enc, e->id, s, n);
  return e->id;
}
