/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the proxy thread's time-ordered action queue (a binary heap).
 *
 * Proxy thread only. An action that starts a timed interval schedules its
 * successor relative to the moment it actually ran, not to a plan: on a
 * loaded machine the proxy thread runs late, and a plan made in advance
 * would squeeze or stretch the intervals a plugin measures. Late actions
 * only make later actions late. Equal times run in insertion order.
 */
#include <stdlib.h>

#include "nccl/proxy.h"

static bool before(const simAction* x, const simAction* y) { return x->t != y->t ? x->t < y->t : x->order < y->order; }

static void push(simActionHeap* h, simAction x);

void simHeapPush(simActionHeap* h, uint64_t t, int kind, simWork* w, int a, int b) {
  push(h, (simAction){t, 0, kind, w, NULL, a, b});
}

void simHeapPushPoll(simActionHeap* h, uint64_t t, struct simDevice* dev, int ch, int conn) {
  push(h, (simAction){t, 0, A_KCH_POLL, NULL, dev, ch, conn});
}

static void push(simActionHeap* h, simAction x) {
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 256;
    h->v = realloc(h->v, h->cap * sizeof *h->v);
    if (!h->v) {
      SIM_ERR("out of memory (action heap)");
      exit(2);
    }
  }
  size_t i = h->n++;
  x.order = h->order++;
  while (i > 0 && before(&x, &h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
}

simAction simHeapPop(simActionHeap* h) {
  simAction top = h->v[0], last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c])) c++;
    if (!before(&h->v[c], &last)) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = last;
  return top;
}
