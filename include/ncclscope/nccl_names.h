/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: NCCL's function and datatype names as the records carry them,
 * and the message size as nccl-tests counts it (src/schema/nccl_names.c).
 * Pure functions; a memo is its owner's (single-threaded). */
#ifndef NCCLSCOPE_NCCL_NAMES_H
#define NCCLSCOPE_NCCL_NAMES_H

#include <stdint.h>

enum {
  NS_FUNC_UNKNOWN = -1,
  NS_FUNC_BROADCAST = 0, /* codes are NCCL's ncclFunc_t */
  NS_FUNC_REDUCE = 1,
  NS_FUNC_ALLGATHER = 2,
  NS_FUNC_REDUCESCATTER = 3,
  NS_FUNC_ALLREDUCE = 4,
  NS_FUNC_SENDRECV = 5,
  NS_FUNC_SEND = 6,
  NS_FUNC_RECV = 7,
  NS_FUNC_ALLTOALL = 8,
  NS_FUNC_SCATTER = 9,
  NS_FUNC_GATHER = 10,
  NS_FUNC_ALLGATHERV = 11
};
/* "AllReduce", "AlltoAll"/"AllToAll", "ncclAllReduce", or a v1 decimal code "4". */
int ns_func_code(const char* name);
const char* ns_func_name(int code); /* "Unknown" for unknown codes */
/* "ncclFloat32", "ncclBfloat16", ..., or a v1 decimal code "7"; 0 if unknown. */
unsigned ns_dtype_size(const char* name);
const char* ns_dtype_short(const char* name); /* "float", "bfloat16", ... as nccl-tests prints */
/* The last name a lookup was asked for and its result. NCCL's operations
 * come in runs of one kind, so most lookups are one strcmp. Zeroed: empty.
 * One memo per lookup function; single-threaded (its owner's). */
typedef struct {
  char name[24]; /* "": none yet */
  int value;
} ns_name_memo;
/* ns_func_code(name) and ns_dtype_size(name) through a memo (a name that
 * does not fit it is looked up every time). */
int ns_func_code_memo(ns_name_memo* m, const char* name);
unsigned ns_dtype_size_memo(ns_name_memo* m, const char* name);
/* Message size as nccl-tests reports it (count is the descriptor's count). */
uint64_t ns_coll_bytes(int func, uint64_t count, unsigned typesize, uint32_t nranks);

#endif
