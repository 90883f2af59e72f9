/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the id hash map (src/util/idmap.c) against a brute-force
 * reference: random inserts, updates and removals of keys drawn from a
 * small range (long probe runs, wrap-around at the end of the table,
 * removals in the middle of runs), checked after every operation for a
 * sample of keys and in full at intervals; iteration sees each key once. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/idmap.h"

#define RANGE 3000u
#define OPS 200000

static uint64_t ref_val[RANGE + 1];
static unsigned char ref_has[RANGE + 1];

static void check_all(const ns_idmap* m) {
  size_t n = 0;
  for (uint64_t k = 1; k <= RANGE; k++) {
    uint64_t* v = ns_idmap_get(m, k);
    if (ref_has[k]) {
      n++;
      CHECK_TRUE(v != NULL);
      if (v) CHECK_U64(*v, ref_val[k]);
    } else {
      CHECK_TRUE(v == NULL);
    }
  }
  CHECK_U64(m->len, n);
  /* iteration: every stored key exactly once */
  static unsigned char seen[RANGE + 1];
  memset(seen, 0, sizeof seen);
  size_t count = 0;
  uint64_t k, v;
  for (size_t pos = 0; ns_idmap_next(m, &pos, &k, &v);) {
    count++;
    CHECK_TRUE(k >= 1 && k <= RANGE && ref_has[k] && !seen[k]);
    if (k >= 1 && k <= RANGE) {
      seen[k] = 1;
      CHECK_U64(v, ref_val[k]);
    }
  }
  CHECK_U64(count, n);
}

/* The recent-entry table against the same reference: a hit is always the
 * reference's current value (the owner deletes from both), a key that
 * shares its slot with a later one misses, key 0 never hits. */
static void check_recent(void) {
  static ns_idmap_recent r; /* zeroed: every slot empty */
  static uint64_t val[4 * NS_IDMAP_RECENT + 1];
  unsigned long long s = 7;
  uint64_t hits = 0;
  for (int op = 0; op < 200000; op++) {
    uint64_t k = 1 + test_rng(&s) % (4 * NS_IDMAP_RECENT);
    if (test_rng(&s) % 3) {
      val[k] = 1 + test_rng(&s) % 1000;
      ns_idmap_recent_put(&r, k, val[k]);
    } else {
      ns_idmap_recent_del(&r, k);
      val[k] = 0;
    }
    uint64_t probe = 1 + test_rng(&s) % (4 * NS_IDMAP_RECENT);
    uint64_t hit = ns_idmap_recent_get(&r, probe);
    if (hit) CHECK_U64(hit, val[probe]);
    hits += hit != 0;
  }
  CHECK_TRUE(hits > 20000); /* it does hit: a slot holds one of its 4 keys */
  /* the slot keeps the last key put there */
  ns_idmap_recent_put(&r, 5, 11);
  ns_idmap_recent_put(&r, 5 + NS_IDMAP_RECENT, 12);
  CHECK_U64(ns_idmap_recent_get(&r, 5), 0);
  CHECK_U64(ns_idmap_recent_get(&r, 5 + NS_IDMAP_RECENT), 12);
  ns_idmap_recent_del(&r, 5); /* not the slot's key: nothing changes */
  CHECK_U64(ns_idmap_recent_get(&r, 5 + NS_IDMAP_RECENT), 12);
  CHECK_U64(ns_idmap_recent_get(&r, 0), 0);
}

/* Homes: keys 1..3000 (each NS_IDMAP_RECENT later key takes an earlier
 * one's slot); each found with its value, the newest NS_IDMAP_RECENT in the
 * recent table and the rest in the map, and gone after its removal. */
static void check_home(void) {
  static ns_idmap_recent r;
  ns_idmap m;
  ns_idmap_init(&m);
  for (uint64_t k = 1; k <= 3000; k++) CHECK_U64(ns_idmap_home_put(&r, &m, k, k * 7), 0);
  int found = 0, in_map = 0;
  for (uint64_t k = 1; k <= 3000; k++) {
    found += ns_idmap_home_get(&r, &m, k) == k * 7;
    in_map += ns_idmap_get(&m, k) != NULL;
  }
  CHECK_U64(found, 3000);
  CHECK_U64(in_map, 3000 - NS_IDMAP_RECENT);
  for (uint64_t k = 1; k <= 3000; k += 2) ns_idmap_home_del(&r, &m, k);
  int right = 0;
  for (uint64_t k = 1; k <= 3000; k++) right += ns_idmap_home_get(&r, &m, k) == (k % 2 ? 0 : k * 7);
  CHECK_U64(right, 3000);
  CHECK_U64(m.len, (3000 - NS_IDMAP_RECENT) / 2);
  ns_idmap_free(&m);
}

int main(void) {
  check_recent();
  check_home();
  ns_idmap m;
  ns_idmap_init(&m);
  int ins;
  CHECK_TRUE(ns_idmap_get(&m, 5) == NULL);
  CHECK_TRUE(ns_idmap_put(&m, 0, &ins) == NULL); /* key 0 is never stored */
  CHECK_U64(ns_idmap_del(&m, 5), 0);

  unsigned long long s = 12345;
  for (int op = 0; op < OPS; op++) {
    uint64_t k = 1 + test_rng(&s) % RANGE;
    unsigned r = (unsigned)(test_rng(&s) % 10);
    if (r < 5) {
      uint64_t* v = ns_idmap_put(&m, k, &ins);
      CHECK_TRUE(v != NULL);
      CHECK_U64(ins, !ref_has[k]);
      if (v) {
        if (!ins) CHECK_U64(*v, ref_val[k]);
        *v = test_rng(&s);
        ref_val[k] = *v;
        ref_has[k] = 1;
      }
    } else {
      CHECK_U64(ns_idmap_del(&m, k), ref_has[k]);
      ref_has[k] = 0;
    }
    uint64_t probe = 1 + test_rng(&s) % RANGE;
    uint64_t* pv = ns_idmap_get(&m, probe);
    CHECK_U64(pv != NULL, ref_has[probe]);
    if (op % 20000 == 0) check_all(&m);
    if (check_failures > 20) break;
  }
  check_all(&m);
  /* drain to empty: the table stays usable */
  for (uint64_t k = 1; k <= RANGE; k++)
    if (ref_has[k]) {
      CHECK_U64(ns_idmap_del(&m, k), 1);
      ref_has[k] = 0;
    }
  CHECK_U64(m.len, 0);
  check_all(&m);
  /* large keys (ids with high bits set) */
  uint64_t big = 0xFFFF000000000001ull;
  *ns_idmap_put(&m, big, &ins) = 7;
  CHECK_U64(*ns_idmap_get(&m, big), 7);
  ns_idmap_free(&m);
  CHECK_DONE();
}
