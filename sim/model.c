/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: time, random numbers and the ground-truth performance model.
 *
 * Pure functions and per-caller state only; any thread may call them.
 * GPU clock model: gpu(t) = floor((t * (1 + drift) + offset) / gran) * gran,
 * t being CLOCK_MONOTONIC ns. The offset makes the values look like Unix-epoch
 * ns (realtime - monotonic at start) plus a per-rank error of tens of seconds.
 */
#include <math.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim.h"

int (*simMachineClock)(clockid_t, struct timespec*) = clock_gettime;

uint64_t simNowNs(void) {
  struct timespec ts;
  simMachineClock(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - (uint64_t)simHostOffsetNs;
}

pid_t simGettid(void) { return (pid_t)syscall(SYS_gettid); }

void simSleepUntil(uint64_t tNs) {
  if (simOpt.fast) return;
  for (;;) {
    uint64_t now = simNowNs();
    if (now >= tNs) return;
    uint64_t d = tNs - now;
    if (d > 60000) {
      /* sleep most of it, spin the last part so durations stay precise */
      struct timespec ts = {(time_t)((d - 50000) / 1000000000ull), (long)((d - 50000) % 1000000000ull)};
      nanosleep(&ts, NULL);
    }
  }
}

void simRngSeed(simRng* r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; }

uint64_t simRngNext(simRng* r) {
  /* splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double simRngUniform(simRng* r) { return (double)(simRngNext(r) >> 11) / 9007199254740992.0; }

/* Any rank's thread may compute it first; every computation gives nearly the
 * same value and the first one stored wins (relaxed: a plain number). */
static int64_t epochOffsetNs(void) {
  static int64_t off;
  int64_t o = __atomic_load_n(&off, __ATOMIC_RELAXED);
  if (o == 0) {
    struct timespec rt, mo;
    simMachineClock(CLOCK_REALTIME, &rt);
    simMachineClock(CLOCK_MONOTONIC, &mo);
    int64_t mine = ((int64_t)rt.tv_sec - (int64_t)mo.tv_sec) * 1000000000ll + ((int64_t)rt.tv_nsec - (int64_t)mo.tv_nsec);
    int64_t expected = 0;
    o = __atomic_compare_exchange_n(&off, &expected, mine, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? mine : expected;
  }
  return o;
}

void simGpuClockInit(simGpuClock* g, int gpu, uint64_t seed) {
  simRng r;
  simRngSeed(&r, seed * 1315423911ull + (uint64_t)gpu * 2654435761ull + 7);
  /* per-GPU error of +-gpu-offset-s (40 s) relative to realtime, drift +-gpu-drift-ppm (5) */
  g->offsetNs = epochOffsetNs() + (int64_t)((simRngUniform(&r) * 2.0 - 1.0) * simOpt.gpuOffsetS * 1e9);
  g->driftPpm = (simRngUniform(&r) * 2.0 - 1.0) * simOpt.gpuDriftPpm;
  g->granNs = simOpt.timerGranNs > 0 ? simOpt.timerGranNs : 1;
  g->skewNs = (int64_t)(simRngUniform(&r) * 20000.0); /* up to 20 us of earlier work on the stream */
}

uint64_t simGpuTime(const simGpuClock* g, uint64_t monoNs) {
  /* Integer sum, so the result is exact to the ns: only the drift term (at most
   * tens of ms, far inside a double's exact range) goes through floating point.
   * Computing the whole 1.7e18 ns value in double would round it to 256 ns. */
  int64_t driftNs = llround((double)monoNs * g->driftPpm * 1e-6);
  uint64_t v = (uint64_t)((int64_t)monoNs + driftNs + g->offsetNs);
  return v - v % (uint64_t)g->granNs;
}

uint64_t simPollLagNs(simRng* r) {
  if (simOpt.kchLagMs > 0) {
    /* heavy-tailed: log-uniform from 2 us to --kch-lag-ms (every decade as likely) */
    double hi = simOpt.kchLagMs * 1e6;
    if (hi <= 2000.0) return (uint64_t)hi;
    return (uint64_t)(2000.0 * pow(hi / 2000.0, simRngUniform(r)));
  }
  double u = simRngUniform(r);
  if (u < 0.005) return 1000000ull + (uint64_t)(simRngUniform(r) * 2000000.0); /* stall: 1..3 ms */
  /* typical: 2 us .. ~40 us, skewed low */
  double x = simRngUniform(r);
  return 2000ull + (uint64_t)(x * x * 38000.0);
}

/* cuLaunchKernel's own CPU time: 2..4 us */
uint64_t simLaunchCallNs(simRng* r) { return 2000ull + (uint64_t)(simRngUniform(r) * 2000.0); }

/* A kernel starts a few us after its launch call began when the stream is
 * idle: 3..8 us, skewed low (it can begin before the call returns). Half the
 * time the stream still runs earlier work of this rank (compute skew, up to
 * skewNs) and the kernel starts 1 us after that work ends, if that is later. */
uint64_t simKernelStartNs(simRng* r, const simGpuClock* g, uint64_t tLaunch) {
  double x = simRngUniform(r);
  uint64_t t = tLaunch + 3000ull + (uint64_t)(x * x * 5000.0);
  if (simRngUniform(r) < 0.5) {
    uint64_t busyEnd = tLaunch + (uint64_t)(simRngUniform(r) * (double)g->skewNs) + 1000ull;
    if (busyEnd > t) t = busyEnd;
  }
  return t;
}

uint64_t simXferNs(size_t bytes) {
  double bw = simOpt.netGbps > 0 ? simOpt.netGbps : 1.0; /* Gbit/s == bits/ns */
  return (uint64_t)(simOpt.netLatUs * 1000.0 + (double)bytes * 8.0 / bw);
}
