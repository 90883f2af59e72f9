/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the event assembler (src/events/assembler.c) on small record
 * streams with known outcomes: a child read before its parent's START, a
 * STOP before its own START, an op held until its KernelCh children are
 * done, the grace and expect-wait queues, events that never stop (flush,
 * max_open, max_age and the op whose child was given up), each timer's
 * exact release time, PXN raw parents,
 * and the counts the export-vs-report agreement rests on. */
#include <string.h>

#include "check.h"
#include "ncclscope/events.h"

#define MAX_DONE 64

static struct {
  uint64_t id[MAX_DONE];
  uint8_t stopped[MAX_DONE], started[MAX_DONE], flags[MAX_DONE];
  uint64_t exec_stop[MAX_DONE];
  uint32_t kch[MAX_DONE];
  size_t n;
} done;

static uint64_t done_total, done_last_start, done_out_of_order;

static void on_done(void* user, ns_event* ev) {
  (void)user;
  done_total++;
  if (ev->start.ts < done_last_start) done_out_of_order++;
  done_last_start = ev->start.ts;
  if (done.n == MAX_DONE) return;
  done.id[done.n] = ev->id;
  done.stopped[done.n] = ev->stopped;
  done.started[done.n] = ev->started;
  done.flags[done.n] = ev->flags;
  done.exec_stop[done.n] = ev->has_exec_stop ? ev->exec_stop : 0;
  done.kch[done.n] = ev->n_kernel_ch;
  done.n++;
}

/* Position of id in the done order, -1 if not released. */
static int done_at(uint64_t id) {
  for (size_t i = 0; i < done.n; i++)
    if (done.id[i] == id) return (int)i;
  return -1;
}

static ns_asm* make(uint64_t grace, uint64_t expect_wait, uint64_t max_age, size_t max_open) {
  memset(&done, 0, sizeof done);
  ns_asm_config cfg;
  ns_asm_config_default(&cfg);
  cfg.grace_ns = grace;
  cfg.expect_wait_ns = expect_wait;
  cfg.max_age_ns = max_age;
  cfg.max_open = max_open;
  cfg.sink.done = on_done;
  ns_asm* a = ns_asm_new(&cfg);
  ns_asm_comm(a, 1, 0x7FFF, 6); /* KernelCh recorded: ops wait for nChannels of them */
  return a;
}

static void rec(ns_asm* a, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id, uint64_t parent) {
  ns_record r = ns_record_make(kind, type, 1, ts, id, parent);
  if (kind == NS_REC_START && type == NS_EV_COLL) r.num[NS_COLL_CHANNELS] = 2;
  if (kind == NS_REC_START && type == NS_EV_KERNEL_CH) r.num[NS_KERNEL_CH_PTIMER] = 5000 + id;
  ns_asm_record(a, &r);
}

/* A Coll with two KernelCh children read before the Coll's START. */
static void test_children_first(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 0);
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 100, 11, 10);
  rec(a, NS_REC_STOP, NS_EV_KERNEL_CH, 300, 11, 0);
  rec(a, NS_REC_START, NS_EV_COLL, 50, 10, 0);
  rec(a, NS_REC_STOP, NS_EV_COLL, 60, 10, 0);
  CHECK_U64(done_at(10), -1); /* one of its two kernel channels is missing */
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 110, 12, 10);
  rec(a, NS_REC_STOP, NS_EV_KERNEL_CH, 400, 12, 0);
  int op = done_at(10), k2 = done_at(12);
  CHECK_TRUE(op >= 0 && k2 >= 0);
  CHECK_TRUE(op < k2); /* the op is released by its last child's stop, before that child */
  if (op >= 0) {
    CHECK_U64(done.exec_stop[op], 400);
    CHECK_U64(done.kch[op], 2);
    CHECK_U64(done.flags[op], 0);
  }
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.events[NS_EV_KERNEL_CH], 2);
  CHECK_U64(st.with_parent[NS_EV_KERNEL_CH], 2);
  CHECK_U64(st.hierarchy_digest[NS_EV_KERNEL_CH], ns_asm_edge_digest(11, 10) + ns_asm_edge_digest(12, 10));
  CHECK_U64(st.lost_parents, 0);
  ns_asm_free(a);
}

