/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: event timestamps.
 *
 * The hot path reads raw ticks (ns_clock_ticks): the TSC when the CPU says it
 * is invariant, otherwise CLOCK_MONOTONIC ns through the vDSO. The writer
 * thread turns ticks into CLOCK_MONOTONIC ns with ns_clock_to_ns, using a
 * scale calibrated at session start and re-anchored by the writer before every drain (ns_clock_refine).
 */
#ifndef NCCLSCOPE_CLOCK_H
#define NCCLSCOPE_CLOCK_H

#include <stdint.h>
#include <time.h>

typedef struct {
  int use_tsc;          /* 1: ticks are TSC cycles */
  uint64_t base_tick;   /* first calibration point */
  uint64_t base_ns;
  uint64_t anchor_tick; /* latest re-anchor point (writer only) */
  uint64_t anchor_ns;
  double ns_per_tick;
} ns_clock;

/* Written once per session by init before any hot-path call can see it. */
extern int ns_clock_use_tsc;

static inline uint64_t ns_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The hot path's call-free case: 1 if ticks are the TSC, which
 * ns_clock_tsc_ticks() then reads with one instruction (else it must not be
 * used: ns_clock_ticks() is the general read). */
static inline int ns_clock_tsc_inline(void) {
#if defined(__x86_64__) || defined(__i386__)
  return ns_clock_use_tsc;
#else
  return 0;
#endif
}
static inline uint64_t ns_clock_tsc_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return 0;
#endif
}

static inline uint64_t ns_clock_ticks(void) { return ns_clock_tsc_inline() ? ns_clock_tsc_ticks() : ns_mono_ns(); }

/* 1 if this CPU has an invariant TSC (CPUID 0x80000007 EDX bit 8). */
int ns_clock_tsc_invariant(void);
/* Calibrates `c` (spins about `spin_us`); sets ns_clock_use_tsc. force_mono: never use the TSC. */
void ns_clock_init(ns_clock* c, int force_mono, unsigned spin_us);
/* Writer thread: takes a new anchor and refines the scale over the whole run. */
void ns_clock_refine(ns_clock* c);
/* Ticks -> CLOCK_MONOTONIC ns. */
static inline uint64_t ns_clock_to_ns(const ns_clock* c, uint64_t tick) {
  if (!c->use_tsc) return tick;
  int64_t d = (int64_t)(tick - c->anchor_tick);
  return c->anchor_ns + (uint64_t)(int64_t)((double)d * c->ns_per_tick);
}
/* Ticks per second (0 when not on the TSC). */
double ns_clock_hz(const ns_clock* c);

#endif
