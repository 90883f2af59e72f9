/* SPDX-License-Identifier: Apache-2.0 */
/* src/writer/restarts.c: a ProxyStep started again (same ProxyOp, same step,
 * the earlier event still open) names the earlier event, and nothing else
 * does: another step, a closed earlier event, a stopped ProxyOp, no parent;
 * ProxyOps that never stop are forgotten once their steps are over. */
#include <stdlib.h>

#include "check.h"
#include "writer/restarts.h"

/* The open events: ids below 1 << 20, one bit each. */
static unsigned char open_ids[1u << 20];
static int is_open(uint64_t id) { return id < sizeof open_ids && open_ids[id]; }
static void opened(uint64_t id) { open_ids[id] = 1; }
static void closed(uint64_t id) { open_ids[id] = 0; }

static void test_restart(void) {
  ns_restarts_reset();
  opened(10);
  CHECK_U64(ns_restarts_start(1, 0, 10, is_open), 0); /* first start of step 0 */
  opened(11);
  CHECK_U64(ns_restarts_start(1, 0, 11, is_open), 10); /* step 0 again: 10 was never stopped */
  closed(10);
  opened(12);
  CHECK_U64(ns_restarts_start(1, 0, 12, is_open), 11); /* and again: now 11 */
  opened(13);
  CHECK_U64(ns_restarts_start(1, 1, 13, is_open), 0); /* the next step: no restart */
  closed(13);
  opened(14);
  CHECK_U64(ns_restarts_start(1, 1, 14, is_open), 0); /* step 1 again, but 13 stopped */
  /* Another ProxyOp's step of the same number is not a restart of this one. */
  opened(20);
  CHECK_U64(ns_restarts_start(2, 1, 20, is_open), 0);
  opened(15);
  CHECK_U64(ns_restarts_start(1, 1, 15, is_open), 14);
  /* Only the last step a ProxyOp started is remembered. */
  opened(16);
  CHECK_U64(ns_restarts_start(1, 2, 16, is_open), 0);
  opened(17);
  CHECK_U64(ns_restarts_start(1, 1, 17, is_open), 0);
  /* A stopped ProxyOp is forgotten (its pointer may be reused). */
  ns_restarts_parent_stopped(2);
  opened(21);
  CHECK_U64(ns_restarts_start(2, 1, 21, is_open), 0);
  opened(22);
  CHECK_U64(ns_restarts_start(2, 1, 22, is_open), 21);
  /* No parent: never matched. */
  opened(30);
  opened(31);
  CHECK_U64(ns_restarts_start(0, 5, 30, is_open), 0);
  CHECK_U64(ns_restarts_start(0, 5, 31, is_open), 0);
  ns_restarts_parent_stopped(0);
  ns_restarts_parent_stopped(99); /* unknown: nothing */
  /* Reset: nothing remembered. */
  ns_restarts_reset();
  opened(23);
  CHECK_U64(ns_restarts_start(2, 1, 23, is_open), 0);
  ns_restarts_reset();
  memset(open_ids, 0, sizeof open_ids);
}

/* 65,536 ProxyOps that never stop fill the table; one more goes unwatched
 * while all their steps are open, and is watched once theirs are over. */
static void test_bound(void) {
  enum { N = 65536 };
  ns_restarts_reset();
  for (uint64_t p = 1; p <= N; p++) {
    opened(p);
    CHECK_U64(ns_restarts_start(1000000 + p, 0, p, is_open), 0);
  }
  opened(N + 1);
  opened(N + 2);
  CHECK_U64(ns_restarts_start(5000000, 0, N + 1, is_open), 0);
  CHECK_U64(ns_restarts_start(5000000, 0, N + 2, is_open), 0); /* unwatched: no room */
  /* The old ones still match while open. */
  opened(N + 3);
  CHECK_U64(ns_restarts_start(1000000 + 7, 0, N + 3, is_open), 7);
  for (uint64_t p = 1; p <= N + 3; p++) closed(p);
  opened(N + 4);
  opened(N + 5);
  CHECK_U64(ns_restarts_start(5000000, 0, N + 4, is_open), 0); /* pruned: room again */
  CHECK_U64(ns_restarts_start(5000000, 0, N + 5, is_open), N + 4);
  ns_restarts_reset();
  memset(open_ids, 0, sizeof open_ids);
}

int main(void) {
  test_restart();
  test_bound();
  CHECK_DONE();
}