/* A STOP read before its START; a STOP and a STATE of ids never started. */
static void test_stop_first(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 0);
  rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 200, 21, 0);
  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 100, 21, 0);
  int s = done_at(21);
  CHECK_TRUE(s >= 0);
  if (s >= 0) CHECK_U64(done.stopped[s], 1);
  rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 300, 22, 0);
  rec(a, NS_REC_STATE, NS_EV_PROXY_STEP, 310, 23, 0);
  ns_asm_flush(a);
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.events[NS_EV_PROXY_STEP], 1);
  CHECK_U64(st.never_stopped[NS_EV_PROXY_STEP], 0);
  CHECK_U64(st.orphan_stops, 1);
  CHECK_U64(st.orphan_states, 1);
  ns_asm_free(a);
}

/* Grace: a complete op waits grace_ns of quiet; expect-wait: an op whose
 * kernel channels never come is forced out. */
static void test_queues(void) {
  ns_asm* a = make(1000, 5000, 0, 0);
  rec(a, NS_REC_START, NS_EV_COLL, 100, 30, 0);
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 110, 31, 30);
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 120, 32, 30);
  rec(a, NS_REC_STOP, NS_EV_COLL, 130, 30, 0);
  rec(a, NS_REC_STOP, NS_EV_KERNEL_CH, 200, 31, 0);
  rec(a, NS_REC_STOP, NS_EV_KERNEL_CH, 300, 32, 0);
  ns_asm_advance(a, 1200);
  CHECK_U64(done_at(30), -1); /* 900 ns of quiet < grace */
  ns_asm_advance(a, 1300);
  CHECK_TRUE(done_at(30) >= 0);
  rec(a, NS_REC_START, NS_EV_COLL, 2000, 40, 0); /* no children at all */
  rec(a, NS_REC_STOP, NS_EV_COLL, 2100, 40, 0);
  ns_asm_advance(a, 7000);
  CHECK_U64(done_at(40), -1);
  ns_asm_advance(a, 7100);
  int f = done_at(40);
  CHECK_TRUE(f >= 0);
  if (f >= 0) CHECK_U64(done.flags[f] & NS_EVF_FORCED, NS_EVF_FORCED);
  ns_asm_free(a);
}

/* Events that never stop: max_open evicts the oldest; max_age gives up a
 * running child, which marks its op; the flush releases the rest in start order. */
static void test_never_stopped(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 2);
  rec(a, NS_REC_START, NS_EV_PROXY_CTRL, 10, 51, 0);
  rec(a, NS_REC_START, NS_EV_PROXY_CTRL, 20, 52, 0);
  rec(a, NS_REC_START, NS_EV_PROXY_CTRL, 30, 53, 0); /* evicts 51 */
  int e = done_at(51);
  CHECK_TRUE(e == 0);
  if (e == 0) CHECK_U64(done.flags[0] & NS_EVF_EVICTED, NS_EVF_EVICTED);
  ns_asm_flush(a);
  CHECK_U64(done.n, 3);
  CHECK_TRUE(done_at(52) == 1 && done_at(53) == 2);
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.never_stopped[NS_EV_PROXY_CTRL], 3);
  CHECK_U64(st.evicted_open, 1);
  ns_asm_free(a);

  a = make(0, NS_ASM_WAIT_NS, 1000, 0);
  rec(a, NS_REC_START, NS_EV_COLL, 100, 60, 0);
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 110, 61, 60);
  rec(a, NS_REC_START, NS_EV_KERNEL_CH, 120, 62, 60);
  rec(a, NS_REC_STOP, NS_EV_COLL, 130, 60, 0);
  rec(a, NS_REC_STOP, NS_EV_KERNEL_CH, 200, 61, 0);
  ns_asm_advance(a, 1200); /* channel 62 has run 1080 ns > max_age */
  int k = done_at(62), op = done_at(60);
  CHECK_TRUE(k >= 0 && op >= 0);
  if (op >= 0) CHECK_U64(done.flags[op] & NS_EVF_CHILD_LOST, NS_EVF_CHILD_LOST);
  if (k >= 0) CHECK_U64(done.stopped[k], 0);
  ns_asm_free(a);
}

/* Each timer releases at its exact time, not a nanosecond early or late:
 * an unstarted entry once orphan_wait_ns is exceeded, a running event once
 * max_age_ns is, a complete op once grace_ns is reached; also when the
 * head a queue was due by left it early, and when an entry joins a queue
 * that had emptied. */
