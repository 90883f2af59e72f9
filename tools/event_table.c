/* ncclscope CLI: event table (see event_table.h). */
#include "event_table.h"

#include <stdlib.h>
#include <string.h>

#define NS_EVTAB_MAX_FREE 4096 /* recycled structs kept; more are freed */

static size_t bucket_of(uint64_t id, size_t n) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdull;
  id ^= id >> 33;
  return (size_t)id & (n - 1);
}

void ns_evtab_init(ns_event_table* t) { memset(t, 0, sizeof *t); }

static void free_chain(ns_xevent* e) {
  while (e) {
    ns_xevent* next = e->hnext;
    free(e);
    e = next;
  }
}

void ns_evtab_free(ns_event_table* t) {
  for (size_t i = 0; i < t->nbuckets; i++) free_chain(t->buckets[i]);
  free(t->buckets);
  free_chain(t->free_list);
  memset(t, 0, sizeof *t);
}

ns_xevent* ns_evtab_find(const ns_event_table* t, uint64_t id) {
  if (!t->nbuckets) return NULL;
  for (ns_xevent* e = t->buckets[bucket_of(id, t->nbuckets)]; e; e = e->hnext)
    if (e->id == id) return e;
  return NULL;
}

static int grow(ns_event_table* t) {
  size_t n = t->nbuckets ? t->nbuckets * 2 : 1024;
  ns_xevent** b = calloc(n, sizeof *b);
  if (!b) return -1;
  for (size_t i = 0; i < t->nbuckets; i++) {
    ns_xevent* e = t->buckets[i];
    while (e) {
      ns_xevent* next = e->hnext;
      size_t k = bucket_of(e->id, n);
      e->hnext = b[k];
      b[k] = e;
      e = next;
    }
  }
  free(t->buckets);
  t->buckets = b;
  t->nbuckets = n;
  return 0;
}

ns_xevent* ns_evtab_insert(ns_event_table* t, uint64_t id) {
  if (t->count >= t->nbuckets && grow(t) && !t->nbuckets) return NULL;
  ns_xevent* e = t->free_list;
  if (e) {
    t->free_list = e->hnext;
    t->nfree--;
  } else {
    e = malloc(sizeof *e);
    if (!e) return NULL;
  }
  memset(e, 0, sizeof *e);
  e->id = id;
  e->channel = -1;
  size_t k = bucket_of(id, t->nbuckets);
  e->hnext = t->buckets[k];
  t->buckets[k] = e;
  t->count++;
  return e;
}

void ns_evtab_remove(ns_event_table* t, ns_xevent* ev) {
  ns_xevent** pp = &t->buckets[bucket_of(ev->id, t->nbuckets)];
  while (*pp && *pp != ev) pp = &(*pp)->hnext;
  if (!*pp) return;
  *pp = ev->hnext;
  t->count--;
  if (t->nfree < NS_EVTAB_MAX_FREE) {
    ev->hnext = t->free_list;
    t->free_list = ev;
    t->nfree++;
  } else {
    free(ev);
  }
}

void ns_evtab_each(const ns_event_table* t, void (*fn)(void* arg, ns_xevent* ev), void* arg) {
  for (size_t i = 0; i < t->nbuckets; i++)
    for (ns_xevent* e = t->buckets[i]; e; e = e->hnext) fn(arg, e);
}
