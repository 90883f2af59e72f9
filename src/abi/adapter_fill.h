/* ncclscope: one fill function per descriptor shape, shared by every ABI
 * version that has that shape (adapter_v*.c pass their own fields).
 *
 * Invariant (hot path, no memset): ns_fill_head plus exactly one ns_fill_*
 * sets every field ns_capture_start reads for the type: num[0 ..
 * layout.nums) and str[0 .. layout.strs) of record.h, and the header.
 * Fields a version lacks are passed as 0/NULL by its adapter. A type bit
 * the version has no fill for goes through ns_fill_none. */
#ifndef NCCLSCOPE_ABI_ADAPTER_FILL_H
#define NCCLSCOPE_ABI_ADAPTER_FILL_H

#include <stdint.h>
#include <string.h>

#include "capture/capture.h"

static inline uint64_t ns_u(const void* p) { return (uint64_t)(uintptr_t)p; }
static inline uint64_t ns_i(int64_t v) { return (uint64_t)v; } /* sign-extended */

static inline void ns_fill_head(ns_start_args* a, uint64_t type_bit, void* parent) {
  a->type = ns_type_from_bit(type_bit);
  a->pid = 0;
  a->parent = parent;
  a->group = NULL;
  a->group_num = 0;
  a->expect = 0;
}

/* Group, ProxyCtrl (no fields), and any bit this version does not describe. */
static inline void ns_fill_none(ns_start_args* a) {
  memset(a->num, 0, sizeof a->num);
  memset(a->str, 0, sizeof a->str);
}

/* expect: KernelCh children to wait for (v4+: nChannels; 0 before v4). */
static inline void ns_fill_coll(ns_start_args* a, uint64_t seq, uint64_t count, int root, const void* send,
                                const void* recv, unsigned nch, unsigned nwarps, void* group, const char* func,
                                const char* dtype, const char* algo, const char* proto, unsigned expect) {
  a->num[0] = seq;
  a->num[1] = count;
  a->num[2] = ns_i(root);
  a->num[3] = ns_u(send);
  a->num[4] = ns_u(recv);
  a->num[5] = nch;
  a->num[6] = nwarps;
  a->num[7] = 0; /* the group's id when group != NULL (resolved by capture) */
  a->group = group;
  a->group_num = 7;
  a->str[0] = func;
  a->str[1] = dtype;
  a->str[2] = algo;
  a->str[3] = proto;
  a->expect = expect;
}

static inline void ns_fill_p2p(ns_start_args* a, int peer, uint64_t count, const void* buff, unsigned nch,
                               void* group, const char* func, const char* dtype, unsigned expect) {
  a->num[0] = ns_i(peer);
  a->num[1] = count;
  a->num[2] = ns_u(buff);
  a->num[3] = nch;
  a->num[4] = 0;
  a->group = group;
  a->group_num = 4;
  a->str[0] = func;
  a->str[1] = dtype;
  a->expect = expect;
}

static inline void ns_fill_proxy_op(ns_start_args* a, int32_t pid, unsigned channel, int peer, int nsteps,
                                    int chunk, int is_send) {
  a->pid = pid;
  a->num[0] = channel;
  a->num[1] = ns_i(peer);
  a->num[2] = ns_i(nsteps);
  a->num[3] = ns_i(chunk);
  a->num[4] = ns_i(is_send);
  a->num[5] = ns_i(pid);
}

static inline void ns_fill_proxy_step(ns_start_args* a, int step) { a->num[0] = ns_i(step); }

/* pTimer: v4+ (0 before). */
static inline void ns_fill_kernel_ch(ns_start_args* a, unsigned channel, uint64_t ptimer) {
  a->num[0] = channel;
  a->num[1] = ptimer;
}

/* NetPlugin: id and data, plus the decoded IB/socket descriptor when the
 * id's type and version bits name one we know and data is not NULL
 * (adapter_common.c; reads only what those bits promise). */
void ns_fill_net_plugin(ns_start_args* a, int64_t id, void* data);

/* ---- v5+ API events ---- */

static inline void ns_fill_group_api(ns_start_args* a, int depth, int graph_captured) {
  a->num[0] = ns_i(depth);
  a->num[1] = graph_captured != 0;
}

static inline void ns_fill_coll_api(ns_start_args* a, uint64_t count, int root, const void* stream,
                                    int graph_captured, const char* func, const char* dtype) {
  a->num[0] = count;
  a->num[1] = ns_i(root);
  a->num[2] = ns_u(stream);
  a->num[3] = graph_captured != 0;
  a->str[0] = func;
  a->str[1] = dtype;
}

static inline void ns_fill_p2p_api(ns_start_args* a, uint64_t count, const void* stream, int graph_captured,
                                   const char* func, const char* dtype) {
  a->num[0] = count;
  a->num[1] = ns_u(stream);
  a->num[2] = graph_captured != 0;
  a->str[0] = func;
  a->str[1] = dtype;
}

static inline void ns_fill_kernel_launch(ns_start_args* a, const void* stream) { a->num[0] = ns_u(stream); }

/* ---- v6 copy-engine events ---- */

static inline void ns_fill_ce_coll(ns_start_args* a, uint64_t seq, uint64_t count, int root, const void* stream,
                                   const void* send, const void* recv, int intra_batch_sync, uint32_t batch_size,
                                   uint32_t num_batches, uint32_t ce_seq, const char* func, const char* dtype,
                                   const char* sync_strategy) {
  a->num[0] = seq;
  a->num[1] = count;
  a->num[2] = ns_i(root);
  a->num[3] = ns_u(stream);
  a->num[4] = ns_u(send);
  a->num[5] = ns_u(recv);
  a->num[6] = intra_batch_sync != 0;
  a->num[7] = batch_size;
  a->num[8] = num_batches;
  a->num[9] = ce_seq;
  a->str[0] = func;
  a->str[1] = dtype;
  a->str[2] = sync_strategy;
}

static inline void ns_fill_ce_sync(ns_start_args* a, int is_complete, int nranks) {
  a->num[0] = is_complete != 0;
  a->num[1] = ns_i(nranks);
}

static inline void ns_fill_ce_batch(ns_start_args* a, int num_ops, uint64_t total_bytes, int use_intra_sync) {
  a->num[0] = ns_i(num_ops);
  a->num[1] = total_bytes;
  a->num[2] = use_intra_sync != 0;
}

#endif
