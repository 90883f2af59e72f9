/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the version-independent profiler callbacks.
 *
 * The ABI adapters (src/abi/adapter_v*.c) turn NCCL's descriptors into an
 * ns_start_args and call these. They run on NCCL's threads: no lock, no
 * allocation, no syscall, no stdio, never block; failures drop and count.
 */
#ifndef NCCLSCOPE_CAPTURE_H
#define NCCLSCOPE_CAPTURE_H

#include <stdint.h>

#include "capture/hot.h"
#include "ncclscope/record.h"

typedef struct {
  uint32_t type;       /* ns_event_type; NS_EV_COUNT for an unknown type bit */
  int32_t pid;         /* PROXY_OP: NCCL's proxyOp.pid (PXN when not ours) */
  void* parent;        /* NCCL's parentObj */
  void* group;         /* COLL/P2P: parentGroup handle (v5+), resolved to an id into num[group_num] */
  uint32_t group_num;
  uint64_t num[NS_REC_NUMS]; /* record.h layout of the type */
  const char* str[NS_REC_STRS];
} ns_start_args;

NS_HOT void* ns_capture_start(void* context, const ns_start_args* a);
NS_HOT void ns_capture_stop(void* handle);
/* has_arg: NCCL passed state args; arg: the value that state carries. */
NS_HOT void ns_capture_state(void* handle, int state, int has_arg, uint64_t arg);

/* NCCL type bit -> ns_event_type (NS_EV_COUNT if not exactly one known bit). */
static inline uint32_t ns_type_from_bit(uint64_t bit) {
  if (bit == 0 || (bit & (bit - 1)) || bit >= (1ull << NS_EV_COUNT)) return NS_EV_COUNT;
  return (uint32_t)__builtin_ctzll(bit);
}

#endif
