/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the id hash map (src/util/idmap.c) against a brute-force
 * reference: random inserts, updates and removals of keys drawn from a
 * small range (long probe runs, wrap-around at the end of the table,
 * removals in the middle of runs), checked after every operation for a
 * sample of keys and in full at intervals; iteration sees each key once;
 * a key's home (the recent table beside a map) made, found and removed. */
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

/* Homes against a reference, over keys 1..4*NS_IDMAP_RECENT (four to a
 * slot of the recent table): a key made is found with its value wherever
 * it went, a key removed is gone, a find never makes, key 0 is never
 * made or found. */
static void check_home_random(void) {
  static ns_idmap_recent r; /* zeroed: every slot empty */
  static uint64_t val[4 * NS_IDMAP_RECENT + 1];
  ns_idmap m;
  ns_idmap_init(&m);
  unsigned long long s = 7;
  size_t live = 0;
  int made;
  for (int op = 0; op < 200000; op++) {
    uint64_t k = 1 + test_rng(&s) % (4 * NS_IDMAP_RECENT);
    if (test_rng(&s) % 3) {
      uint64_t* v = ns_idmap_home_slot(&r, &m, k, 1, &made);
      CHECK_TRUE(v != NULL);
      CHECK_U64(made, val[k] == 0);
      if (!v) continue;
      live += made;
      *v = val[k] = 1 + test_rng(&s) % 1000;
    } else {
      ns_idmap_home_del(&r, &m, k);
      live -= val[k] != 0;
      val[k] = 0;
    }
    uint64_t probe = 1 + test_rng(&s) % (4 * NS_IDMAP_RECENT);
    const uint64_t* hit = ns_idmap_home_slot(&r, &m, probe, 0, &made);
    CHECK_U64(made, 0);
    CHECK_U64(hit ? *hit : 0, val[probe]);
  }
  size_t in_recent = 0;
  for (size_t i = 0; i < NS_IDMAP_RECENT; i++) in_recent += r.slot[i].key != 0;
  CHECK_U64(in_recent + m.len, live); /* each key in exactly one of the two */
  CHECK_TRUE(ns_idmap_home_slot(&r, &m, 0, 1, &made) == NULL && !made);
  ns_idmap_free(&m);
}

/* Homes in order: keys 1..3000 (each NS_IDMAP_RECENT later key takes an
 * earlier one's slot); each found with its value, the newest
 * NS_IDMAP_RECENT in the recent table and the rest in the map, and gone
 * after its removal. */
static void check_home(void) {
  static ns_idmap_recent r;
  ns_idmap m;
  ns_idmap_init(&m);
  int made;
  for (uint64_t k = 1; k <= 3000; k++) {
    uint64_t* v = ns_idmap_home_slot(&r, &m, k, 1, &made);
    CHECK_TRUE(v && made);
    if (v) *v = k * 7;
  }
  int found = 0, in_map = 0;
  for (uint64_t k = 1; k <= 3000; k++) {
    const uint64_t* v = ns_idmap_home_slot(&r, &m, k, 1, &made); /* there: not made again */
    found += v && !made && *v == k * 7;
    in_map += ns_idmap_get(&m, k) != NULL;
  }
  CHECK_U64(found, 3000);
  CHECK_U64(in_map, 3000 - NS_IDMAP_RECENT);
  for (uint64_t k = 1; k <= 3000; k += 2) ns_idmap_home_del(&r, &m, k);
  int right = 0;
  for (uint64_t k = 1; k <= 3000; k++) {
    const uint64_t* v = ns_idmap_home_slot(&r, &m, k, 0, &made);
    right += k % 2 ? v == NULL : (v && *v == k * 7);
  }
  CHECK_U64(right, 3000);
  CHECK_U64(m.len, (3000 - NS_IDMAP_RECENT) / 2);
  ns_idmap_free(&m);
}

int main(void) {
  check_home_random();
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
