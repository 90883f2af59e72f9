/* ncclscope CLI: the table of events in memory (open, held, placeholders),
 * keyed by per-file event id. Chained hashing with intrusive links; a small
 * free list recycles event structs. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_EVENT_TABLE_H
#define NCCLSCOPE_TOOLS_EVENT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "export_walk.h"

typedef struct {
  ns_xevent** buckets;
  size_t nbuckets; /* power of two */
  size_t count;
  ns_xevent* free_list;
  size_t nfree;
} ns_event_table;

void ns_evtab_init(ns_event_table* t);
void ns_evtab_free(ns_event_table* t);
ns_xevent* ns_evtab_find(const ns_event_table* t, uint64_t id);
/* A zeroed event with that id, inserted; NULL when out of memory. */
ns_xevent* ns_evtab_insert(ns_event_table* t, uint64_t id);
void ns_evtab_remove(ns_event_table* t, ns_xevent* ev);
/* Calls fn on every event (the table must not change during the walk). */
void ns_evtab_each(const ns_event_table* t, void (*fn)(void* arg, ns_xevent* ev), void* arg);

#endif
