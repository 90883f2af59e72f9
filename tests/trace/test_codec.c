/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: round-trip tests of the trace codec against hand-built records. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace/codec.h"

static int failures;

#define EXPECT_U64(what, got, want)                                                                  \
  do {                                                                                               \
    uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                                            \
    if (g_ != w_) {                                                                                  \
      fprintf(stderr, "%s:%d: %s: got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")\n", \
              __FILE__, __LINE__, what, g_, g_, w_, w_);                                             \
      failures++;                                                                                    \
    }                                                                                                \
  } while (0)

static void test_crc(void) {
  /* The standard CRC-32 check value. */
  EXPECT_U64("crc32(123456789)", ns_crc32("123456789", 9), 0xCBF43926u);
}

static void test_varint_bounds(void) {
  ns_buf b = {0};
  uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) ns_buf_put_varint(&b, vals[i]);
  const uint8_t* p = b.data;
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    uint64_t v = 0;
    EXPECT_U64("varint ok", ns_get_varint(&p, b.data + b.len, &v), 0);
    EXPECT_U64("varint value", v, vals[i]);
  }
  /* A truncated varint is an error, not a read past the end. */
  uint8_t cut[2] = {0x80, 0x80};
  const uint8_t* q = cut;
  uint64_t v;
  EXPECT_U64("truncated varint", (uint64_t)(int64_t)ns_get_varint(&q, cut + 2, &v), (uint64_t)(int64_t)-1);
  ns_buf_free(&b);
}

static void test_events_roundtrip(void) {
  ns_record in[4];
  memset(in, 0, sizeof in);
  in[0] = (ns_record){.kind = NS_REC_START, .type = NS_EV_COLL, .comm = 3, .ts = 1000000, .id = 77, .parent = 70};
  uint64_t coll_nums[8] = {42, 1 << 20, (uint64_t)-1, 0x7f0000001000ull, 0x7f0000002000ull, 64, 8, 71};
  memcpy(in[0].num, coll_nums, sizeof coll_nums);
  in[0].str[0] = 1;
  in[0].str[1] = 2;
  in[0].str[2] = 3;
  in[0].str[3] = 0;
  in[1] = (ns_record){.kind = NS_REC_START, .type = NS_EV_PROXY_OP, .flags = NS_RF_PXN | NS_RF_PARENT_RAW,
                      .comm = 0, .ts = 999000, .id = 78, .parent = 0xdeadbeef000ull, .origin_pid = 4242};
  in[1].num[0] = 63;
  in[1].num[5] = 4242;
  in[2] = (ns_record){.kind = NS_REC_STATE, .type = NS_EV_PROXY_STEP, .flags = NS_RF_HAS_ARG, .comm = 3,
                      .ts = 1000500, .id = 79, .state = 9, .arg = 524288};
  in[3] = (ns_record){.kind = NS_REC_STOP, .type = NS_EV_COLL, .comm = 3, .ts = 1001000, .id = 77};

  ns_buf b = {0};
  ns_event_encoder e;
  ns_events_begin(&e, &b, 1234, 5, 1000000, 77);
  for (int i = 0; i < 4; i++) ns_events_put(&e, &in[i]);
  ns_events_end(&e, 9);
  EXPECT_U64("buffer ok", b.failed, 0);

  ns_block_header h;
  memcpy(&h, b.data, sizeof h);
  EXPECT_U64("block magic", h.magic, NS_BLOCK_MAGIC);
  EXPECT_U64("block kind", h.kind, NS_BLOCK_EVENTS);
  EXPECT_U64("block seq", h.seq, 9);
  EXPECT_U64("payload size", h.payload_size, b.len - sizeof h);
  EXPECT_U64("payload crc", h.payload_crc32, ns_crc32(b.data + sizeof h, h.payload_size));

  ns_event_decoder d;
  EXPECT_U64("open", ns_events_open(&d, b.data + sizeof h, h.payload_size), 0);
  EXPECT_U64("tid", d.tid, 1234);
  EXPECT_U64("ring", d.ring, 5);
  for (int i = 0; i < 4; i++) {
    ns_record r;
    EXPECT_U64("next", ns_events_next(&d, &r), 1);
    EXPECT_U64("kind", r.kind, in[i].kind);
    EXPECT_U64("type", r.type, in[i].type);
    EXPECT_U64("flags", r.flags, in[i].flags);
    EXPECT_U64("comm", r.comm, in[i].comm);
    EXPECT_U64("ts", r.ts, in[i].ts);
    EXPECT_U64("id", r.id, in[i].id);
    EXPECT_U64("tid of record", r.tid, 1234);
    if (in[i].kind == NS_REC_START) {
      EXPECT_U64("parent", r.parent, in[i].parent);
      EXPECT_U64("origin pid", r.origin_pid, in[i].origin_pid);
      for (int k = 0; k < NS_REC_NUMS; k++) EXPECT_U64("num", r.num[k], in[i].num[k]);
      for (int k = 0; k < NS_REC_STRS; k++) EXPECT_U64("str", r.str[k], in[i].str[k]);
    }
    if (in[i].kind == NS_REC_STATE) {
      EXPECT_U64("state", r.state, in[i].state);
      EXPECT_U64("arg", r.arg, in[i].arg);
    }
  }
  ns_record end;
  EXPECT_U64("end of block", ns_events_next(&d, &end), 0);

  EXPECT_U64("the count matches the records", ns_events_miscounted(&d), 0);

  /* Every truncation of the payload decodes to fewer records, never a crash: an error, or (cut
   * between two records) an end with the count seen not to match. */
  for (uint32_t cut = 0; cut < h.payload_size; cut++) {
    ns_event_decoder t;
    if (ns_events_open(&t, b.data + sizeof h, cut) != 0) continue;
    ns_record r;
    int rc, n = 0;
    while ((rc = ns_events_next(&t, &r)) == 1) n++;
    if ((rc != -1 && !(rc == 0 && ns_events_miscounted(&t))) || n >= 4) {
      fprintf(stderr, "truncation at %u: rc %d after %d records\n", cut, rc, n);
      failures++;
    }
  }
  ns_buf_free(&b);
}

