/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope e2e input: synthetic traces of a large job for report.html
 * (check_html.py), written with the trace codec (tests/tools/trace_builder).
 * The simulator stops at 64 ranks; this writes 1,024 ranks in well under a
 * second.
 * usage: gen_html_job DIR RANKS [hostile]   (RANKS: a multiple of 16)
 * 8 ranks per process, 8 processes per host (each host's CLOCK_MONOTONIC up
 * to 4 s off the first one's, its CLOCK_REALTIME anchor says by how much);
 * every process ends cleanly (a COUNTERS block: nothing lost).
 * Communicators: "world" (every rank) and "dp0", "dp1" (the lower and the
 * upper half): three rows of AllReduce at every size. Per count (256 x 4^k
 * floats, up to 1 Mi) 6 calls of AllReduce, AllGather, ReduceScatter and
 * Broadcast on world and of AllReduce on dp0 and dp1, in that order on every
 * rank; arrivals jitter by up to 20 us, rank RANKS/3 arrives 300 us late to
 * world's collectives, all ranks of a call end together. Links: each
 * process's last rank sends to the next process's first (world's ring across
 * processes) on channels 0 and 1, one ProxyOp per world AllReduce of 16 KiB
 * or more, its steps of half the call's size (at most 1 MiB) taking 5 us +
 * size / bandwidth, one at a time: 12.5 GB/s, 6.25 GB/s from rank
 * 8*(RANKS/16)-1 (the slow link).
 * `hostile`: the first host's name and the communicators' names carry
 * "<!--<script>", "</script>", '&' and U+2028/U+2029, as a hostile or
 * careless environment could make them. Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"
#include "xorshift.h"

#define T0 1000000000000ull
#define RPP 8 /* ranks per process */
#define PPH 8 /* processes per host */
#define NSIZES 7
#define CALLS 6

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return xorshift64(&rng_state); }

enum { FN_ALLREDUCE, FN_ALLGATHER, FN_REDUCESCATTER, FN_BROADCAST, NFUNCS };

typedef struct {
  int comm;  /* 0: world, 1: this rank's dp communicator */
  int func;
  uint64_t bytes;
} call;

/* The calls of every rank, in order. */
static size_t plan(call* out) {
  size_t n = 0;
  for (int s = 0; s < NSIZES; s++) {
    uint64_t bytes = 1024ull << (2 * s);
    for (int k = 0; k < CALLS; k++) {
      for (int f = 0; f < NFUNCS; f++) out[n++] = (call){0, f, bytes};
      out[n++] = (call){1, FN_ALLREDUCE, bytes};
    }
  }
  return n;
}

