/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: libnccl-profiler-floor.so, the least a recording plugin
 * can do: the floor under any design that keeps every call NCCL makes.
 *
 * Exports ncclProfiler_v6 only; init enables every event (as the empty
 * plugin does). Every call reads the TSC once and writes one entry to its
 * thread's buffer: a start {type, ticks, id, parent id}, a state {state,
 * ticks, id, 0}, a stop {ticks, id} (four words each). The handle is the event's id
 * shifted left, so a child finds its parent's id and a stop its event's id
 * with a shift, without reading memory. Nothing else: no descriptor field
 * beyond the type and the parent, no strings, no check of a handle, no
 * reader of the buffer (each thread's buffer wraps over itself; a real
 * plugin's background thread reading it would only add cost).
 *
 * Used as the baseline of `ncclscope-sim --bench-cadence --bench-baseline`
 * (bench/cadence.sh): its ns per event over the empty plugin is what any
 * plugin that records each call with its own time must add on the machine;
 * ncclscope's cost over it is the cost of what ncclscope does besides.
 */
#include <stdint.h>
#include <time.h>

#include "timing/baseline_plugin.h"

#define FLOOR_THREADS 64
#define FLOOR_WORDS (1u << 17) /* 1 MiB per thread, as ncclscope's default ring */

/* Zero pages until used: 64 MiB of address space, touched per thread. */
static uint64_t floorBuffers[FLOOR_THREADS][FLOOR_WORDS] __attribute__((aligned(64)));
static unsigned floorThreadsSeen;

typedef struct {
  uint64_t* words; /* NULL until the thread's first call */
  uint64_t pos;
  uint64_t nextId;
} floorThread;
static __thread floorThread floorSelf __attribute__((tls_model("initial-exec")));

/* The cheapest clock of the machine: what ncclscope reads where it can. */
static inline uint64_t floorTicks(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* Every entry takes four words, so none is split where the buffer wraps. */
static inline uint64_t* floorReserve(floorThread* t) {
  if (__builtin_expect(!t->words, 0)) {
    unsigned k = __atomic_fetch_add(&floorThreadsSeen, 1, __ATOMIC_RELAXED) % FLOOR_THREADS;
    t->words = floorBuffers[k];
    t->nextId = (uint64_t)k << 40;
  }
  uint64_t* w = &t->words[t->pos & (FLOOR_WORDS - 1)];
  t->pos += 4;
  return w;
}

/* A handle: the id, shifted so that it is never NULL. */
static inline void* floorHandle(uint64_t id) { return (void*)(uintptr_t)(id << 4 | 1); }
static inline uint64_t floorId(const void* h) { return (uint64_t)(uintptr_t)h >> 4; }

static ncclResult_t floorStart(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* eDescr) {
  (void)context;
  floorThread* t = &floorSelf;
  uint64_t* w = floorReserve(t);
  uint64_t id = ++t->nextId;
  w[0] = eDescr->type;
  w[1] = floorTicks();
  w[2] = id;
  w[3] = eDescr->parentObj ? floorId(eDescr->parentObj) : 0;
  *eHandle = floorHandle(id);
  return ncclSuccess;
}

static ncclResult_t floorStop(void* eHandle) {
  if (!eHandle) return ncclSuccess;
  uint64_t* w = floorReserve(&floorSelf);
  w[0] = floorTicks();
  w[1] = floorId(eHandle);
  return ncclSuccess;
}

static ncclResult_t floorRecord(void* eHandle, ncclProfilerEventState_t eState,
                                ncclProfilerEventStateArgs_v6_t* eStateArgs) {
  (void)eStateArgs; /* its value depends on the state: reading it is a design's choice, not the floor */
  if (!eHandle) return ncclSuccess;
  uint64_t* w = floorReserve(&floorSelf);
  w[0] = (uint64_t)eState;
  w[1] = floorTicks();
  w[2] = floorId(eHandle);
  w[3] = 0;
  return ncclSuccess;
}

NS_BASELINE_PLUGIN("ncclscope-floor", floorStart, floorStop, floorRecord);
