/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: tests of the trace reader on files built with the codec: a good
 * file, the same file cut at every byte, a corrupted CRC, a seq gap, and files
 * that are not version-1 traces. Each case prints both sides on failure. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncclscope/trace_reader.h"
#include "trace_builder.h"

static int failures;

#define EXPECT_U64(what, got, want)                                                                  \
  do {                                                                                               \
    uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                                            \
    if (g_ != w_) {                                                                                  \
      fprintf(stderr, "%s:%d: %s: got %" PRIu64 ", want %" PRIu64 "\n", __FILE__, __LINE__, what, g_, w_); \
      failures++;                                                                                    \
    }                                                                                                \
  } while (0)

#define EXPECT_TRUE(what, cond)                                        \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: %s: false\n", __FILE__, __LINE__, what); \
      failures++;                                                      \
    }                                                                  \
  } while (0)

static char dir[256];

typedef struct {
  int process, threads, comm_init, comm_fini, clockfit, counters, end, anchors, details;
  uint64_t records;
  uint64_t type_starts[NS_EV_COUNT];
} tally;

static ns_reader_stats read_all(const char* path, tally* t, int* opened) {
  ns_reader_stats st;
  memset(&st, 0, sizeof st);
  memset(t, 0, sizeof *t);
  char err[512];
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  *opened = r != NULL;
  if (!r) return st;
  ns_item it;
  while (ns_reader_next(r, &it)) {
    switch (it.kind) {
      case NS_ITEM_PROCESS: t->process++; break;
      case NS_ITEM_THREAD: t->threads++; break;
      case NS_ITEM_COMM_INIT: t->comm_init++; break;
      case NS_ITEM_COMM_FINI: t->comm_fini++; break;
      case NS_ITEM_CLOCKFIT: t->clockfit++; break;
      case NS_ITEM_COUNTERS: t->counters++; break;
      case NS_ITEM_END: t->end++; break;
      case NS_ITEM_ANCHOR: t->anchors++; break;
      case NS_ITEM_DETAIL: t->details++; break;
      case NS_ITEM_RECORD:
        t->records++;
        if (it.record->kind == NS_REC_START) t->type_starts[it.record->type]++;
        /* Every string id a record names resolves to something printable. */
        for (int i = 0; i < NS_REC_STRS; i++)
          if (it.record->str[i]) EXPECT_TRUE("string resolves", ns_reader_string(r, it.record->str[i]) != NULL);
        break;
    }
  }
  ns_reader_get_stats(r, &st);
  ns_reader_close(r);
  return st;
}

/* f written whole to DIR/NAME.nstrace (its path in path), then read_all. */
static ns_reader_stats write_read_all(tb_file* f, const char* name, char* path, size_t n, tally* t, int* opened) {
  snprintf(path, n, "%s/%s.nstrace", dir, name);
  EXPECT_U64("write", tb_write(f, path, SIZE_MAX), 0);
  return read_all(path, t, opened);
}

static void path_of(char* out, size_t n) { snprintf(out, n, "%s/ncclscope-node0-4001.nstrace", dir); }

