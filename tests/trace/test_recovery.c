/* SPDX-License-Identifier: Apache-2.0 */
/* Recovery of damaged traces, fuzz-style: a trace of 400 EVENTS blocks is
 * damaged in 600 ways (bit flips, overwritten and zeroed ranges, deleted and
 * inserted bytes, duplicated blocks, several at once) and read back. Every
 * block whose bytes the damage did not touch must come back with all its
 * records, exactly once; a duplicated block is read once; the damage list
 * accounts for the skipped bytes. Prints the totals: records after the first
 * damage that were recovered (a reader that stops at the first bad block recovers none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ncclscope/trace_reader.h"
#include "trace_builder.h"
#include "xorshift.h"

#define NBLOCKS 400
#define PER_BLOCK 40
#define CASES 600

typedef struct {
  uint64_t offset, size, seq;
  uint64_t records;
} block_info;

static block_info blocks[NBLOCKS + 64];
static size_t nblocks;
static char dir[256];

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) { return xorshift64(&rng_state); }

/* A trace: process, strings, thread, comm, NBLOCKS EVENTS blocks, fini, end. */
static void build(tb_file* f) {
  tb_begin(f);
  tb_process(f, 4242, "fuzzhost", 0);
  uint32_t ids[1] = {1};
  const char* strs[1] = {"AllReduce"};
  tb_strings(f, 1, ids, strs);
  tb_thread(f, 77, 1, "proxy");
  tb_comm c = {.comm = 1, .comm_id = 0xabc, .rank = 0, .nranks = 2, .nnodes = 1, .name = "fuzz", .abi = 6, .mask = 0x7FFF, .uuid = ""};
  tb_comm_init(f, &c);
  uint64_t id = 1, ts = 1000;
  for (int b = 0; b < NBLOCKS; b++) {
    ns_record recs[PER_BLOCK];
    for (int i = 0; i < PER_BLOCK; i += 2) {
      recs[i] = tb_start(NS_EV_PROXY_STEP, 1, 77, ts, id, 0);
      recs[i + 1] = tb_stop(NS_EV_PROXY_STEP, 1, 77, ts + 50 + rnd() % 100, id);
      ts += 200;
      id++;
    }
    tb_events(f, 77, 1, recs, PER_BLOCK);
  }
  tb_comm_fini(f, 1, ts, 77, id - 1, 0);
  tb_end(f);
}

/* Reads path; per block seq: records delivered (seq < cap). Returns total records. */
static uint64_t read_back(const char* path, uint64_t* per_seq, size_t cap, ns_reader_stats* st, int* opened) {
  char err[256];
  memset(per_seq, 0, cap * sizeof *per_seq);
  ns_reader* r = ns_reader_open(path, err, sizeof err);
  *opened = r != NULL;
  if (!r) return 0;
  ns_item it;
  uint64_t total = 0;
  while (ns_reader_next(r, &it)) {
    if (it.kind != NS_ITEM_RECORD) continue;
    uint64_t off, seq;
    ns_reader_block_pos(r, &off, &seq);
    if (seq < cap) per_seq[seq]++;
    total++;
  }
  ns_reader_get_stats(r, st);
  ns_reader_close(r);
  return total;
}

