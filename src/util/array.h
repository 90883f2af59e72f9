/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: growing an array (by one element, or up to an index),
 * and binary search in a sorted one. Single-threaded (whoever owns the array). Never on NCCL's
 * threads: it reallocs. */
#ifndef NCCLSCOPE_UTIL_ARRAY_H
#define NCCLSCOPE_UTIL_ARRAY_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* Makes index `at` valid in items (capacity *cap, elem bytes each): items
 * itself while at < *cap, else items reallocated to `first` elements, or
 * its capacity doubled, until above at; the new elements zeroed and *cap
 * updated. NULL when the allocation fails: items and *cap are unchanged and
 * still valid. For tables indexed by a serial, and slot arrays whose free
 * slots are zero. */
static inline void* ns_array_reach(void* items, size_t* cap, size_t at, size_t elem, size_t first) {
  if (at < *cap) return items;
  size_t nc = *cap ? *cap : first;
  while (nc <= at) nc *= 2;
  char* grown = realloc(items, nc * elem);
  if (!grown) return NULL;
  memset(grown + *cap * elem, 0, (nc - *cap) * elem);
  *cap = nc;
  return grown;
}

/* e = a new zeroed element at the end of the array items[0..len) (capacity
 * cap), grown as ns_array_room does with `first`, and len counted up; e is
 * NULL when the allocation fails (then nothing changes). items, cap and len
 * are lvalues; a statement, not an expression. */
#define NS_ARRAY_PUSH(e, items, cap, len, first)                                       \
  do {                                                                                 \
    void* ns_grown_ = ns_array_room((items), &(cap), (len), sizeof *(items), (first)); \
    (e) = NULL;                                                                        \
    if (ns_grown_) {                                                                   \
      (items) = ns_grown_;                                                             \
      (e) = &(items)[(len)++];                                                         \
      memset((e), 0, sizeof *(e));                                                     \
    }                                                                                  \
  } while (0)

/* Binary search: sets `at` to the first index in [0, n) at which `before`
 * is false, n when it is true everywhere. `before` is an expression of the
 * index variable named `i`, true on a prefix of the indices and false after
 * it (for a sorted array: `a[i].key < key` finds the first element >= key,
 * `a[i].key <= key` the first > key). A statement, not an expression. */
#define NS_LOWER_BOUND(at, n, i, before) \
  do {                                   \
    size_t ns_lo_ = 0, ns_hi_ = (n);     \
    while (ns_lo_ < ns_hi_) {            \
      size_t i = (ns_lo_ + ns_hi_) / 2;  \
      if (before)                        \
        ns_lo_ = i + 1;                  \
      else                               \
        ns_hi_ = i;                      \
    }                                    \
    (at) = ns_lo_;                       \
  } while (0)

#endif