static void test_timer_boundaries(void) {
  memset(&done, 0, sizeof done);
  ns_asm_config cfg;
  ns_asm_config_default(&cfg);
  cfg.grace_ns = 1000;
  cfg.orphan_wait_ns = 2000;
  cfg.max_age_ns = 3000;
  cfg.sink.done = on_done;
  ns_asm* a = ns_asm_new(&cfg);
  ns_asm_comm(a, 1, 0, 6);                           /* no children recorded: a stopped op is complete */
  rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 100, 70, 0); /* its START never comes */
  ns_asm_advance(a, 2100);
  CHECK_U64(done_at(70), -1);
  ns_asm_advance(a, 2101);
  CHECK_TRUE(done_at(70) >= 0);

  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 3000, 71, 0); /* due at 6001 */
  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 3500, 72, 0); /* due at 6501 */
  rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 4000, 71, 0);  /* the head leaves early */
  CHECK_TRUE(done_at(71) >= 0);
  ns_asm_advance(a, 6001);
  ns_asm_advance(a, 6500);
  CHECK_U64(done_at(72), -1);
  ns_asm_advance(a, 6501);
  int k = done_at(72);
  CHECK_TRUE(k >= 0);
  if (k >= 0) CHECK_U64(done.flags[k] & NS_EVF_EVICTED, NS_EVF_EVICTED);

  rec(a, NS_REC_START, NS_EV_COLL, 7000, 73, 0); /* every queue empty until now */
  rec(a, NS_REC_STOP, NS_EV_COLL, 7100, 73, 0);  /* settles until 8100 */
  ns_asm_advance(a, 8099);
  CHECK_U64(done_at(73), -1);
  ns_asm_advance(a, 8100);
  CHECK_TRUE(done_at(73) >= 0);
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.live, 0);
  CHECK_U64(st.evicted_age, 1);
  ns_asm_free(a);
}

/* A PXN ProxyOp names a raw foreign pointer: never looked up, no placeholder. */
static void test_pxn(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 0);
  ns_record r = ns_record_make(NS_REC_START, NS_EV_PROXY_OP, 0, 10, 70, 0x7f0000001000ull);
  r.flags = NS_RF_PXN | NS_RF_PARENT_RAW;
  ns_asm_record(a, &r);
  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 20, 71, 70);
  rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 30, 71, 0);
  rec(a, NS_REC_STOP, NS_EV_PROXY_OP, 40, 70, 0);
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.raw_parent[NS_EV_PROXY_OP], 1);
  CHECK_U64(st.with_parent[NS_EV_PROXY_OP], 0);
  CHECK_U64(st.pxn[NS_EV_PROXY_OP], 1);
  CHECK_U64(st.lost_parents, 0);
  CHECK_U64(st.live, 0);
  ns_asm_free(a);
}

static void own_state(ns_asm* a, uint8_t type, uint64_t ts, uint64_t id, int state, uint64_t arg) {
  ns_record r = ns_record_make(NS_REC_STATE, type, 1, ts, id, 0);
  r.state = state;
  r.arg = arg;
  r.flags = NS_RF_HAS_ARG;
  ns_asm_record(a, &r);
}

/* The plugin's own records: a ProxyStep it closed (restarted) is released
 * at once, incomplete with its reason; a REPEATED record adds its count to
 * the event's last state; a CLOSED ProxyOp child stops its op waiting. */
static void test_closed_and_repeated(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 0);
  ns_asm_comm(a, 1, (1u << NS_EV_PROXY_OP) | (1u << NS_EV_P2P), 6); /* ProxyOps, no KernelCh */
  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 100, 31, 0);
  own_state(a, NS_EV_PROXY_STEP, 150, 31, NS_ST_CLOSED, NS_CLOSE_RESTARTED);
  int c = done_at(31);
  CHECK_TRUE(c >= 0);
  if (c >= 0) CHECK_U64(done.stopped[c], 0);
  rec(a, NS_REC_START, NS_EV_PROXY_STEP, 160, 32, 0);
  ns_record st = ns_record_make(NS_REC_STATE, NS_EV_PROXY_STEP, 1, 170, 32, 0);
  st.state = NS_ST_PROXY_STEP_SEND_PEER_WAIT;
  ns_asm_record(a, &st);
  own_state(a, NS_EV_PROXY_STEP, 190, 32, NS_ST_REPEATED, 7);
  ns_event* e = ns_asm_find(a, 32);
  CHECK_TRUE(e && e->repeats == 7 && e->last_state == NS_ST_PROXY_STEP_SEND_PEER_WAIT);
  /* a P2p whose only ProxyOp is closed (never stopped): the op is released, its child lost */
  rec(a, NS_REC_START, NS_EV_P2P, 200, 40, 0);
  rec(a, NS_REC_STOP, NS_EV_P2P, 210, 40, 0);
  rec(a, NS_REC_START, NS_EV_PROXY_OP, 220, 41, 40);
  CHECK_U64(done_at(40), -1);
  own_state(a, NS_EV_PROXY_OP, 300, 41, NS_ST_CLOSED, NS_CLOSE_NEVER_STOPPED);
  int op = done_at(40);
  CHECK_TRUE(op >= 0);
  if (op >= 0) CHECK_TRUE(done.flags[op] & NS_EVF_CHILD_LOST);
  ns_asm_stats sts;
  ns_asm_get_stats(a, &sts);
  CHECK_U64(sts.closed[NS_CLOSE_RESTARTED], 1);
  CHECK_U64(sts.closed[NS_CLOSE_NEVER_STOPPED], 1);
  CHECK_U64(sts.repeats, 7);
  ns_asm_free(a);
}

