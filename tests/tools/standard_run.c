/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: the standard synthetic run (see tb_write_standard_run in
 * trace_builder.h). Times are ns on the trace clock; T is the run's origin. */
#include <stdio.h>
#include <string.h>

#include "trace_builder.h"

#define T 1000000000ull
#define APP(n) ((1ull << 40) | (n))
#define PRX(n) ((2ull << 40) | (n))
#define NET(n) ((3ull << 40) | (n))
#define PID(p) (4001u + (uint32_t)(p))

enum { TID_APP = 100, TID_PROXY = 200, TID_NET = 300 };

static void set_nums(ns_record* r, const uint64_t* nums, size_t n) {
  for (size_t i = 0; i < n; i++) r->num[i] = nums[i];
}

static size_t app_records(ns_record* r, int p) {
  size_t n = 0;
  const uint32_t c = 1, t = TID_APP;
  r[n] = tb_start(NS_EV_GROUP_API, c, t, T + 1000, APP(1), 0);
  set_nums(&r[n++], (uint64_t[]){1, 0}, 2);
  r[n++] = tb_state(NS_EV_GROUP_API, c, t, T + 1100, APP(1), 23, 0, 0);
  r[n] = tb_start(NS_EV_COLL_API, c, t, T + 1200, APP(2), APP(1));
  set_nums(&r[n], (uint64_t[]){1048576, (uint64_t)-1, 0x7f00aa00ull, 0}, 4);
  r[n].str[0] = 1;
  r[n++].str[1] = 2;
  r[n++] = tb_stop(NS_EV_COLL_API, c, t, T + 1500, APP(2));
  r[n] = tb_start(NS_EV_P2P_API, c, t, T + 1600, APP(3), APP(1));
  set_nums(&r[n], (uint64_t[]){1024, 0x7f00aa00ull, 1}, 3);
  r[n].str[0] = 5;
  r[n++].str[1] = 6;
  r[n++] = tb_stop(NS_EV_P2P_API, c, t, T + 1700, APP(3));
  r[n++] = tb_state(NS_EV_GROUP_API, c, t, T + 1800, APP(1), 24, 0, 0);
  r[n] = tb_start(NS_EV_KERNEL_LAUNCH, c, t, T + 1900, APP(4), APP(1));
  set_nums(&r[n++], (uint64_t[]){0x7f00aa00ull}, 1);
  r[n++] = tb_stop(NS_EV_KERNEL_LAUNCH, c, t, T + 2000, APP(4));
  r[n++] = tb_start(NS_EV_GROUP, c, t, T + 2100, APP(5), 0);
  r[n] = tb_start(NS_EV_COLL, c, t, T + 2200, APP(6), APP(2));
  set_nums(&r[n], (uint64_t[]){7, 1048576, 0, 0x7f0000100000ull, 0x7f0000200000ull, 2, 16, APP(5)}, 8);
  for (int i = 0; i < 4; i++) r[n].str[i] = (uint32_t)(1 + i);
  n++;
  r[n++] = tb_stop(NS_EV_COLL, c, t, T + 2300, APP(6));
  r[n] = tb_start(NS_EV_P2P, c, t, T + 2400, APP(7), APP(3));
  set_nums(&r[n], (uint64_t[]){(uint64_t)(1 - p), 1024, 0x7f0000300000ull, 1, APP(5)}, 5);
  r[n].str[0] = 5;
  r[n++].str[1] = 6;
  r[n++] = tb_stop(NS_EV_P2P, c, t, T + 2500, APP(7));
  r[n++] = tb_stop(NS_EV_GROUP, c, t, T + 2600, APP(5));
  r[n++] = tb_stop(NS_EV_GROUP_API, c, t, T + 2700, APP(1));
  r[n] = tb_start(NS_EV_CE_COLL, c, t, T + 2800, APP(8), APP(2));
  set_nums(&r[n], (uint64_t[]){3, 4096, 0, 0x7f00bb00ull, 0x7f0000400000ull, 0x7f0000500000ull, 1, 2, 4, 11}, 10);
  r[n].str[0] = 8;
  r[n].str[1] = 2;
  r[n++].str[2] = 9;
  r[n] = tb_start(NS_EV_CE_SYNC, c, t, T + 2850, APP(9), APP(8));
  set_nums(&r[n++], (uint64_t[]){1, 2}, 2);
  r[n++] = tb_stop(NS_EV_CE_SYNC, c, t, T + 2900, APP(9));
  r[n] = tb_start(NS_EV_CE_BATCH, c, t, T + 2910, APP(10), APP(8));
  set_nums(&r[n++], (uint64_t[]){4, 16384, 0}, 3);
  r[n++] = tb_stop(NS_EV_CE_BATCH, c, t, T + 2950, APP(10));
  r[n++] = tb_stop(NS_EV_CE_COLL, c, t, T + 3000, APP(8));
  /* A CollApi whose stop never comes (the process was killed). */
  r[n] = tb_start(NS_EV_COLL_API, c, t, T + 3100, APP(11), 0);
  set_nums(&r[n], (uint64_t[]){8, 0, 0x7f00aa00ull, 1}, 4);
  r[n].str[0] = 7;
  r[n++].str[1] = 0; /* NCCL passed NULL */
  return n;
}