static void test_good_file(void) {
  EXPECT_U64("write", tb_write_standard_run(dir, 1, 0), 0);
  char path[512];
  path_of(path, sizeof path);
  char err[512];
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  EXPECT_TRUE("open", r != NULL);
  if (!r) return;
  ns_item it;
  int n = 0;
  const ns_comm_info* comm = NULL;
  while (ns_reader_next(r, &it)) {
    if (n == 0) EXPECT_U64("first item is PROCESS", it.kind, NS_ITEM_PROCESS);
    if (it.kind == NS_ITEM_COMM_INIT) {
      comm = it.comm;
      EXPECT_U64("comm serial", comm->comm, 1);
      EXPECT_U64("comm id", comm->comm_id, 0xC0FFEE0001ull);
      EXPECT_U64("rank", (uint64_t)(int64_t)comm->rank, 0);
      EXPECT_U64("nranks", comm->nranks, 2);
      EXPECT_U64("abi", comm->abi_version, 5);
      EXPECT_U64("mask", comm->event_mask, 0x7FFF);
      EXPECT_U64("has name", comm->has_name, 1);
      EXPECT_U64("name", strcmp(comm->comm_name, "world \"x\""), 0);
    }
    if (it.kind == NS_ITEM_CLOCKFIT) {
      EXPECT_U64("clockfit comm", it.props->comm, 1);
      EXPECT_TRUE("clockfit drift", it.props->has[NS_P_GPU_DRIFT_PPM] && it.props->f[NS_P_GPU_DRIFT_PPM] == 1.5);
    }
    if (it.kind == NS_ITEM_ANCHOR) {
      EXPECT_U64("anchor ts", it.props->u[NS_P_TS], 1000000000ull + 3000); /* standard_run.c: T + 3000 */
      EXPECT_U64("anchor offset", it.props->u[NS_P_REALTIME_OFFSET_NS], (uint64_t)(int64_t)-1234567);
    }
    if (it.kind == NS_ITEM_COMM_FINI) {
      EXPECT_U64("fini events", it.props->u[NS_P_EVENTS], 23);
      EXPECT_U64("fini has dropped", it.props->has[NS_P_DROPPED], 1);
    }
    n++;
  }
  const ns_process_info* pi = ns_reader_process(r);
  EXPECT_TRUE("process info", pi != NULL);
  if (pi) {
    EXPECT_U64("pid", pi->pid, 4001);
    EXPECT_U64("host", strcmp(pi->hostname, "node0"), 0);
    EXPECT_U64("clock source", strcmp(pi->clock_source, "tsc"), 0);
  }
  EXPECT_U64("string 1", strcmp(ns_reader_string(r, 1), "AllReduce"), 0);
  EXPECT_TRUE("string 0 is NULL", ns_reader_string(r, 0) == NULL);
  EXPECT_U64("unknown string is empty", strcmp(ns_reader_string(r, 12345), ""), 0);
  ns_reader_stats st;
  ns_reader_get_stats(r, &st);
  EXPECT_U64("clean end", st.clean_end, 1);
  EXPECT_U64("bytes cut", st.bytes_cut, 0);
  EXPECT_U64("bytes ok", st.bytes_ok, st.file_size);
  EXPECT_U64("seq gaps", st.seq_gaps, 0);
  EXPECT_U64("stop reason empty", st.stop_reason[0], 0);
  ns_reader_close(r);

  tally t;
  int opened;
  read_all(path, &t, &opened);
  EXPECT_U64("threads", t.threads, 3);
  EXPECT_U64("comm init", t.comm_init, 1);
  EXPECT_U64("comm fini", t.comm_fini, 1);
  EXPECT_U64("clockfit", t.clockfit, 1);
  EXPECT_U64("end", t.end, 1);
  EXPECT_U64("anchors", t.anchors, 1);
  /* KernelPhase (v7) is not among the types this v6 trace records */
  for (int ty = 0; ty < NS_EV_COUNT; ty++)
    EXPECT_TRUE("every type started", ty == NS_EV_KERNEL_PHASE || t.type_starts[ty] > 0);
}

/* Cut the file at every length: the reader never crashes, accounts for every
 * byte, and keeps all blocks before the cut. */
static void test_truncation_everywhere(void) {
  char path[512];
  path_of(path, sizeof path);
  EXPECT_U64("write", tb_write_standard_run(dir, 1, 0), 0);
  tally full;
  int opened;
  ns_reader_stats fs = read_all(path, &full, &opened);
  uint64_t size = fs.file_size;
  uint64_t prev_records = 0;
  for (uint64_t keep = size; keep + 1 > 0; keep--) {
    EXPECT_U64("write cut", tb_write_standard_run(dir, 1, (size_t)(size - keep)), 0);
    tally t;
    ns_reader_stats st = read_all(path, &t, &opened);
    if (keep < sizeof(ns_file_header)) {
      EXPECT_U64("short file refused", opened, 0);
      if (keep == 0) break;
      continue;
    }
    EXPECT_U64("cut file opens", opened, 1);
    EXPECT_U64("file size", st.file_size, keep);
    EXPECT_U64("ok + skipped + cut = size", st.bytes_ok + st.bytes_skipped + st.bytes_cut, keep);
    EXPECT_TRUE("records never grow as the file shrinks", keep == size || t.records <= prev_records);
    prev_records = t.records;
    if (keep == size) continue;
    EXPECT_U64("no clean end", st.clean_end, 0);
    /* The last block (END) is 24 bytes: a cut inside it keeps all records. */
    if (keep > size - sizeof(ns_block_header)) {
      EXPECT_U64("records kept", t.records, full.records);
      EXPECT_U64("bytes cut in last block", st.bytes_cut, keep - (size - sizeof(ns_block_header)));
      EXPECT_TRUE("stop reason", strstr(st.stop_reason, "partial") != NULL);
    }
  }
}