/* A send to itself on ABI v4+: no ProxyOp or KernelCh will come, so it is
 * released at its stop; a send to a peer waits for its children. */
static void test_self_p2p(void) {
  ns_asm* a = make(0, NS_ASM_WAIT_NS, 0, 0);
  ns_asm_comm_rank(a, 1, 3);
  ns_record r = ns_record_make(NS_REC_START, NS_EV_P2P, 1, 100, 50, 0);
  r.num[NS_P2P_PEER] = 3;
  r.num[NS_P2P_CHANNELS] = 2;
  ns_asm_record(a, &r);
  r = ns_record_make(NS_REC_START, NS_EV_P2P, 1, 100, 51, 0);
  r.num[NS_P2P_PEER] = 4;
  r.num[NS_P2P_CHANNELS] = 2;
  ns_asm_record(a, &r);
  rec(a, NS_REC_STOP, NS_EV_P2P, 110, 50, 0);
  rec(a, NS_REC_STOP, NS_EV_P2P, 110, 51, 0);
  int self = done_at(50);
  CHECK_TRUE(self >= 0);
  if (self >= 0) CHECK_U64(done.flags[self], 0);
  CHECK_U64(done_at(51), -1);
  ns_asm_free(a);
}

/* Many events alive at once, with ids that share slots of the table of
 * recent entries (four ids to a slot, in runs of consecutive ones): each is
 * found by its id while it runs and gone once it stopped, whether it still
 * sits in that table or a newer one moved it to the map; the flush
 * releases the rest, each once, in start order. */
static void test_many_live(void) {
  ns_asm* a = make(0, 0, 0, 0);
  enum { N = 3000 };
  static uint64_t ids[N];
  /* distinct, and four to a slot: (i % 4) * 512,000 apart, then consecutive */
  for (int i = 0; i < N; i++) ids[i] = 1000 + (uint64_t)(i % 4) * 512 * 1000 + (uint64_t)(i / 4);
  done_total = done_out_of_order = done_last_start = 0;
  for (int i = 0; i < N; i++) rec(a, NS_REC_START, NS_EV_PROXY_STEP, 10 + (uint64_t)i, ids[i], 0);
  int found = 0;
  for (int i = 0; i < N; i++) {
    const ns_event* e = ns_asm_find(a, ids[i]);
    found += e && e->id == ids[i] && e->started && !e->stopped;
  }
  CHECK_U64(found, N);
  for (int i = 0; i < N; i += 2) rec(a, NS_REC_STOP, NS_EV_PROXY_STEP, 10000 + (uint64_t)i, ids[i], 0);
  CHECK_U64(done_total, N / 2); /* a stopped ProxyStep goes at once */
  int gone = 0, still = 0;
  for (int i = 0; i < N; i++) {
    const ns_event* e = ns_asm_find(a, ids[i]);
    if (i % 2 == 0) gone += e == NULL;
    else still += e && e->id == ids[i];
  }
  CHECK_U64(gone, N / 2);
  CHECK_U64(still, N / 2);
  done_last_start = 0;
  done_out_of_order = 0;
  ns_asm_flush(a);
  CHECK_U64(done_total, N);
  CHECK_U64(done_out_of_order, 0);
  ns_asm_stats st;
  ns_asm_get_stats(a, &st);
  CHECK_U64(st.live, 0);
  for (int i = 0; i < N; i++) CHECK_TRUE(ns_asm_find(a, ids[i]) == NULL);
  ns_asm_free(a);
}

int main(void) {
  test_many_live();
  test_closed_and_repeated();
  test_self_p2p();
  test_children_first();
  test_stop_first();
  test_queues();
  test_never_stopped();
  test_timer_boundaries();
  test_pxn();
  CHECK_DONE();
}
