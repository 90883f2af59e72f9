/* ncclscope: ProxySteps started again (see restarts.h). An open-addressing
 * table keyed by (parent, step) with linear probing; entries are replaced
 * in place, and stale ones (their event stopped) are dropped when the
 * table would grow, so it never holds more than twice the open steps. */
#include "writer/restarts.h"

#include <stdlib.h>

#include "util/idmap.h"

typedef struct {
  uint64_t parent, step; /* key; parent 0: empty */
  uint64_t id, slot;
} entry;

static entry* tab;
static size_t cap, len;

static size_t bucket(uint64_t parent, uint64_t step, size_t n) {
  return (size_t)(ns_idmap_mix(parent ^ ns_idmap_mix(step + 1)) & (n - 1));
}

static entry* find(uint64_t parent, uint64_t step) {
  for (size_t i = bucket(parent, step, cap);; i = (i + 1) & (cap - 1)) {
    entry* e = &tab[i];
    if (!e->parent || (e->parent == parent && e->step == step)) return e;
  }
}

/* Rebuilds into a table of n buckets keeping the open entries. 0 or -1. */
static int rebuild(size_t n, int (*is_open)(uint64_t, uint64_t)) {
  entry* old = tab;
  size_t old_cap = cap;
  entry* t = calloc(n, sizeof *t);
  if (!t) return -1;
  tab = t;
  cap = n;
  len = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].parent && is_open(old[i].slot, old[i].id)) {
      *find(old[i].parent, old[i].step) = old[i];
      len++;
    }
  free(old);
  return 0;
}

uint64_t ns_restarts_start(uint64_t parent, uint64_t step, uint64_t id, uint64_t slot, uint64_t* old_slot,
                           int (*is_open)(uint64_t slot, uint64_t id)) {
  if (!parent) return 0; /* a step without a parent cannot be told apart */
  if (!tab && rebuild(1024, is_open) != 0) return 0;
  if (2 * (len + 1) > cap) {
    /* Half full: first forget the steps that stopped; grow only if the
     * open ones still fill half. */
    size_t keep = cap;
    if (rebuild(cap, is_open) != 0) return 0;
    if (2 * (len + 1) > keep && rebuild(cap * 2, is_open) != 0) return 0;
  }
  entry* e = find(parent, step);
  uint64_t restarted = 0;
  if (e->parent && is_open(e->slot, e->id)) {
    restarted = e->id;
    *old_slot = e->slot;
  }
  if (!e->parent) len++;
  *e = (entry){.parent = parent, .step = step, .id = id, .slot = slot};
  return restarted;
}

void ns_restarts_reset(void) {
  free(tab);
  tab = NULL;
  cap = len = 0;
}
