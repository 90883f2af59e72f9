/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ProxySteps started again (see restarts.h). One entry per
 * parent ProxyOp: the last step it started (NCCL restarts only that one),
 * found through the one id map, the entries in a pool with a free list. An
 * entry goes when its ProxyOp stops; ProxyOps that never stop are pruned
 * when the map outgrows RESTARTS_MAX_PARENTS. */
#include "writer/restarts.h"

#include <stdlib.h>

#include "util/idmap.h"

#define RESTARTS_MAX_PARENTS 65536u

typedef struct {
  uint64_t parent, step, id; /* parent 0: on the free list (next free in `id`) */
} entry;

static ns_idmap by_parent; /* parent -> index + 1 into pool */
static entry* pool;
static size_t pool_cap, pool_used;
static uint64_t free_head; /* index + 1 of a free entry, 0: none */

static entry* entry_new(void) {
  if (free_head) {
    entry* e = &pool[free_head - 1];
    free_head = e->id;
    return e;
  }
  if (pool_used == pool_cap) {
    size_t cap = pool_cap ? pool_cap * 2 : 256;
    entry* grown = realloc(pool, cap * sizeof *grown);
    if (!grown) return NULL;
    pool = grown;
    pool_cap = cap;
  }
  return &pool[pool_used++];
}

static void entry_free(entry* e) {
  e->parent = 0;
  e->id = free_head;
  free_head = (uint64_t)(e - pool) + 1;
}

/* ProxyOps that never stopped: forget those whose last step is over. */
static void prune(int (*is_open)(uint64_t)) {
  for (size_t i = 0; i < pool_used; i++) {
    entry* e = &pool[i];
    if (e->parent && !is_open(e->id)) {
      ns_idmap_del(&by_parent, e->parent);
      entry_free(e);
    }
  }
}

uint64_t ns_restarts_start(uint64_t parent, uint64_t step, uint64_t id, int (*is_open)(uint64_t id)) {
  if (!parent) return 0; /* a step without a parent cannot be told apart */
  uint64_t* v = ns_idmap_get(&by_parent, parent);
  entry* e;
  uint64_t restarted = 0;
  if (v) {
    e = &pool[*v - 1];
    if (e->step == step && is_open(e->id)) restarted = e->id;
  } else {
    if (by_parent.len >= RESTARTS_MAX_PARENTS) {
      prune(is_open);
      if (by_parent.len >= RESTARTS_MAX_PARENTS) return 0; /* that many open: this one goes unwatched */
    }
    int inserted;
    if (!(e = entry_new())) return 0;
    if (!(v = ns_idmap_put(&by_parent, parent, &inserted))) {
      entry_free(e);
      return 0;
    }
    *v = (uint64_t)(e - pool) + 1;
  }
  *e = (entry){.parent = parent, .step = step, .id = id};
  return restarted;
}

void ns_restarts_parent_stopped(uint64_t parent) {
  uint64_t* v = parent ? ns_idmap_get(&by_parent, parent) : NULL;
  if (!v) return;
  entry_free(&pool[*v - 1]);
  ns_idmap_del(&by_parent, parent);
}

void ns_restarts_reset(void) {
  ns_idmap_free(&by_parent);
  ns_idmap_init(&by_parent);
  free(pool);
  pool = NULL;
  pool_cap = pool_used = 0;
  free_head = 0;
}