static int write_file(const char* path, const uint8_t* data, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/ns-recovery-%d", (int)getpid());
  char cmd[400];
  snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
  if (system(cmd) != 0) return 2;
  tb_file f;
  build(&f);
  char path[512];
  snprintf(path, sizeof path, "%s/orig.nstrace", dir);
  CHECK_U64(write_file(path, f.buf.data, f.buf.len), 0);

  /* The original's blocks: offset, size, seq, records. */
  {
    char err[256];
    ns_reader* r = ns_reader_open(path, err, sizeof err);
    CHECK_TRUE(r != NULL);
    ns_item it;
    while (r && ns_reader_next(r, &it)) {
      uint64_t off, seq;
      ns_reader_block_pos(r, &off, &seq);
      if (nblocks == 0 || blocks[nblocks - 1].seq != seq) {
        ns_block_header h; /* blocks are not aligned in the file: copy the header out */
        memcpy(&h, f.buf.data + off, sizeof h);
        blocks[nblocks++] = (block_info){off, sizeof h + h.payload_size, seq, 0};
      }
      if (it.kind == NS_ITEM_RECORD) blocks[nblocks - 1].records++;
    }
    ns_reader_close(r);
  }
  uint64_t orig_records = 0;
  for (size_t i = 0; i < nblocks; i++) orig_records += blocks[i].records;
  CHECK_U64(orig_records, (uint64_t)NBLOCKS * PER_BLOCK);

  size_t cap = nblocks + 8;
  uint64_t* per_seq = calloc(cap, sizeof *per_seq);
  uint8_t* buf = malloc(f.buf.len * 2 + 65536);
  uint64_t after_damage = 0, recovered_after = 0, total_recovered = 0;
  int kinds_seen[7] = {0};
  for (int c = 0; c < CASES && !check_failures; c++) {
    size_t n = f.buf.len;
    memcpy(buf, f.buf.data, n);
    /* damaged[i]: block i's bytes were touched (for deletions and insertions:
     * the blocks the edit falls in; the ones after it only moved). */
    int damaged[NBLOCKS + 64] = {0};
    int kind = (int)(rnd() % 7), edits = kind == 6 ? 2 + (int)(rnd() % 4) : 1;
    kinds_seen[kind]++;
    int dup_of = -1;
    uint64_t first_damage = n;
    for (int e = 0; e < edits; e++) {
      int k = kind == 6 ? (int)(rnd() % 3) : kind;
      /* Offsets in the original's coordinates: edits are applied to the
       * copy in place (kinds 0..2 keep the size), so only one size-changing
       * edit is made per case (kinds 3..5). */
      uint64_t at = sizeof(ns_file_header) + rnd() % (n - sizeof(ns_file_header));
      uint64_t len = k == 0 ? 1 : 1 + rnd() % 3000;
      if (at + len > n) len = n - at;
      if (k == 0) buf[at] ^= (uint8_t)(1u << (rnd() % 8));
      else if (k == 1) for (uint64_t i = 0; i < len; i++) buf[at + i] = (uint8_t)rnd();
      else if (k == 2) memset(buf + at, 0, len);
      else if (k == 3) { /* delete [at, at+len) */
        memmove(buf + at, buf + at + len, n - at - len);
        n -= len;
      } else if (k == 4) { /* insert len garbage bytes at `at` */
        memmove(buf + at + len, buf + at, n - at);
        for (uint64_t i = 0; i < len; i++) buf[at + i] = (uint8_t)rnd();
        n += len;
        len = 1; /* touches the block it falls in */
      } else { /* duplicate an EVENTS block right after itself */
        size_t b = 4 + (size_t)(rnd() % NBLOCKS);
        dup_of = (int)b;
        at = blocks[b].offset + blocks[b].size;
        memmove(buf + at + blocks[b].size, buf + at, n - at);
        memcpy(buf + at, buf + blocks[b].offset, blocks[b].size);
        n += blocks[b].size;
        len = 0;
      }
      for (size_t i = 0; i < nblocks; i++)
        if (len && at < blocks[i].offset + blocks[i].size && at + len > blocks[i].offset) damaged[i] = 1;
      if (len && at < first_damage) first_damage = at;
    }
    CHECK_U64(write_file(path, buf, n), 0);
    ns_reader_stats st;
    int opened;
    uint64_t total = read_back(path, per_seq, cap, &st, &opened);
    CHECK_TRUE(opened);
    total_recovered += total;
    for (size_t i = 0; i < nblocks; i++) {
      if (damaged[i]) continue;
      /* an intact block: all its records, once (a damaged block whose seq was
       * hit may add records under the same seq: at least, then) */
      if (per_seq[blocks[i].seq] < blocks[i].records) {
        fprintf(stderr, "case %d (kind %d): intact block seq %llu at %llu: %llu of %llu records\n", c, kind,
                (unsigned long long)blocks[i].seq, (unsigned long long)blocks[i].offset,
                (unsigned long long)per_seq[blocks[i].seq], (unsigned long long)blocks[i].records);
        CHECK_TRUE(per_seq[blocks[i].seq] >= blocks[i].records);
        break;
      }
      if (blocks[i].offset > first_damage) {
        after_damage += blocks[i].records;
        recovered_after += per_seq[blocks[i].seq] < blocks[i].records ? per_seq[blocks[i].seq] : blocks[i].records;
      }
    }
    if (kind == 5) {
      CHECK_U64(st.blocks_duplicate, 1);
      CHECK_U64(total, orig_records);
      CHECK_U64(per_seq[blocks[dup_of].seq], blocks[dup_of].records);
      CHECK_U64(st.seq_gaps, 0);
    }
    CHECK_U64(st.bytes_ok + st.bytes_skipped + st.bytes_duplicate + st.bytes_cut, n);
    CHECK_TRUE(total <= orig_records + (uint64_t)PER_BLOCK * 8);
  }
  printf("%d damaged copies (bit flip %d, overwrite %d, zeroed %d, deletion %d, insertion %d, duplicate %d, "
         "several %d): %llu of %llu intact records after the first damage recovered; %llu of %llu records in all\n",
         CASES, kinds_seen[0], kinds_seen[1], kinds_seen[2], kinds_seen[3], kinds_seen[4], kinds_seen[5],
         kinds_seen[6], (unsigned long long)recovered_after, (unsigned long long)after_damage,
         (unsigned long long)total_recovered, (unsigned long long)orig_records * CASES);
  CHECK_U64(recovered_after, after_damage);
  free(buf);
  free(per_seq);
  tb_free(&f);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 2;
  CHECK_DONE();
}
