/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope clock unit test: TSC calibration against CLOCK_MONOTONIC. */
#include <time.h>

#include "check.h"
#include "clock/clock.h"

static void check_clock(int force_mono) {
  ns_clock c;
  ns_clock_init(&c, force_mono, 2000);
  if (force_mono) CHECK_U64(c.use_tsc, 0);
  int64_t worst = 0;
  for (int i = 0; i < 20; i++) {
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    uint64_t m0 = ns_mono_ns();
    uint64_t t = ns_clock_ticks();
    uint64_t m1 = ns_mono_ns();
    int64_t err = (int64_t)ns_clock_to_ns(&c, t) - (int64_t)(m0 / 2 + m1 / 2);
    if (err < 0) err = -err;
    if (err > worst) worst = err;
    if (i % 5 == 4) ns_clock_refine(&c);
  }
  printf("%s: hz %.0f, worst error over 40 ms %lld ns\n", c.use_tsc ? "tsc" : "clock_gettime", ns_clock_hz(&c),
         (long long)worst);
  CHECK_TRUE(worst < 200000); /* loose: this only catches a broken calibration */
  uint64_t a = ns_clock_to_ns(&c, ns_clock_ticks()), b = ns_clock_to_ns(&c, ns_clock_ticks());
  CHECK_TRUE(b >= a);
}

int main(void) {
  printf("invariant TSC: %d\n", ns_clock_tsc_invariant());
  check_clock(0);
  check_clock(1);
  CHECK_DONE();
}