static void test_corrupt_crc(void) {
  tb_file f;
  tb_begin(&f);
  tb_process(&f, 7, "h", 0);
  ns_record a[2] = {tb_start(NS_EV_PROXY_CTRL, 0, 9, 100, 1, 0), tb_stop(NS_EV_PROXY_CTRL, 0, 9, 200, 1)};
  tb_events(&f, 9, 1, a, 2);
  size_t bad_at = f.buf.len;
  tb_events(&f, 9, 1, a, 2);
  tb_end(&f);
  f.buf.data[bad_at + sizeof(ns_block_header) + 3] ^= 0x40; /* inside the second EVENTS payload */
  char path[512];
  tally t;
  int opened;
  ns_reader_stats st = write_read_all(&f, "crc", path, sizeof path, &t, &opened);
  EXPECT_U64("opened", opened, 1);
  /* The damaged block is skipped, the reader resynchronises on END. */
  uint64_t bad_len = f.buf.len - sizeof(ns_block_header) - bad_at;
  EXPECT_U64("records of the intact block", t.records, 2);
  EXPECT_U64("bytes ok", st.bytes_ok, f.buf.len - bad_len);
  EXPECT_U64("bytes skipped", st.bytes_skipped, bad_len);
  EXPECT_U64("bytes cut", st.bytes_cut, 0);
  EXPECT_U64("one damaged range", st.damaged, 1);
  EXPECT_U64("the END after it is read", st.clean_end, 1);
  EXPECT_U64("the lost block shows as a gap", st.seq_gaps, 1);
  ns_reader* r = ns_reader_open(path, NULL, 0);
  ns_item it;
  while (r && ns_reader_next(r, &it)) {}
  const ns_reader_damage* d = NULL;
  EXPECT_U64("damage list", r ? ns_reader_damage_list(r, &d) : 0, 1);
  if (d) {
    EXPECT_U64("damage offset", d[0].offset, bad_at);
    EXPECT_U64("damage length", d[0].length, bad_len);
    EXPECT_U64("lost seq", d[0].seq_first, 2);
    EXPECT_U64("next seq", d[0].seq_next, 3);
    EXPECT_TRUE("reason names the CRC", strstr(d[0].why, "CRC") != NULL);
  }
  ns_reader_close(r);

  /* A bad block magic: skipped the same way. */
  f.buf.data[bad_at + sizeof(ns_block_header) + 3] ^= 0x40;
  f.buf.data[bad_at] ^= 0xFF;
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  st = read_all(path, &t, &opened);
  EXPECT_U64("records around bad magic", t.records, 2);
  EXPECT_U64("clean end after bad magic", st.clean_end, 1);

  /* A duplicated block is read once. */
  f.buf.data[bad_at] ^= 0xFF;
  size_t len = f.buf.len, end_len = sizeof(ns_block_header);
  uint8_t* copy = malloc(len + bad_len);
  memcpy(copy, f.buf.data, len - end_len);
  memcpy(copy + len - end_len, f.buf.data + bad_at, bad_len); /* the second EVENTS block again */
  memcpy(copy + len - end_len + bad_len, f.buf.data + len - end_len, end_len);
  FILE* out = fopen(path, "wb");
  fwrite(copy, 1, len + bad_len, out);
  fclose(out);
  free(copy);
  st = read_all(path, &t, &opened);
  EXPECT_U64("records with a duplicate", t.records, 4);
  EXPECT_U64("duplicate dropped", st.blocks_duplicate, 1);
  EXPECT_U64("no gap", st.seq_gaps, 0);
  EXPECT_U64("ok + duplicate = size", st.bytes_ok + st.bytes_duplicate, len + bad_len);
  tb_free(&f);
}

/* A block copied far away (more than a thousand blocks later, whether
 * inserted or written over another block) is read once, wherever it is; a
 * block whose seq was damaged into an earlier block's seq, with its own
 * payload, is still read. */
