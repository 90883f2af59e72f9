/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: TSC detection and calibration against CLOCK_MONOTONIC.
 * ns_clock_init runs in the first init of a session; ns_clock_refine on the
 * writer thread. The TSC is used only when invariant; elsewhere the ticks
 * are CLOCK_MONOTONIC ns already (vDSO clock_gettime, no syscall). */
#include "clock/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int ns_clock_use_tsc;

int ns_clock_tsc_invariant(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
  if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return 0;
  return (d >> 8) & 1;
#else
  return 0;
#endif
}

/* One (tick, ns) pair taken as close together as possible: the ns read is
 * bracketed by two tick reads and the tightest of a few tries is kept. */
static void sample_pair(uint64_t* tick, uint64_t* ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t t0 = ns_clock_ticks();
    uint64_t n = ns_mono_ns();
    uint64_t t1 = ns_clock_ticks();
    if (t1 - t0 < best) {
      best = t1 - t0;
      *tick = t0 + (t1 - t0) / 2;
      *ns = n;
    }
  }
}

void ns_clock_init(ns_clock* c, int force_mono, unsigned spin_us) {
  ns_clock_use_tsc = !force_mono && ns_clock_tsc_invariant();
  c->use_tsc = ns_clock_use_tsc;
  c->ns_per_tick = 1.0;
  if (!c->use_tsc) {
    c->base_tick = c->anchor_tick = c->base_ns = c->anchor_ns = ns_mono_ns();
    return;
  }
  sample_pair(&c->base_tick, &c->base_ns);
  uint64_t t, n;
  do {
    sample_pair(&t, &n);
  } while (n - c->base_ns < (uint64_t)spin_us * 1000u);
  if (t <= c->base_tick) { /* a TSC that does not move: do not trust it */
    ns_clock_use_tsc = c->use_tsc = 0;
    c->base_tick = c->anchor_tick = c->base_ns = c->anchor_ns = n;
    return;
  }
  c->ns_per_tick = (double)(n - c->base_ns) / (double)(t - c->base_tick);
  c->anchor_tick = t;
  c->anchor_ns = n;
}

void ns_clock_refine(ns_clock* c) {
  if (!c->use_tsc) return;
  uint64_t t, n;
  sample_pair(&t, &n);
  if (t <= c->base_tick || n <= c->base_ns) return;
  /* The scale is the mean rate since the session began (its error shrinks as
   * 1/elapsed), and the anchor is the fresh pair itself: the writer refines
   * before every drain, so a record is converted from a pair taken at most
   * one poll period away and its error stays at the pair's own (tens of ns).
   * Extrapolating from a one-second-old anchor instead put callbacks
   * microseconds before CLOCK_MONOTONIC, which breaks the GPU clock fit's
   * assumption that a callback never precedes what it reports. */
  c->ns_per_tick = (double)(n - c->base_ns) / (double)(t - c->base_tick);
  c->anchor_tick = t;
  c->anchor_ns = n;
}

double ns_clock_hz(const ns_clock* c) { return c->use_tsc ? 1e9 / c->ns_per_tick : 0.0; }
