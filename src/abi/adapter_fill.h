/* SPDX-License-Identifier: Apache-2.0 */
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

static inline void ns_fill_head(ns_start_args* a, uint64_t type_bit, void* parent) {
  a->type = ns_type_from_bit(type_bit);
  a->pid = 0;
  a->parent = parent;
  a->group = NULL;
  a->group_num = 0;
}

/* Group, ProxyCtrl (no fields), and any bit this version does not describe. */
static inline void ns_fill_none(ns_start_args* a) {
  memset(a->num, 0, sizeof a->num);
  memset(a->str, 0, sizeof a->str);
}

/* The setters (ns_set_<TYPE>_<FIELD>, record.h) widen each value as
 * include/ncclscope/schema.h says; N and S name the arrays they fill. */
#define N a->num
#define S a->str

static inline void ns_fill_coll(ns_start_args* a, uint64_t seq, uint64_t count, int root, const void* send,
                                const void* recv, unsigned nch, unsigned nwarps, void* group, const char* func,
                                const char* dtype, const char* algo, const char* proto) {
  ns_set_COLL_SEQ(N, S, seq);
  ns_set_COLL_COUNT(N, S, count);
  ns_set_COLL_ROOT(N, S, root);
  ns_set_COLL_SEND_BUFF(N, S, send);
  ns_set_COLL_RECV_BUFF(N, S, recv);
  ns_set_COLL_CHANNELS(N, S, nch);
  ns_set_COLL_WARPS(N, S, nwarps);
  ns_set_COLL_PARENT_GROUP(N, S, 0); /* the group's id when group != NULL (resolved by capture) */
  a->group = group;
  a->group_num = NS_COLL_PARENT_GROUP;
  ns_set_COLL_FUNC(N, S, func);
  ns_set_COLL_DTYPE(N, S, dtype);
  ns_set_COLL_ALGO(N, S, algo);
  ns_set_COLL_PROTO(N, S, proto);
}

/* v7's Coll fields (before v7: NULL, 0, 0). */
static inline void ns_fill_coll_v7(ns_start_args* a, const char* kernel_variant, int is_sym, uint64_t user_tag) {
  ns_set_COLL_KERNEL_VARIANT(N, S, kernel_variant);
  ns_set_COLL_IS_SYM(N, S, is_sym);
  ns_set_COLL_USER_TAG(N, S, user_tag);
}

static inline void ns_fill_p2p(ns_start_args* a, int peer, uint64_t count, const void* buff, unsigned nch,
                               void* group, const char* func, const char* dtype) {
  ns_set_P2P_PEER(N, S, peer);
  ns_set_P2P_COUNT(N, S, count);
  ns_set_P2P_BUFF(N, S, buff);
  ns_set_P2P_CHANNELS(N, S, nch);
  ns_set_P2P_PARENT_GROUP(N, S, 0);
  a->group = group;
  a->group_num = NS_P2P_PARENT_GROUP;
  ns_set_P2P_FUNC(N, S, func);
  ns_set_P2P_DTYPE(N, S, dtype);
}

static inline void ns_fill_proxy_op(ns_start_args* a, int32_t pid, unsigned channel, int peer, int nsteps,
                                    int chunk, int is_send) {
  a->pid = pid;
  ns_set_PROXY_OP_CHANNEL(N, S, channel);
  ns_set_PROXY_OP_PEER(N, S, peer);
  ns_set_PROXY_OP_STEPS(N, S, nsteps);
  ns_set_PROXY_OP_CHUNK_SIZE(N, S, chunk);
  ns_set_PROXY_OP_IS_SEND(N, S, is_send);
  ns_set_PROXY_OP_PID(N, S, pid);
}

static inline void ns_fill_proxy_step(ns_start_args* a, int step) { ns_set_PROXY_STEP_STEP(N, S, step); }

/* pTimer: v4+ (0 before). */
static inline void ns_fill_kernel_ch(ns_start_args* a, unsigned channel, uint64_t ptimer) {
  ns_set_KERNEL_CH_CHANNEL(N, S, channel);
  ns_set_KERNEL_CH_PTIMER(N, S, ptimer);
}

/* NetPlugin: id and data, plus the decoded IB/socket descriptor when the
 * id's type and version bits name one we know and data is not NULL
 * (adapter_common.c; reads only what those bits promise). */