static void test_far_duplicate(void) {
  enum { NEV = 1500, COPIED = 3, AT = 1300, RENUMBERED = 1400 };
  tb_file f;
  tb_begin(&f);
  tb_process(&f, 7, "h", 0);
  size_t off[NEV + 1], size[NEV];
  for (int i = 0; i < NEV; i++) {
    off[i] = f.buf.len;
    ns_record a[2] = {tb_start(NS_EV_PROXY_CTRL, 0, 9, 1000000 + 10 * (uint64_t)i, 100000 + (uint64_t)i, 0),
                      tb_stop(NS_EV_PROXY_CTRL, 0, 9, 1000005 + 10 * (uint64_t)i, 100000 + (uint64_t)i)};
    tb_events(&f, 9, 1, a, 2);
    size[i] = f.buf.len - off[i];
  }
  off[NEV] = f.buf.len;
  tb_end(&f);
  char path[512];
  snprintf(path, sizeof path, "%s/far-dup.nstrace", dir);
  tally t;
  int opened;

  /* inserted after block AT: the file grows by one block */
  size_t len = f.buf.len, dup = size[COPIED];
  uint8_t* copy = malloc(len + dup);
  memcpy(copy, f.buf.data, off[AT + 1]);
  memcpy(copy + off[AT + 1], f.buf.data + off[COPIED], dup);
  memcpy(copy + off[AT + 1] + dup, f.buf.data + off[AT + 1], len - off[AT + 1]);
  FILE* out = fopen(path, "wb");
  fwrite(copy, 1, len + dup, out);
  fclose(out);
  ns_reader_stats st = read_all(path, &t, &opened);
  EXPECT_U64("far duplicate inserted: records", t.records, 2 * NEV);
  EXPECT_U64("far duplicate inserted: dropped", st.blocks_duplicate, 1);
  EXPECT_U64("far duplicate inserted: bytes", st.bytes_duplicate, dup);
  EXPECT_U64("far duplicate inserted: no gap", st.seq_gaps, 0);
  EXPECT_U64("far duplicate inserted: clean end", st.clean_end, 1);

  /* block AT copied before its original, after block COPIED: the copy is read there, the original
   * dropped, and no block is missing */
  memcpy(copy, f.buf.data, off[COPIED + 1]);
  memcpy(copy + off[COPIED + 1], f.buf.data + off[AT], dup);
  memcpy(copy + off[COPIED + 1] + dup, f.buf.data + off[COPIED + 1], len - off[COPIED + 1]);
  out = fopen(path, "wb");
  fwrite(copy, 1, len + dup, out);
  fclose(out);
  st = read_all(path, &t, &opened);
  EXPECT_U64("copy before its original: records", t.records, 2 * NEV);
  EXPECT_U64("copy before its original: dropped", st.blocks_duplicate, 1);
  EXPECT_U64("copy before its original: no gap", st.seq_gaps, 0);

  /* a block whose seq was damaged into a far later one: the next block resumes the sequence, so it
   * stood for the seq it skipped; nothing missing */
  memcpy(copy, f.buf.data, len);
  ns_block_header far;
  memcpy(&far, copy + off[AT], sizeof far);
  far.seq += 1000000;
  memcpy(copy + off[AT], &far, sizeof far);
  out = fopen(path, "wb");
  fwrite(copy, 1, len, out);
  fclose(out);
  st = read_all(path, &t, &opened);
  EXPECT_U64("seq damaged forward: records", t.records, 2 * NEV);
  EXPECT_U64("seq damaged forward: no gap", st.seq_gaps, 0);

  /* written over block AT (same size: every EVENTS block here is): that block is lost, the copy dropped */
  EXPECT_U64("blocks of one size", size[AT], dup);
  memcpy(copy, f.buf.data, len);
  memcpy(copy + off[AT], f.buf.data + off[COPIED], dup);
  out = fopen(path, "wb");
  fwrite(copy, 1, len, out);
  fclose(out);
  st = read_all(path, &t, &opened);
  EXPECT_U64("far duplicate over a block: records", t.records, 2 * (NEV - 1));
  EXPECT_U64("far duplicate over a block: dropped", st.blocks_duplicate, 1);
  EXPECT_U64("far duplicate over a block: one block missing", st.seq_gaps, 1);

  /* a block whose seq was damaged into an earlier block's seq: its payload differs, it is read */
  memcpy(copy, f.buf.data, len);
  ns_block_header h;
  memcpy(&h, copy + off[RENUMBERED], sizeof h);
  h.seq = 5;
  memcpy(copy + off[RENUMBERED], &h, sizeof h);
  out = fopen(path, "wb");
  fwrite(copy, 1, len, out);
  fclose(out);
  st = read_all(path, &t, &opened);
  EXPECT_U64("damaged seq: every record", t.records, 2 * NEV);
  EXPECT_U64("damaged seq: not a duplicate", st.blocks_duplicate, 0);
  free(copy);
  tb_free(&f);
}

