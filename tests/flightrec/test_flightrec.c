/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: the flight recorder on synthetic record streams whose
 * state is known at every point (src/flightrec/flightrec.h), through an
 * event assembler as the plugin's writer feeds it: stages,
 * completion rules, out-of-order children, the ring bound, the watchdog's
 * episodes and what it says a stuck operation waits for, the JSON dump. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flightrec/flightrec.h"

#define MS 1000000ull
#define SEC 1000000000ull

static const char* strs[] = {NULL, "AllReduce", "ncclFloat32", "RING", "SIMPLE", "Send", "AllGather"};
static const char* str_of(void* user, uint32_t id) {
  (void)user;
  return id < sizeof strs / sizeof strs[0] ? strs[id] : NULL;
}

/* The recorder follows the events of an assembler (as the writer's tracker
 * has it): each test's records go into `as`. */
static ns_asm* as;

/* A record for recorder fr, through the assembler it follows. */
static void feed(ns_fr* fr, const ns_record* r) {
  (void)fr;
  ns_asm_record(as, r);
}

static ns_fr* make(uint32_t entries) {
  ns_fr_config cfg = {.entries = entries, .string = str_of};
  ns_fr* fr = ns_fr_create(&cfg);
  ns_asm_config acfg;
  ns_asm_config_default(&acfg);
  acfg.user_bytes = ns_fr_event_bytes();
  as = ns_asm_new(&acfg);
  ns_asm_sink sink;
  ns_fr_attach(fr, as, 0, &sink);
  ns_asm_set_sink(as, &sink);
  return fr;
}

static void done(ns_fr* fr) {
  ns_asm_free(as);
  as = NULL;
  ns_fr_destroy(fr);
}

static void comm(ns_fr* fr, uint32_t serial, int32_t rank, uint64_t mask) {
  ns_comm_info ci = ns_comm_info_make(serial, 0xC0FFEE00ull + serial, rank, 4);
  ci.has_name = 1;
  snprintf(ci.comm_name, sizeof ci.comm_name, "world");
  ci.abi_version = 6;
  ci.event_mask = mask;
  ns_fr_comm(fr, &ci);
  ns_asm_comm(as, serial, mask, 6);
  ns_asm_comm_rank(as, serial, rank);
}

static uint64_t next_id = 100;

static void rec(ns_fr* fr, uint8_t kind, uint8_t type, uint64_t ts, uint64_t id, uint64_t parent, uint32_t c) {
  ns_record r = ns_record_make(kind, type, c, ts, id, parent);
  feed(fr, &r);
}

/* func: a string id of strs (1 AllReduce, 6 AllGather) */
static void coll_start_of(ns_fr* fr, uint32_t func, uint64_t id, uint64_t seq, uint64_t ts, uint32_t nch, uint32_t c) {
  ns_record r = ns_record_make(NS_REC_START, NS_EV_COLL, c, ts, id, 0);
  r.num[NS_COLL_SEQ] = seq;
  r.num[NS_COLL_COUNT] = 1024;
  r.num[NS_COLL_CHANNELS] = nch;
  r.str[NS_COLL_FUNC] = func;
  r.str[NS_COLL_DTYPE] = 2;
  r.str[NS_COLL_ALGO] = 3;
  r.str[NS_COLL_PROTO] = 4;
  feed(fr, &r);
}

static void coll_start(ns_fr* fr, uint64_t id, uint64_t seq, uint64_t ts, uint32_t nch, uint32_t c) {
  coll_start_of(fr, 1, id, seq, ts, nch, c);
}

static uint64_t proxy_op(ns_fr* fr, uint64_t op, int ch, int peer, int send, uint64_t ts, uint32_t c) {
  ns_record r = ns_record_make(NS_REC_START, NS_EV_PROXY_OP, c, ts, ++next_id, op);
  r.num[NS_PROXY_OP_CHANNEL] = (uint64_t)ch;
  r.num[NS_PROXY_OP_PEER] = (uint64_t)peer;
  r.num[NS_PROXY_OP_IS_SEND] = (uint64_t)send;
  feed(fr, &r);
  return r.id;
}