void ns_fill_net_plugin(ns_start_args* a, int64_t id, void* data);

/* ---- v5+ API events ---- */

static inline void ns_fill_group_api(ns_start_args* a, int depth, int graph_captured) {
  ns_set_GROUP_API_DEPTH(N, S, depth);
  ns_set_GROUP_API_GRAPH_CAPTURED(N, S, graph_captured);
}

static inline void ns_fill_coll_api(ns_start_args* a, uint64_t count, int root, const void* stream,
                                    int graph_captured, const char* func, const char* dtype) {
  ns_set_COLL_API_COUNT(N, S, count);
  ns_set_COLL_API_ROOT(N, S, root);
  ns_set_COLL_API_STREAM(N, S, stream);
  ns_set_COLL_API_GRAPH_CAPTURED(N, S, graph_captured);
  ns_set_COLL_API_FUNC(N, S, func);
  ns_set_COLL_API_DTYPE(N, S, dtype);
}

static inline void ns_fill_p2p_api(ns_start_args* a, uint64_t count, const void* stream, int graph_captured,
                                   const char* func, const char* dtype) {
  ns_set_P2P_API_COUNT(N, S, count);
  ns_set_P2P_API_STREAM(N, S, stream);
  ns_set_P2P_API_GRAPH_CAPTURED(N, S, graph_captured);
  ns_set_P2P_API_FUNC(N, S, func);
  ns_set_P2P_API_DTYPE(N, S, dtype);
}

static inline void ns_fill_kernel_launch(ns_start_args* a, const void* stream) {
  ns_set_KERNEL_LAUNCH_STREAM(N, S, stream);
}

/* ---- v6 copy-engine events ---- */

static inline void ns_fill_ce_coll(ns_start_args* a, uint64_t seq, uint64_t count, int root, const void* stream,
                                   const void* send, const void* recv, int intra_batch_sync, uint32_t batch_size,
                                   uint32_t num_batches, uint32_t ce_seq, const char* func, const char* dtype,
                                   const char* sync_strategy) {
  ns_set_CE_COLL_SEQ(N, S, seq);
  ns_set_CE_COLL_COUNT(N, S, count);
  ns_set_CE_COLL_ROOT(N, S, root);
  ns_set_CE_COLL_STREAM(N, S, stream);
  ns_set_CE_COLL_SEND_BUFF(N, S, send);
  ns_set_CE_COLL_RECV_BUFF(N, S, recv);
  ns_set_CE_COLL_INTRA_BATCH_SYNC(N, S, intra_batch_sync);
  ns_set_CE_COLL_BATCH_SIZE(N, S, batch_size);
  ns_set_CE_COLL_NUM_BATCHES(N, S, num_batches);
  ns_set_CE_COLL_CE_SEQ_NUM(N, S, ce_seq);
  ns_set_CE_COLL_FUNC(N, S, func);
  ns_set_CE_COLL_DTYPE(N, S, dtype);
  ns_set_CE_COLL_SYNC_STRATEGY(N, S, sync_strategy);
}

static inline void ns_fill_ce_sync(ns_start_args* a, int is_complete, int nranks) {
  ns_set_CE_SYNC_IS_COMPLETE(N, S, is_complete);
  ns_set_CE_SYNC_NRANKS(N, S, nranks);
}

static inline void ns_fill_ce_batch(ns_start_args* a, int num_ops, uint64_t total_bytes, int use_intra_sync) {
  ns_set_CE_BATCH_NUM_OPS(N, S, num_ops);
  ns_set_CE_BATCH_TOTAL_BYTES(N, S, total_bytes);
  ns_set_CE_BATCH_USE_INTRA_SYNC(N, S, use_intra_sync);
}

/* ---- v7 ---- */

static inline void ns_fill_kernel_phase(ns_start_args* a, unsigned channel, unsigned phase, const char* name,
                                        uint64_t ptimer) {
  ns_set_KERNEL_PHASE_CHANNEL(N, S, channel);
  ns_set_KERNEL_PHASE_PHASE(N, S, phase);
  ns_set_KERNEL_PHASE_NAME(N, S, name);
  ns_set_KERNEL_PHASE_PTIMER(N, S, ptimer);
}

#undef N
#undef S

#endif
