/* ncclscope util: growing an array by one element. Single-threaded (whoever
 * owns the array). Never on NCCL's threads: it reallocs. */
#ifndef NCCLSCOPE_UTIL_ARRAY_H
#define NCCLSCOPE_UTIL_ARRAY_H

#include <stddef.h>
#include <stdlib.h>

/* Room for the element at index len of items (elem bytes each, capacity
 * *cap): items itself while len < *cap, else items reallocated to `first`
 * elements, then to twice its capacity, and *cap updated. NULL when the
 * allocation fails: items and *cap are unchanged and still valid. */
static inline void* ns_array_room(void* items, size_t* cap, size_t len, size_t elem, size_t first) {
  if (len < *cap) return items;
  size_t nc = *cap ? *cap * 2 : first;
  void* grown = realloc(items, nc * elem);
  if (grown) *cap = nc;
  return grown;
}

#endif