static uint64_t step(ns_fr* fr, uint64_t pop, int64_t s, uint64_t ts, uint32_t c) {
  ns_record r = ns_record_make(NS_REC_START, NS_EV_PROXY_STEP, c, ts, ++next_id, pop);
  r.num[NS_PROXY_STEP_STEP] = (uint64_t)s;
  feed(fr, &r);
  return r.id;
}

static void state(ns_fr* fr, uint8_t type, uint64_t id, int st, uint64_t arg, uint64_t ts, uint32_t c) {
  ns_record r = ns_record_make(NS_REC_STATE, type, c, ts, id, 0);
  r.state = st;
  r.arg = arg;
  feed(fr, &r);
}

static uint64_t kch(ns_fr* fr, uint64_t op, int ch, uint64_t ts, uint32_t c) {
  ns_record r = ns_record_make(NS_REC_START, NS_EV_KERNEL_CH, c, ts, ++next_id, op);
  r.num[NS_KERNEL_CH_CHANNEL] = (uint64_t)ch;
  feed(fr, &r);
  return r.id;
}

/* One AllReduce over 2 channels that completes: ring send to rank+1, receive from rank-1. */
static void full_op(ns_fr* fr, uint64_t id, uint64_t seq, uint64_t t, uint32_t c) {
  coll_start(fr, id, seq, t, 2, c);
  rec(fr, NS_REC_STOP, NS_EV_COLL, t + 1000, id, 0, c);
  for (int ch = 0; ch < 2; ch++) {
    uint64_t k = kch(fr, id, ch, t + 5000, c);
    uint64_t s = proxy_op(fr, id, ch, 2, 1, t + 2000, c);
    uint64_t rv = proxy_op(fr, id, ch, 0, 0, t + 2000, c);
    uint64_t st = step(fr, s, 0, t + 6000, c);
    state(fr, NS_EV_PROXY_STEP, st, NS_ST_PROXY_STEP_SEND_WAIT, 4096, t + 7000, c);
    rec(fr, NS_REC_STOP, NS_EV_PROXY_STEP, t + 9000, st, 0, c);
    uint64_t rt = step(fr, rv, 0, t + 6000, c);
    rec(fr, NS_REC_STOP, NS_EV_PROXY_STEP, t + 9000, rt, 0, c);
    rec(fr, NS_REC_STOP, NS_EV_PROXY_OP, t + 9500, s, 0, c);
    rec(fr, NS_REC_STOP, NS_EV_PROXY_OP, t + 9500, rv, 0, c);
    rec(fr, NS_REC_STOP, NS_EV_KERNEL_CH, t + 10000, k, 0, c);
  }
}

/* ns_fr_inflight's posted and completed of communicator c (UINT64_MAX both: not listed). */
static void seqs_of(const ns_fr* fr, uint32_t c, uint64_t now, uint64_t* posted, uint64_t* completed) {
  ns_fr_inflight in[4];
  size_t n = ns_fr_inflight_get(fr, now, in, 4);
  *posted = *completed = UINT64_MAX;
  for (size_t i = 0; i < n; i++)
    if (in[i].comm == c) {
      *posted = in[i].posted;
      *completed = in[i].completed;
    }
}

/* entries 3 (with another communicator first): the ring wraps, and the
 * operation the watchdog looks up is at position 5 of the second communicator. */