static void test_seq_gap_and_unknown_block(void) {
  tb_file f;
  tb_begin(&f);
  tb_process(&f, 7, "h", 0);
  f.seq += 3; /* three blocks lost */
  tb_unknown_block(&f, 77);
  ns_record a[2] = {tb_start(NS_EV_PROXY_CTRL, 0, 9, 100, 1, 0), tb_stop(NS_EV_PROXY_CTRL, 0, 9, 200, 1)};
  tb_events(&f, 9, 1, a, 2);
  tb_end(&f);
  char path[512];
  tally t;
  int opened;
  ns_reader_stats st = write_read_all(&f, "gap", path, sizeof path, &t, &opened);
  EXPECT_U64("seq gaps", st.seq_gaps, 3);
  EXPECT_U64("records after the gap", t.records, 2);
  EXPECT_U64("clean end", st.clean_end, 1);
  EXPECT_U64("blocks", st.blocks, 4);
  tb_free(&f);
}

static void test_not_a_trace(void) {
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/bad.nstrace", dir);
  tb_file f;
  tb_begin(&f);
  tb_end(&f);
  ns_file_header* h = (ns_file_header*)f.buf.data;
  h->version_major = 2;
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  EXPECT_TRUE("major 2 refused", r == NULL);
  EXPECT_TRUE("message names the version", strstr(err, "version 2.") != NULL);
  h->version_major = 1;
  h->version_minor = 9; /* any minor is read */
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  r = ns_reader_open(path, err, sizeof err);
  EXPECT_TRUE("minor 9 read", r != NULL);
  ns_reader_close(r);
  h->version_minor = 1;
  /* A damaged header with valid blocks after it: read, the header is the damaged range. */
  h->magic[0] = 'X';
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  tally t;
  int opened;
  ns_reader_stats st = read_all(path, &t, &opened);
  EXPECT_TRUE("bad magic, valid blocks: read", opened);
  EXPECT_U64("bad magic: header damaged", st.header_damaged, 1);
  EXPECT_U64("bad magic: one damaged range", st.damaged, 1);
  EXPECT_U64("bad magic: the END block read", t.end, 1);
  EXPECT_U64("bad magic: header bytes skipped", st.bytes_skipped, sizeof(ns_file_header));
  EXPECT_U64("bad magic: bytes add up", st.bytes_ok + st.bytes_skipped, f.buf.len);
  h->magic[0] = 'N';
  h->version_major = 3; /* one bit from 1, blocks of version 1 after it */
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  st = read_all(path, &t, &opened);
  EXPECT_TRUE("major 3 with version-1 blocks: read", opened && t.end == 1 && st.header_damaged);
  h->version_major = 1;
  h->header_size = 64; /* a block starts at 32: the size is damaged, not a longer header */
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  st = read_all(path, &t, &opened);
  EXPECT_TRUE("header size 64, a block at 32: read", opened && t.end == 1 && st.header_damaged);
  h->header_size = 32;
  /* A bad magic and no valid block: not a trace. */
  h->magic[0] = 'X';
  f.buf.data[sizeof(ns_file_header)] ^= 0xFF;
  EXPECT_U64("write", tb_write(&f, path, SIZE_MAX), 0);
  r = ns_reader_open(path, err, sizeof err);
  EXPECT_TRUE("bad magic refused", r == NULL);
  EXPECT_TRUE("message says not a trace", strstr(err, "not an ncclscope trace") != NULL);
  snprintf(path, sizeof path, "%s/missing.nstrace", dir);
  r = ns_reader_open(path, err, sizeof err);
  EXPECT_TRUE("missing refused", r == NULL);
  tb_free(&f);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/ncclscope-reader-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_good_file();
  test_truncation_everywhere();
  test_corrupt_crc();
  test_far_duplicate();
  test_seq_gap_and_unknown_block();
  test_not_a_trace();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("test_reader: all passed\n");
  return failures ? 1 : 0;
}
