/* SPDX-License-Identifier: Apache-2.0 */
/* Operations by userTag (tags.c): a table keeps the NS_TAGS_MAX smallest tags of a communicator whatever the order
 * they come in, so tables fed in different orders and merged count every kept tag exactly. */
#include <string.h>

#include "analysis/internal.h"
#include "check.h"

enum { TAGS = NS_TAGS_MAX + 100 };

/* Tag t (1..TAGS) of communicator comm, t operations of t bytes each, one timed. */
static void feed(ns_tag_table* t, uint32_t comm, uint64_t tag) {
  ns_tag_stats x = {.comm = comm,
                    .comm_id = 0xC0 + comm,
                    .tag = tag,
                    .ranks = 1,
                    .ops = tag,
                    .bytes = tag * tag,
                    .timed = 1,
                    .dur_ns_sum = 1000 * tag};
  CHECK_U64(ns_tags_add(t, &x), 0);
}

static const ns_tag_stats* row(const ns_tag_table* t, uint64_t comm_id, int other, uint64_t tag) {
  for (size_t i = 0; i < t->n; i++)
    if (t->t[i].comm_id == comm_id && !t->t[i].other == !other && t->t[i].tag == (other ? 0 : tag)) return &t->t[i];
  return NULL;
}

/* Every tag 1..NS_TAGS_MAX of communicator comm_id has its exact row, the rest is in other; ranks: each row's. */
static void check_table(const ns_tag_table* t, uint64_t comm_id, uint32_t ranks) {
  size_t rows = 0;
  for (size_t i = 0; i < t->n; i++) rows += t->t[i].comm_id == comm_id;
  CHECK_U64(rows, NS_TAGS_MAX + 1);
  for (uint64_t tag = 1; tag <= NS_TAGS_MAX; tag++) {
    const ns_tag_stats* r = row(t, comm_id, 0, tag);
    CHECK_TRUE(r != NULL);
    if (!r) continue;
    CHECK_U64(r->ops, tag * ranks);
    CHECK_U64(r->bytes, tag * tag * ranks);
    CHECK_U64(r->dur_ns_sum, 1000 * tag * ranks);
    CHECK_U64(r->ranks, ranks);
  }
  uint64_t rest = 0;
  for (uint64_t tag = NS_TAGS_MAX + 1; tag <= TAGS; tag++) rest += tag;
  const ns_tag_stats* o = row(t, comm_id, 1, 0);
  CHECK_TRUE(o != NULL);
  if (o) CHECK_U64(o->ops, rest * ranks);
}

int main(void) {
  /* one rank's table, three orders: rising, falling, interleaved; two communicators side by side */
  ns_tag_table up, down, mixed;
  memset(&up, 0, sizeof up);
  memset(&down, 0, sizeof down);
  memset(&mixed, 0, sizeof mixed);
  for (uint64_t i = 1; i <= TAGS; i++) {
    feed(&up, 1, i);
    feed(&up, 2, i);
    feed(&down, 1, TAGS + 1 - i);
    feed(&mixed, 1, i % 2 ? TAGS - (i - 1) / 2 : i / 2); /* TAGS, 1, TAGS - 1, 2, ... */
  }
  check_table(&up, 0xC1, 1);
  check_table(&up, 0xC2, 1);
  check_table(&down, 0xC1, 1);
  check_table(&mixed, 0xC1, 1);

  /* merged by communicator id (the summary): three ranks' rows sum, other rows too */
  ns_tag_table merged;
  memset(&merged, 0, sizeof merged);
  merged.by_id = 1;
  const ns_tag_table* ranks[] = {&down, &up, &mixed};
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < ranks[k]->n; i++)
      if (ranks[k]->t[i].comm_id == 0xC1) CHECK_U64(ns_tags_add(&merged, &ranks[k]->t[i]), 0);
  check_table(&merged, 0xC1, 3);

  /* a rank that saw only the large tags keeps them, and they fold when merged beside the small ones */
  ns_tag_table high;
  memset(&high, 0, sizeof high);
  for (uint64_t i = TAGS; i > NS_TAGS_MAX; i--) feed(&high, 1, i);
  CHECK_U64(high.n, TAGS - NS_TAGS_MAX);
  CHECK_TRUE(row(&high, 0xC1, 1, 0) == NULL);
  for (size_t i = 0; i < high.n; i++) CHECK_U64(ns_tags_add(&merged, &high.t[i]), 0);
  uint64_t rest = 0;
  for (uint64_t tag = NS_TAGS_MAX + 1; tag <= TAGS; tag++) rest += tag;
  CHECK_U64(row(&merged, 0xC1, 1, 0)->ops, 4 * rest);
  CHECK_U64(row(&merged, 0xC1, 0, 1)->ops, 3);

  ns_tags_free(&up);
  ns_tags_free(&down);
  ns_tags_free(&mixed);
  ns_tags_free(&merged);
  ns_tags_free(&high);
  CHECK_DONE();
}