static void test_stuck_episode(uint32_t entries, int other_comm_first) {
  ns_fr* fr = make(entries);
  if (other_comm_first) comm(fr, 9, 0, 0x7FFF);
  comm(fr, 1, 1, 0x7FFF);
  for (uint64_t i = 0; i < 5; i++) full_op(fr, 10 + i, i, i * MS, 1);
  /* op 5: on the GPU; channel 0's receive from rank 0 posted a step that waits; channel 1 nothing */
  uint64_t t = 10 * MS;
  coll_start(fr, 20, 5, t, 2, 1);
  rec(fr, NS_REC_STOP, NS_EV_COLL, t + 1000, 20, 0, 1);
  uint64_t k0 = kch(fr, 20, 0, t + 5000, 1);
  kch(fr, 20, 1, t + 5000, 1);
  uint64_t s0 = proxy_op(fr, 20, 0, 2, 1, t + 2000, 1);
  uint64_t r0 = proxy_op(fr, 20, 0, 0, 0, t + 2000, 1);
  uint64_t rs = step(fr, r0, 0, t + 6000, 1);
  state(fr, NS_EV_PROXY_STEP, rs, NS_ST_PROXY_STEP_RECV_WAIT, 0, t + 6500, 1);
  ns_fr_stuck out[4];
  CHECK_U64(ns_fr_check(fr, t + SEC / 2, SEC, out, 4), 0);
  uint64_t posted0, completed0; /* 5 done, the 6th posted */
  seqs_of(fr, 1, t + SEC, &posted0, &completed0);
  CHECK_U64(posted0, 6);
  CHECK_U64(completed0, 5);
  size_t n = ns_fr_check(fr, t + 2 * SEC, SEC, out, 4);
  CHECK_U64(n, 1);
  if (n == 1) {
    CHECK_U64(out[0].cleared, 0);
    CHECK_U64(out[0].op.seq, 5);
    CHECK_U64(out[0].op.id, 20);
    CHECK_U64(out[0].rank, 1);
    CHECK_U64(out[0].comm_id, 0xC0FFEE01ull);
    CHECK_U64(out[0].op.stage, NS_FR_ON_GPU);
    CHECK_STR(out[0].func, "AllReduce");
    CHECK_STR(out[0].comm_name, "world");
    CHECK_NEAR((double)out[0].waited_ns / 1e9, 2.0, 1e-6);
    fprintf(stderr, "waits for: %s\n", out[0].waits_for);
    CHECK_TRUE(strstr(out[0].waits_for, "GPU: channel(s) 0,1 started, not stopped") != NULL);
    CHECK_TRUE(strstr(out[0].waits_for, "receive from rank 0 ch 0: 0 step(s) done, step 0 RecvWait") != NULL);
    CHECK_TRUE(strstr(out[0].waits_for, "send to rank 2 ch 0: no step posted") != NULL);
  }
  /* once per episode */
  CHECK_U64(ns_fr_check(fr, t + 3 * SEC, SEC, out, 4), 0);
  /* the plugin closes the stuck children at max age: still in flight */
  ns_record cl = ns_record_make(NS_REC_STATE, NS_EV_KERNEL_CH, 1, t + 10 * SEC, k0, 0);
  cl.state = NS_ST_CLOSED;
  cl.arg = NS_CLOSE_MAX_AGE;
  feed(fr, &cl);
  CHECK_U64(ns_fr_check(fr, t + 11 * SEC, SEC, out, 4), 0);
  /* the data comes: it completes; the episode clears */
  rec(fr, NS_REC_STOP, NS_EV_PROXY_STEP, t + 12 * SEC, rs, 0, 1);
  rec(fr, NS_REC_STOP, NS_EV_PROXY_OP, t + 12 * SEC, r0, 0, 1);
  CHECK_U64(ns_fr_check(fr, t + 12 * SEC, SEC, out, 4), 0);
  rec(fr, NS_REC_STOP, NS_EV_PROXY_OP, t + 13 * SEC, s0, 0, 1);
  n = ns_fr_check(fr, t + 13 * SEC, SEC, out, 4);
  CHECK_U64(n, 1);
  if (n == 1) {
    CHECK_U64(out[0].cleared, 1);
    CHECK_U64(out[0].op.seq, 5);
    CHECK_NEAR((double)out[0].waited_ns / 1e9, 13.0, 1e-3);
  }
  uint64_t posted, completed;
  seqs_of(fr, 1, t + 13 * SEC, &posted, &completed);
  CHECK_U64(posted, 6);
  CHECK_U64(completed, 6);
  ns_fr_stats st;
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.episodes, 1);
  CHECK_U64(st.ops, 6);
  /* The running KernelCh of channel 1 is still tracked; the rest is gone. */
  CHECK_U64(st.children_live, 1);
  done(fr);
}