static size_t proxy_records(ns_record* r, int p) {
  size_t n = 0;
  const uint32_t c = 1, t = TID_PROXY;
  r[n++] = tb_start(NS_EV_PROXY_CTRL, c, t, T + 900, PRX(1), 0);
  r[n++] = tb_state(NS_EV_PROXY_CTRL, c, t, T + 950, PRX(1), 13, 0, 0);
  r[n++] = tb_state(NS_EV_PROXY_CTRL, c, t, T + 2150, PRX(1), 17, 1, 2);
  r[n++] = tb_stop(NS_EV_PROXY_CTRL, c, t, T + 2200, PRX(1));
  r[n] = tb_start(NS_EV_PROXY_OP, c, t, T + 2250, PRX(2), APP(6));
  set_nums(&r[n++], (uint64_t[]){0, (uint64_t)(1 - p), 2, 524288, 1, PID(p)}, 6);
  r[n++] = tb_state(NS_EV_PROXY_OP, c, t, T + 2255, PRX(2), 19, 0, 0);
  r[n] = tb_start(NS_EV_KERNEL_CH, c, t, T + 2260, PRX(6), APP(6));
  set_nums(&r[n++], (uint64_t[]){0, 1700000000000002048ull}, 2);
  r[n] = tb_start(NS_EV_PROXY_STEP, c, t, T + 2270, PRX(3), PRX(2));
  set_nums(&r[n++], (uint64_t[]){0}, 1);
  r[n] = tb_start(NS_EV_KERNEL_CH, c, t, T + 2275, PRX(7), APP(6));
  set_nums(&r[n++], (uint64_t[]){1, 1700000000000004096ull}, 2);
  r[n++] = tb_state(NS_EV_PROXY_STEP, c, t, T + 2280, PRX(3), 8, 1, 524288);
  r[n++] = tb_state(NS_EV_PROXY_STEP, c, t, T + 2300, PRX(3), 9, 1, 524288);
  r[n] = tb_start(NS_EV_PROXY_STEP, c, t, T + 2350, PRX(5), PRX(2));
  set_nums(&r[n++], (uint64_t[]){1}, 1);
  r[n++] = tb_state(NS_EV_PROXY_STEP, c, t, T + 2360, PRX(5), 9, 1, 262144);
  r[n++] = tb_stop(NS_EV_PROXY_STEP, c, t, T + 2400, PRX(3));
  r[n] = tb_start(NS_EV_KERNEL_CH, c, t, T + 2450, PRX(8), APP(7));
  set_nums(&r[n++], (uint64_t[]){0, 1700000000000010240ull}, 2);
  r[n++] = tb_stop(NS_EV_PROXY_STEP, c, t, T + 2455, PRX(5));
  r[n++] = tb_stop(NS_EV_PROXY_OP, c, t, T + 2500, PRX(2));
  r[n++] = tb_state(NS_EV_KERNEL_CH, c, t, T + 2549, PRX(8), 22, 1, 1700000000000108544ull);
  r[n++] = tb_stop(NS_EV_KERNEL_CH, c, t, T + 2550, PRX(8));
  r[n++] = tb_state(NS_EV_KERNEL_CH, c, t, T + 2600, PRX(6), 22, 1, 1700000000000303104ull);
  r[n++] = tb_stop(NS_EV_KERNEL_CH, c, t, T + 2601, PRX(6));
  r[n++] = tb_state(NS_EV_KERNEL_CH, c, t, T + 2700, PRX(7), 22, 1, 1700000000000403456ull);
  r[n++] = tb_stop(NS_EV_KERNEL_CH, c, t, T + 2701, PRX(7));
  /* A ProxyOp this process runs for the other one (PXN): raw parent pointer. */
  r[n] = tb_start(NS_EV_PROXY_OP, 0, t, T + 3000, PRX(9), 0x7f1234560000ull);
  r[n].flags = NS_RF_PXN | NS_RF_PARENT_RAW;
  r[n].origin_pid = PID(1 - p);
  set_nums(&r[n++], (uint64_t[]){1, (uint64_t)p, 1, 524288, 0, PID(1 - p)}, 6);
  r[n] = tb_start(NS_EV_PROXY_STEP, 0, t, T + 3010, PRX(10), PRX(9));
  r[n].flags = NS_RF_PXN;
  r[n].origin_pid = PID(1 - p);
  set_nums(&r[n++], (uint64_t[]){0}, 1);
  r[n++] = tb_state(NS_EV_PROXY_STEP, 0, t, T + 3050, PRX(10), 10, 1, 4096);
  r[n++] = tb_stop(NS_EV_PROXY_STEP, 0, t, T + 3100, PRX(10));
  r[n++] = tb_stop(NS_EV_PROXY_OP, 0, t, T + 3200, PRX(9));
  return n;
}