/* A call's duration: latency plus its size at an algorithm bandwidth per function and communicator size. */
static uint64_t duration_ns(const call* c, int nranks) {
  static const double gbs[NFUNCS] = {6.0, 9.0, 9.0, 11.0};
  double lat_us = 20.0 + 2.0 * (c->comm == 0 ? 4 : 2);
  double bw = gbs[c->func] * (c->comm == 0 ? 1.0 : 1.3) * (nranks > 512 ? 0.9 : 1.0);
  /* the count is per rank for AllGather and ReduceScatter: the size is the count times the ranks */
  double bytes = (double)c->bytes * (c->func == FN_ALLGATHER || c->func == FN_REDUCESCATTER ? nranks : 1);
  return (uint64_t)(lat_us * 1e3 + bytes / bw);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: gen_html_job DIR RANKS [hostile]\n");
    return 2;
  }
  const char* dir = argv[1];
  int nranks = atoi(argv[2]);
  int hostile = argc > 3 && strcmp(argv[3], "hostile") == 0;
  if (nranks < 16 || nranks % 16) {
    fprintf(stderr, "gen_html_job: RANKS must be a positive multiple of 16\n");
    return 2;
  }
  int nprocs = nranks / RPP, nhosts = (nprocs + PPH - 1) / PPH;
  int straggler = nranks / 3, slow_sender = RPP * (nranks / 16) - 1;
  static const uint32_t ids[] = {1, 2, 3, 4, 5, 6, 7};
  static const char* const strs[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "ncclFloat32", "RING",
                                     "SIMPLE"};
  const char* comm_names[3] = {"world", "dp0", "dp1"};
  if (hostile) {
    comm_names[0] = "<!--<script>world</script>&amp;\xe2\x80\xa8";
    comm_names[1] = "dp0 <!--<script>x";
    comm_names[2] = "dp1 \xe2\x80\xa9</script><script>alert(1)</script>";
  }
  call* calls = malloc(NSIZES * CALLS * (NFUNCS + 1) * sizeof *calls);
  size_t ncalls = calls ? plan(calls) : 0;
  size_t cap = ncalls * 2 + (size_t)NSIZES * CALLS * 2 * (4 + 3 * 4) + 16;
  ns_record* recs = malloc(cap * sizeof *recs);
  int64_t* host_off = calloc((size_t)nhosts, sizeof *host_off);
  if (!calls || !recs || !host_off) return 1;
  for (int h = 1; h < nhosts; h++) host_off[h] = (int64_t)(rnd() % 4000000000ull);
  /* one start time per call, shared by every rank (then each rank's jitter) */
  uint64_t* call_t = malloc(ncalls * sizeof *call_t);
  if (!call_t) return 1;
  uint64_t t = T0 + 1000000ull;
  for (size_t i = 0; i < ncalls; i++) {
    call_t[i] = t;
    t += duration_ns(&calls[i], nranks) + 400000ull; /* room for the straggler and the jitter */
  }
  for (int p = 0; p < nprocs; p++) {
    int host = p / PPH;
    int64_t off = host_off[host];
    uint32_t pid = 20000 + (uint32_t)p;
    char name[64];
    if (hostile && host == 0)
      snprintf(name, sizeof name, "<!--<script>x\xe2\x80\xa8-%04d", host);
    else
      snprintf(name, sizeof name, "node%04d", host);
    tb_file f;
    uint64_t events = 0; /* START records written, for the COUNTERS block */
    tb_begin(&f);
    tb_process(&f, pid, name, 1700000000000000000ll - off);
    tb_strings(&f, sizeof ids / sizeof ids[0], ids, strs);
    for (int r = 0; r < RPP; r++) {
      int rank = p * RPP + r, half = rank >= nranks / 2;
      uint32_t app = pid * 32 + (uint32_t)r, proxy = app + 16;
      char tname[32];
      snprintf(tname, sizeof tname, "app%d", r);
      tb_thread(&f, app, (uint32_t)(2 * r + 1), tname);
      snprintf(tname, sizeof tname, "proxy%d", r);
      tb_thread(&f, proxy, (uint32_t)(2 * r + 2), tname);
      /* per rank: comm serial 2r+1 is world, 2r+2 its half */
      tb_comm world = {.comm = (uint32_t)(2 * r + 1), .comm_id = 0x3A11D00000000001ull, .rank = rank,
                       .nranks = (uint32_t)nranks, .nnodes = (uint32_t)nhosts, .name = comm_names[0], .abi = 6,
                       .mask = 0x7FFF, .uuid = "GPU-00000000-0000-0000-0000-000000000000",
                       .ts = T0 + (uint64_t)off, .tid = app};
      tb_comm_init(&f, &world);
      tb_comm dp = world;
      dp.comm = (uint32_t)(2 * r + 2);
      dp.comm_id = half ? 0x3A11D000000000D1ull : 0x3A11D000000000D0ull;
      dp.rank = rank - (half ? nranks / 2 : 0);
      dp.nranks = (uint32_t)nranks / 2;
      dp.name = comm_names[1 + half];
      tb_comm_init(&f, &dp);
    }
    for (int r = 0; r < RPP; r++) {
      int rank = p * RPP + r;
      uint32_t app = pid * 32 + (uint32_t)r, proxy = app + 16;
      uint32_t cw = (uint32_t)(2 * r + 1), cd = (uint32_t)(2 * r + 2);
      uint64_t seq[2] = {0, 0};
      size_t n = 0;
      for (size_t i = 0; i < ncalls; i++) {
        const call* c = &calls[i];
        int late = c->comm == 0 && rank == straggler;
        uint64_t arrive = call_t[i] + rnd() % 20000 + (late ? 300000u : 0u);
        uint64_t end = call_t[i] + 300000u + 20000u + duration_ns(c, nranks);
        uint64_t id = ((uint64_t)1 << 40) | ((uint64_t)r << 32) | (uint64_t)(i + 1);
        uint32_t comm = c->comm == 0 ? cw : cd;
        ns_record s = tb_start(NS_EV_COLL, comm, app, arrive + (uint64_t)off, id, 0);
        uint64_t num[8] = {seq[c->comm]++, c->bytes / 4, 0, 0x7f0000100000ull, 0x7f0000200000ull, 2, 16, 0};
        memcpy(s.num, num, sizeof num);
        s.str[0] = (uint32_t)(1 + c->func);
        s.str[1] = 5;
        s.str[2] = 6;
        s.str[3] = 7;
        recs[n++] = s;
        recs[n++] = tb_stop(NS_EV_COLL, comm, app, end + (uint64_t)off, id);
      }
      tb_events(&f, app, (uint32_t)(2 * r + 1), recs, n);
      events += n / 2;
      if (r != RPP - 1) continue;
      /* the proxy of the process's last rank: sends to the next process's first rank */
      double gbs = rank == slow_sender ? 6.25 : 12.5;
      int peer = (rank + 1) % nranks;
      n = 0;
      uint64_t step_id = 0;
      for (size_t i = 0; i < ncalls; i++) {
        const call* c = &calls[i];
        if (c->comm != 0 || c->func != FN_ALLREDUCE || c->bytes < 16384) continue;
        uint64_t size = c->bytes / 2 > 1048576 ? 1048576 : c->bytes / 2;
        int steps = (int)(c->bytes / 2 / size);
        uint64_t ts = call_t[i] + 350000u + (uint64_t)off;
        for (int ch = 0; ch < 2; ch++) {
          uint64_t op = ((uint64_t)2 << 40) | (uint64_t)(2 * i + (size_t)ch + 1);
          ns_record o = tb_start(NS_EV_PROXY_OP, cw, proxy, ts, op, 0);
          uint64_t num[6] = {(uint64_t)ch, (uint64_t)peer, (uint64_t)steps, size, 1, pid};
          memcpy(o.num, num, sizeof num);
          recs[n++] = o;
          for (int k = 0; k < steps; k++) {
            uint64_t sid = ((uint64_t)3 << 40) | ++step_id;
            ns_record st = tb_start(NS_EV_PROXY_STEP, cw, proxy, ts + 100, sid, op);
            st.num[0] = (uint64_t)k;
            recs[n++] = st;
            recs[n++] = tb_state(NS_EV_PROXY_STEP, cw, proxy, ts + 200, sid, NS_ST_PROXY_STEP_SEND_WAIT, 1, size);
            ts += 200 + (uint64_t)(5000.0 + (double)size / gbs) + rnd() % 50;
            recs[n++] = tb_stop(NS_EV_PROXY_STEP, cw, proxy, ts, sid);
            ts += 100;
          }
          recs[n++] = tb_stop(NS_EV_PROXY_OP, cw, proxy, ts + 100, op);
          ts += 1000;
        }
      }
      tb_events(&f, proxy, (uint32_t)(2 * r + 2), recs, n);
      for (size_t i = 0; i < n; i++) events += recs[i].kind == NS_REC_START;
    }
    /* the process ended cleanly and lost nothing, as the plugin writes it at its last finalize */
    static const uint32_t keys[] = {NS_P_EVENTS, NS_P_DROPPED, NS_P_WRITE_ERRORS};
    uint64_t vals[] = {events, 0, 0};
    tb_props_block(&f, NS_BLOCK_COUNTERS, sizeof keys / sizeof keys[0], keys, vals);
    tb_end(&f);
    char path[4096];
    snprintf(path, sizeof path, "%s/ncclscope-node%04d-%u.nstrace", dir, host, pid);
    if (tb_write(&f, path, (size_t)-1)) {
      fprintf(stderr, "gen_html_job: cannot write %s\n", path);
      tb_free(&f);
      return 1;
    }
    tb_free(&f);
  }
  free(call_t);
  free(recs);
  free(calls);
  free(host_off);
  printf("gen_html_job: %d ranks (%d processes, %d hosts), %zu collectives per rank in %s; straggler rank %d, "
         "slow link from rank %d\n",
         nranks, nprocs, nhosts, ncalls, dir, straggler, slow_sender);
  return 0;
}
