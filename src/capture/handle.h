/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the handles given to NCCL carry their event's id.
 *
 * A handle is not an address: it is the event id (56 bits), the event type
 * and whether the event runs for another process (PXN), with a tag in its
 * low bits. A stop, a state and a child's start learn what they need from
 * the handle with shifts, without reading memory; no handle is ever
 * dereferenced, so a stale one (a parent named seconds after it stopped, a
 * late stop) can do no harm, and an id is not handed out twice in a process
 * while fewer than 2^16 ring claims separate the two events (ring.c), so a
 * stale handle does not name another event. The writer tells
 * late and repeated calls apart by the ids it saw end (writer/open_events.h).
 *
 *   bits 0..2  tag 0b101: never NULL, never an aligned pointer
 *   bit  3     PXN
 *   bits 4..7  type (ns_event_type)
 *   bits 8..63 id (ns_ring_next_id: ring serial << 40 | per-ring counter)
 */
#ifndef NCCLSCOPE_CAPTURE_HANDLE_H
#define NCCLSCOPE_CAPTURE_HANDLE_H

#include <stdint.h>

#include "ncclscope/record.h"

_Static_assert(NS_EV_COUNT <= 16, "a handle holds the event type in 4 bits");

#define NS_HANDLE_TAG 0x5u
#define NS_HANDLE_TAG_MASK 0x7u
#define NS_HANDLE_PXN 0x8u
#define NS_HANDLE_ID_BITS 56

static inline void* ns_handle_make(uint64_t id, unsigned type, int pxn) {
  return (void*)(uintptr_t)(id << 8 | (uint64_t)(type & 0xF) << 4 | (pxn ? NS_HANDLE_PXN : 0) | NS_HANDLE_TAG);
}
/* Whether h can be one of ours (the tag, a non-zero id). */
static inline int ns_handle_ok(const void* h) {
  uintptr_t v = (uintptr_t)h;
  return (v & NS_HANDLE_TAG_MASK) == NS_HANDLE_TAG && (v >> 8) != 0;
}
static inline uint64_t ns_handle_id(const void* h) { return (uint64_t)(uintptr_t)h >> 8; }
static inline unsigned ns_handle_type(const void* h) { return (unsigned)((uintptr_t)h >> 4) & 0xF; }
static inline int ns_handle_pxn(const void* h) { return ((uintptr_t)h & NS_HANDLE_PXN) != 0; }

#endif
