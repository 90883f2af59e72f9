/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis test: windows are published in the order they opened.
 *
 * Windows of 50 ms. Op A starts in window 0 and stays in flight for 300 ms;
 * op B starts and ends in window 1; op C starts in window 5, which moves the
 * analysis clock past window 1's end + grace while A is still in flight.
 * Window 1 is done long before window 0, and must still be published after
 * it (windows.jsonl and the cumulative metrics are written in window order),
 * with every op counted once in the window it started in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "check.h"
#include "synth_stream.h"

#define MS 1000000ull

static uint64_t order[16];
static uint64_t ops_in[16];
static size_t published;

static void on_window(void* user, const ns_window* w) {
  (void)user;
  if (published < 16) {
    order[published] = w->index;
    ops_in[published] = w->ops;
  }
  published++;
}

static void coll(ns_analysis* a, uint64_t id, uint8_t kind, uint64_t ts) {
  ns_record r = ns_record_make(kind, NS_EV_COLL, 1, ts, id, 0);
  if (kind == NS_REC_START) {
    r.str[NS_COLL_FUNC] = synth_str("AllReduce");
    r.str[NS_COLL_DTYPE] = synth_str("ncclFloat32");
    r.num[NS_COLL_SEQ] = id;
    r.num[NS_COLL_COUNT] = 1024;
  }
  ns_analysis_record(a, &r);
}

int main(void) {
  ns_analysis_config cfg;
  ns_analysis_config_default(&cfg);
  cfg.window_sec = 0.05;
  cfg.on_window = on_window;
  cfg.string = synth_string;
  ns_analysis* a = ns_analysis_create(&cfg);
  synth_comm(a, 1, 0xabc, 0, 2);
  const uint64_t t0 = 1000000000000ull;
  coll(a, 1, NS_REC_START, t0);                  /* A: window 0 */
  coll(a, 2, NS_REC_START, t0 + 60 * MS);        /* B: window 1 */
  coll(a, 2, NS_REC_STOP, t0 + 61 * MS);
  coll(a, 3, NS_REC_START, t0 + 260 * MS);       /* C: window 5; window 1 ended 140 ms ago */
  coll(a, 1, NS_REC_STOP, t0 + 300 * MS);
  coll(a, 3, NS_REC_STOP, t0 + 301 * MS);
  coll(a, 4, NS_REC_START, t0 + 900 * MS);       /* D: window 18, moves the clock on */
  coll(a, 4, NS_REC_STOP, t0 + 901 * MS);
  ns_analysis_flush(a);
  ns_analysis_stats st;
  ns_analysis_get_stats(a, &st);
  printf("published %zu windows:", published);
  for (size_t i = 0; i < published && i < 16; i++) printf(" %llu(%llu ops)", (unsigned long long)order[i],
                                                         (unsigned long long)ops_in[i]);
  printf("\n");
  CHECK_U64(st.windows, published);
  CHECK_TRUE(published >= 4);
  for (size_t i = 1; i < published && i < 16; i++) CHECK_TRUE(order[i] > order[i - 1]);
  uint64_t total = 0;
  for (size_t i = 0; i < published && i < 16; i++) total += ops_in[i];
  CHECK_U64(total, 4);
  ns_analysis_destroy(a);
  CHECK_DONE();
}