static size_t net_records(ns_record* r) {
  size_t n = 0;
  const uint32_t c = 1, t = TID_NET;
  r[n] = tb_start(NS_EV_NET_PLUGIN, c, t, T + 2310, NET(1), PRX(3));
  set_nums(&r[n++], (uint64_t[]){1, 0x7f0000600000ull, 1, 0, 77, 2, 9, 524288}, 8);
  r[n++] = tb_state(NS_EV_NET_PLUGIN, c, t, T + 2320, NET(1), 21, 1, 0x7f0000600008ull);
  r[n++] = tb_stop(NS_EV_NET_PLUGIN, c, t, T + 2330, NET(1));
  r[n] = tb_start(NS_EV_NET_PLUGIN, c, t, T + 2365, NET(2), PRX(5));
  set_nums(&r[n++], (uint64_t[]){2, 0x7f0000700000ull, 2, 17, 1, 262144}, 6);
  r[n++] = tb_stop(NS_EV_NET_PLUGIN, c, t, T + 2370, NET(2));
  return n;
}

static int write_process(const char* dir, int p, size_t truncate) {
  static const uint32_t ids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  static const char* const strs[] = {"AllReduce", "ncclFloat32", "Ring", "Simple", "Send", "ncclInt8",
                                     "Odd\"\\\x01\n\xff\xc3(\xe2\x82\xac", "AllGather", "CE_SYNC"};
  tb_file f;
  tb_begin(&f);
  char host[32];
  snprintf(host, sizeof host, "node%d", p);
  tb_process(&f, PID(p), host, 1700000000000000000ll);
  tb_strings(&f, 9, ids, strs);
  tb_thread(&f, TID_APP, 1, "app");
  tb_thread(&f, TID_PROXY, 2, "proxy");
  tb_thread(&f, TID_NET, 3, "net");
  tb_comm c = {.comm = 1, .comm_id = 0xC0FFEE0001ull, .rank = p, .nranks = 2, .nnodes = 2,
               .name = p ? NULL : "world \"x\"", .abi = 5, .mask = 0x7FFF,
               .uuid = p ? "GPU-00000000-0000-0000-0000-000000000001" : "GPU-00000000-0000-0000-0000-000000000000",
               .ts = T + 500, .tid = TID_APP};
  tb_comm_init(&f, &c);
  ns_record recs[64];
  /* Proxy block first: children are read before their parents start. */
  tb_events(&f, TID_PROXY, 2, recs, proxy_records(recs, p));
  tb_events(&f, TID_APP, 1, recs, app_records(recs, p));
  tb_events(&f, TID_NET, 3, recs, net_records(recs));
  tb_unknown_block(&f, 42);
  tb_clockfit(&f, 1, 1699999999000000000.0, 1.5, 2048.0);
  tb_anchor(&f, T + 3000, -1234567);
  tb_comm_fini(&f, 1, T + 4000, TID_APP, 23, 0);
  tb_end(&f);
  char path[4096];
  snprintf(path, sizeof path, "%s/ncclscope-node%d-%u.nstrace", dir, p, PID(p));
  size_t len = f.buf.len > truncate ? f.buf.len - truncate : 0;
  int rc = tb_write(&f, path, len);
  tb_free(&f);
  return rc;
}

int tb_write_standard_run(const char* dir, int nproc, size_t truncate_last) {
  for (int p = 0; p < nproc; p++)
    if (write_process(dir, p, p == nproc - 1 ? truncate_last : 0)) return -1;
  return 0;
}
