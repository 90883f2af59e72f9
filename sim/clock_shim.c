/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: a simulated host whose clock runs at a rate of its own
 * (--host-drift-ppm), with no hook in the plugin.
 *
 * Built as libncclscope-simclock.so and put in front of libc with
 * LD_PRELOAD, it stands in for clock_gettime in the whole process, the
 * plugin included (and so in its TSC calibration, which is made against
 * CLOCK_MONOTONIC). Until simclock_set is called it passes every call
 * through. After it, CLOCK_MONOTONIC reads
 *     raw + drift * (raw - pivot)
 * (raw: the clock as the kernel gives it, a time namespace's offset
 * included), so it runs faster by `drift` than the machine's and agrees with
 * it at `pivot`. CLOCK_REALTIME stays the machine's (the simulated host's
 * realtime clock is the true one, as good as NTP makes it, while the clock
 * the trace is kept in drifts against it, which the plugin's CLOCK_REALTIME
 * anchors must show), or with `realtime_too` drifts the same way (a host
 * without NTP: its anchors cannot show the drift, only the collectives'
 * ends can). The simulator reads the machine's clock through simclock_raw,
 * so its model keeps one timeline.
 *
 * simclock_set is called once per process, before any thread but the
 * caller's exists (right after fork), so plain globals suffice. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <time.h>

typedef int (*clock_fn)(clockid_t, struct timespec*);

/* The simulator finds these with dlsym (hosts.c). */
int simclock_raw(clockid_t id, struct timespec* ts);
void simclock_set(double drift_ppm, int64_t pivot_raw_ns, int realtime_too);

static clock_fn machine_clock; /* libc's, found on first use (idempotent: any thread may store it) */
static double drift;           /* 0: pass through */
static int64_t pivot_ns;
static int realtime_drifts;

__attribute__((visibility("default"))) int simclock_raw(clockid_t id, struct timespec* ts) {
  clock_fn f = __atomic_load_n(&machine_clock, __ATOMIC_RELAXED);
  if (!f) {
    f = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
    __atomic_store_n(&machine_clock, f, __ATOMIC_RELAXED);
  }
  return f(id, ts);
}

__attribute__((visibility("default"))) void simclock_set(double drift_ppm, int64_t pivot_raw_ns, int realtime_too) {
  drift = drift_ppm * 1e-6;
  pivot_ns = pivot_raw_ns;
  realtime_drifts = realtime_too;
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec* ts) {
  int rc = simclock_raw(id, ts);
  if (rc != 0 || drift == 0 || (id != CLOCK_MONOTONIC && (id != CLOCK_REALTIME || !realtime_drifts))) return rc;
  int64_t t = (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec, mono = t;
  if (id == CLOCK_REALTIME) {
    struct timespec m;
    simclock_raw(CLOCK_MONOTONIC, &m);
    mono = (int64_t)m.tv_sec * 1000000000ll + m.tv_nsec;
  }
  t += llround((double)(mono - pivot_ns) * drift);
  ts->tv_sec = (time_t)(t / 1000000000ll);
  ts->tv_nsec = (long)(t % 1000000000ll);
  return 0;
}