/* Children before their op's START (two rings drained in one pass); a later
 * op done finishes an earlier one whose KernelCh never stops. */
static void test_order_and_later(void) {
  ns_fr* fr = make(16);
  comm(fr, 3, 0, 0x7FFF);
  uint64_t k = kch(fr, 50, 0, 1000, 3); /* before the Coll START */
  coll_start(fr, 50, 7, 900, 1, 3);
  rec(fr, NS_REC_STOP, NS_EV_COLL, 950, 50, 0, 3);
  ns_fr_stuck out[4];
  size_t n = ns_fr_check(fr, 5 * SEC, SEC, out, 4);
  CHECK_U64(n, 1);
  if (n) {
    CHECK_U64(out[0].op.seq, 7);
    CHECK_U64(out[0].op.started, 1);
    CHECK_U64(out[0].op.t_start, 900);
    CHECK_U64(out[0].op.stage, NS_FR_ON_GPU);
  }
  (void)k;
  full_op(fr, 51, 8, 6 * SEC, 3);
  n = ns_fr_check(fr, 7 * SEC, SEC, out, 4);
  CHECK_U64(n, 1);
  if (n) CHECK_U64(out[0].cleared, 1);
  CHECK_U64(ns_fr_check(fr, 100 * SEC, SEC, out, 4), 0);
  done(fr);
}

/* Communicators that record neither KernelCh nor ProxyOp: done at STOP; a
 * send to itself: done at STOP. The ring keeps the last N. */
static void test_rules_and_bound(void) {
  ns_fr* fr = make(4);
  comm(fr, 1, 0, (1u << NS_EV_COLL) | (1u << NS_EV_P2P));
  comm(fr, 2, 2, 0x7FFF);
  for (uint64_t i = 0; i < 10; i++) {
    coll_start(fr, 200 + i, i, i * MS, 2, 1);
    rec(fr, NS_REC_STOP, NS_EV_COLL, i * MS + 10, 200 + i, 0, 1);
  }
  ns_record p = ns_record_make(NS_REC_START, NS_EV_P2P, 2, 0, 300, 0);
  p.num[NS_P2P_PEER] = 2;
  p.num[NS_P2P_CHANNELS] = 1;
  p.str[NS_P2P_FUNC] = 5;
  feed(fr, &p);
  rec(fr, NS_REC_STOP, NS_EV_P2P, 10, 300, 0, 2);
  ns_fr_stuck out[4];
  CHECK_U64(ns_fr_check(fr, 1000 * SEC, SEC, out, 4), 0);
  ns_fr_stats st;
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.ops, 11);
  CHECK_U64(st.ops_evicted, 0);
  /* the dump: 4 of the 10 operations of comm 1 kept, oldest first */
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  ns_fr_dump_info info = {.host = "h\"1", .pid = 7, .reason = "signal", .now_ns = 5, .timeout_sec = 60};
  CHECK_U64(ns_fr_dump_json(fr, &info, f), 0);
  fclose(f);
  CHECK_TRUE(strstr(buf, "\"host\":\"h\\\"1\"") != NULL);
  CHECK_TRUE(strstr(buf, "\"opsRecorded\":10,\"opsKept\":4,\"inFlight\":0") != NULL);
  CHECK_TRUE(strstr(buf, "\"seq\":5") == NULL && strstr(buf, "\"seq\":6") != NULL && strstr(buf, "\"seq\":9") != NULL);
  CHECK_TRUE(strstr(buf, "\"func\":\"Send\"") != NULL);
  CHECK_TRUE(len > 2 && buf[len - 2] == '}' && buf[len - 1] == '\n');
  free(buf);
  /* a communicator that ends is forgotten */
  ns_fr_comm_end(fr, 1);
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.comms, 1);
  done(fr);
}

