/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope bench input: synthetic traces of a large job, for `ncclscope
 * report` at scale (bench/report_scale.sh).
 * usage: gen_ranks DIR RANKS COLLS [RANKS_PER_PROC [PROCS_PER_HOST [STRAGGLER]]]
 * One trace file per process (RANKS_PER_PROC ranks each [8]), processes on
 * hosts of PROCS_PER_HOST [8]; each host's CLOCK_MONOTONIC is off the first
 * host's by up to 5 s (its CLOCK_REALTIME anchor says by how much). Every rank
 * runs COLLS AllReduces of one world communicator (a Coll start and stop
 * each, sizes cycling 1 KiB .. 64 MiB): arrivals jitter by up to 20 us, rank
 * STRAGGLER [RANKS/3] arrives 300 us late, all ranks of a collective end
 * together. Single-threaded; memory: one process's records at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"
#include "xorshift.h"

#define T0 1000000000000ull
#define PERIOD_NS 2000000ull

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return xorshift64(&rng_state); }

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gen_ranks DIR RANKS COLLS [RANKS_PER_PROC [PROCS_PER_HOST [STRAGGLER]]]\n");
    return 2;
  }
  const char* dir = argv[1];
  int nranks = atoi(argv[2]), colls = atoi(argv[3]);
  int rpp = argc > 4 ? atoi(argv[4]) : 8, pph = argc > 5 ? atoi(argv[5]) : 8;
  int straggler = argc > 6 ? atoi(argv[6]) : nranks / 3;
  if (nranks < 2 || colls < 1 || rpp < 1 || pph < 1 || nranks % rpp) {
    fprintf(stderr, "gen_ranks: RANKS must be a multiple of RANKS_PER_PROC, all positive\n");
    return 2;
  }
  int nprocs = nranks / rpp, nhosts = (nprocs + pph - 1) / pph;
  static const uint32_t ids[] = {1, 2, 3, 4};
  static const char* const strs[] = {"AllReduce", "ncclFloat32", "RING", "SIMPLE"};
  size_t cap = (size_t)colls * 2;
  ns_record* recs = malloc(cap * sizeof *recs);
  int64_t* host_off = calloc((size_t)nhosts, sizeof *host_off);
  if (!recs || !host_off) return 1;
  /* each host's clock: off the first host's by 0..5 s */
  for (int h = 1; h < nhosts; h++) host_off[h] = (int64_t)(rnd() % 5000000000ull);
  for (int p = 0; p < nprocs; p++) {
    int host = p / pph;
    int64_t off = host_off[host];
    uint32_t pid = 10000 + (uint32_t)p;
    char name[64];
    snprintf(name, sizeof name, "host%04d", host);
    tb_file f;
    tb_begin(&f);
    /* tb_process anchors the start at monotonic 999000000: realtime - monotonic is the same for all but the offset */
    tb_process(&f, pid, name, 1700000000000000000ll - off);
    tb_strings(&f, 4, ids, strs);
    for (int r = 0; r < rpp; r++) {
      int rank = p * rpp + r;
      uint32_t tid = pid * 16 + (uint32_t)r;
      char tname[32];
      snprintf(tname, sizeof tname, "app%d", r);
      tb_thread(&f, tid, (uint32_t)r + 1, tname);
      tb_comm c = {.comm = (uint32_t)r + 1, .comm_id = 0x5CA1E00000000001ull, .rank = rank, .nranks = (uint32_t)nranks,
                   .nnodes = (uint32_t)nhosts, .name = "world", .abi = 6, .mask = 0x7FFF,
                   .uuid = "GPU-00000000-0000-0000-0000-000000000000", .ts = T0 + (uint64_t)off, .tid = tid};
      tb_comm_init(&f, &c);
    }
    for (int r = 0; r < rpp; r++) {
      int rank = p * rpp + r;
      uint32_t tid = pid * 16 + (uint32_t)r;
      size_t n = 0;
      for (int k = 0; k < colls; k++) {
        uint64_t base = T0 + 1000000ull + (uint64_t)k * PERIOD_NS;
        uint64_t arrive = base + rnd() % 20000 + (rank == straggler ? 300000u : 0u);
        uint64_t end = base + 300000u + 400000u; /* everyone waits for the straggler */
        uint64_t id = ((uint64_t)r << 40) | (uint64_t)(k + 1);
        ns_record s = tb_start(NS_EV_COLL, (uint32_t)r + 1, tid, arrive + (uint64_t)off, id, 0);
        size_t bytes = (size_t)1024 << (k % 17);
        uint64_t num[8] = {(uint64_t)k, bytes / 4, 0, 0x7f0000100000ull, 0x7f0000200000ull, 4, 16, 0};
        memcpy(s.num, num, sizeof num);
        for (int i = 0; i < 4; i++) s.str[i] = (uint32_t)(1 + i);
        recs[n++] = s;
        recs[n++] = tb_stop(NS_EV_COLL, (uint32_t)r + 1, tid, end + (uint64_t)off, id);
      }
      for (size_t at = 0; at < n; at += 4096) tb_events(&f, tid, (uint32_t)r + 1, recs + at, n - at < 4096 ? n - at : 4096);
    }
    tb_end(&f);
    char path[4096];
    snprintf(path, sizeof path, "%s/ncclscope-%s-%u.nstrace", dir, name, pid);
    if (tb_write(&f, path, (size_t)-1)) {
      fprintf(stderr, "gen_ranks: cannot write %s\n", path);
      tb_free(&f);
      return 1;
    }
    tb_free(&f);
  }
  free(recs);
  free(host_off);
  printf("gen_ranks: %d ranks (%d processes, %d hosts) x %d collectives in %s; straggler rank %d\n", nranks, nprocs,
         nhosts, colls, dir, straggler);
  return 0;
}