/* A count that disagrees with the records (a CRC-valid block whose count was
 * rewritten, here to 2^40, more than a uint32 holds): every record of the
 * payload is read, and the decoder says the count was wrong. */
static void test_events_miscounted(void) {
  ns_buf b = {0};
  ns_event_encoder e;
  ns_events_begin(&e, &b, 7, 0, 5000, 10);
  for (uint64_t i = 0; i < 3; i++) {
    ns_record r = {.kind = NS_REC_STOP, .type = NS_EV_COLL, .ts = 5000 + i, .id = 10 + i};
    ns_events_put(&e, &r);
  }
  ns_events_end(&e, 0);
  const uint8_t* payload = b.data + sizeof(ns_block_header);
  const uint8_t* end = b.data + b.len;
  const uint8_t* p = payload;
  uint64_t v;
  for (int i = 0; i < 5; i++) EXPECT_U64("header varint", ns_get_varint(&p, end, &v), 0);
  EXPECT_U64("the count written", v, 3);
  ns_buf bad = {0};
  const uint8_t* count_at = p - 5; /* the count is padded to 5 bytes */
  ns_buf_put(&bad, payload, (size_t)(count_at - payload));
  ns_buf_put_varint(&bad, 1ull << 40);
  ns_buf_put(&bad, p, (size_t)(end - p));

  ns_event_decoder d;
  EXPECT_U64("open", ns_events_open(&d, bad.data, bad.len), 0);
  ns_record r;
  int rc, n = 0;
  while ((rc = ns_events_next(&d, &r)) == 1) EXPECT_U64("record id", r.id, 10 + (uint64_t)n++);
  EXPECT_U64("the block ends cleanly", rc, 0);
  EXPECT_U64("every record read", n, 3);
  EXPECT_U64("the count seen to be wrong", ns_events_miscounted(&d), 1);
  ns_buf_free(&bad);
  ns_buf_free(&b);
}

static void test_props_and_strings(void) {
  ns_buf b = {0};
  ns_props_u64(&b, NS_P_PID, 31337);
  ns_props_i64(&b, NS_P_RANK, -1);
  ns_props_str(&b, NS_P_HOSTNAME, "node-7", 6);
  ns_props_f64(&b, NS_P_TSC_HZ, 2.5e9);
  const uint8_t* p = b.data;
  ns_prop pr;
  EXPECT_U64("prop1", ns_props_next(&p, b.data + b.len, &pr), 1);
  EXPECT_U64("pid", pr.u, 31337);
  EXPECT_U64("prop2", ns_props_next(&p, b.data + b.len, &pr), 1);
  EXPECT_U64("rank", (int64_t)pr.u, (uint64_t)(int64_t)-1);
  EXPECT_U64("prop3", ns_props_next(&p, b.data + b.len, &pr), 1);
  EXPECT_U64("host len", pr.slen, 6);
  EXPECT_U64("host bytes", memcmp(pr.s, "node-7", 6), 0);
  EXPECT_U64("prop4", ns_props_next(&p, b.data + b.len, &pr), 1);
  EXPECT_U64("tsc hz", (uint64_t)pr.f, 2500000000u);
  EXPECT_U64("props end", ns_props_next(&p, b.data + b.len, &pr), 0);

  ns_buf_reset(&b);
  ns_strings_encoder se;
  ns_strings_begin(&se, &b);
  ns_strings_put(&se, 1, "AllReduce", 9);
  ns_strings_put(&se, 2, "", 0);
  ns_strings_end(&se, 0);
  ns_strings_decoder sd;
  EXPECT_U64("strings open", ns_strings_open(&sd, b.data + sizeof(ns_block_header), b.len - sizeof(ns_block_header)), 0);
  uint32_t id;
  const char* s;
  size_t n;
  EXPECT_U64("string 1", ns_strings_next(&sd, &id, &s, &n), 1);
  EXPECT_U64("string 1 id", id, 1);
  EXPECT_U64("string 1 bytes", n == 9 && memcmp(s, "AllReduce", 9) == 0, 1);
  EXPECT_U64("string 2", ns_strings_next(&sd, &id, &s, &n), 1);
  EXPECT_U64("string 2 empty", n, 0);
  EXPECT_U64("strings end", ns_strings_next(&sd, &id, &s, &n), 0);
  ns_buf_free(&b);
}

int main(void) {
  test_crc();
  test_varint_bounds();
  test_events_roundtrip();
  test_events_miscounted();
  test_props_and_strings();
  printf("codec: %s (%d failures)\n", failures ? "FAIL" : "ok", failures);
  return failures ? 1 : 0;
}