/* A stuck op pushed out of a full ring is counted. A child the plugin
 * closes (its CLOSED record) ends as closed; one whose stop was lost is
 * forgotten when the assembler gives it up (here: the end of the data). */
static void test_evict_and_release(void) {
  ns_fr* fr = make(2);
  comm(fr, 1, 0, 0x7FFF);
  coll_start(fr, 1, 0, 0, 1, 1);
  uint64_t lost = proxy_op(fr, 1, 0, 1, 1, 10, 1);
  uint64_t closed = proxy_op(fr, 1, 0, 3, 0, 11, 1);
  (void)lost;
  coll_start(fr, 2, 1, 20, 1, 1);
  coll_start(fr, 3, 2, 30, 1, 1);
  ns_fr_stats st;
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.ops_evicted, 1);
  CHECK_U64(st.children_live, 2);
  ns_record cl = ns_record_make(NS_REC_STATE, NS_EV_PROXY_OP, 1, 40 * SEC, closed, 0);
  cl.state = NS_ST_CLOSED;
  cl.arg = NS_CLOSE_MAX_AGE;
  feed(fr, &cl);
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.children_live, 1);
  CHECK_U64(st.children_released, 0);
  ns_asm_flush(as);
  ns_fr_get_stats(fr, &st);
  CHECK_U64(st.children_live, 0);
  CHECK_U64(st.children_released, 1);
  done(fr);
}

/* The communicator-wide sequence numbers: the sum over functions of the last seqNumber + 1, posted at the START,
 * completed when the operation is done (by itself or by a later one); P2ps not counted; a lost START (seq 3) is
 * covered by the next one of its function. */
static void test_seq_counts(void) {
  ns_fr* fr = make(4);
  comm(fr, 4, 2, 0x7FFF);
  uint64_t posted, completed;
  seqs_of(fr, 4, 0, &posted, &completed);
  CHECK_U64(posted, 0);
  CHECK_U64(completed, 0);
  full_op(fr, 60, 0, 1 * MS, 4);
  full_op(fr, 61, 1, 2 * MS, 4);
  seqs_of(fr, 4, 3 * MS, &posted, &completed);
  CHECK_U64(posted, 2);
  CHECK_U64(completed, 2);
  coll_start_of(fr, 6, 62, 0, 4 * MS, 2, 4); /* AllGather #0: in flight (no KernelCh yet) */
  ns_record p2p = ns_record_make(NS_REC_START, NS_EV_P2P, 4, 4 * MS + 10, 63, 0);
  p2p.str[NS_P2P_FUNC] = 5;
  feed(fr, &p2p);
  seqs_of(fr, 4, 5 * MS, &posted, &completed);
  CHECK_U64(posted, 3);
  CHECK_U64(completed, 2);
  full_op(fr, 64, 2, 6 * MS, 4); /* AllReduce #2 done: so is the AllGather before it */
  seqs_of(fr, 4, 7 * MS, &posted, &completed);
  CHECK_U64(posted, 4);
  CHECK_U64(completed, 4);
  coll_start(fr, 65, 4, 8 * MS, 2, 4); /* AllReduce #3's START lost; #4 in flight */
  seqs_of(fr, 4, 9 * MS, &posted, &completed);
  CHECK_U64(posted, 6);
  CHECK_U64(completed, 4);
  done(fr);
}

int main(void) {
  test_seq_counts();
  test_stuck_episode(16, 0);
  test_stuck_episode(3, 1);
  test_order_and_later();
  test_rules_and_bound();
  test_evict_and_release();
  CHECK_DONE();
}
