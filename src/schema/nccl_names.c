/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope schema: NCCL's names as the records carry them (functions,
 * datatypes) and the message size as nccl-tests counts it
 * (include/ncclscope/nccl_names.h).
 *
 * Pure functions, no state: any thread may call them (the memos are their
 * owner's).
 *
 * bytes: AllReduce, Broadcast, Reduce, Send, Recv: count * typesize.
 *        AllGather, ReduceScatter, AlltoAll, Gather, Scatter: the descriptor's
 *        count is per rank (per peer for AlltoAll), so count * typesize * nranks.
 */
#include "ncclscope/nccl_names.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* NCCL's ncclFunc_t numbering (v1 plugins receive these as small integers). */
static const char* const func_by_code[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                           "AllReduce", "SendRecv", "Send",      "Recv",
                                           "AlltoAll",  "Scatter",  "Gather",    "AllGatherV"};

static const struct {
  const char* name;
  int code;
} func_names[] = {
    {"Broadcast", NS_FUNC_BROADCAST},
    {"Reduce", NS_FUNC_REDUCE},
    {"AllGather", NS_FUNC_ALLGATHER},
    {"ReduceScatter", NS_FUNC_REDUCESCATTER},
    {"AllReduce", NS_FUNC_ALLREDUCE},
    {"SendRecv", NS_FUNC_SENDRECV},
    {"Send", NS_FUNC_SEND},
    {"Recv", NS_FUNC_RECV},
    {"AlltoAll", NS_FUNC_ALLTOALL},
    {"Scatter", NS_FUNC_SCATTER},
    {"Gather", NS_FUNC_GATHER},
    {"AllGatherV", NS_FUNC_ALLGATHERV},
};

/* ncclDataType_t numbering and sizes; names as ncclDatatypeToString prints them. */
static const struct {
  const char* name;
  unsigned size;
} dtypes[] = {
    {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},    {"ncclUint32", 4},
    {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2},  {"ncclFloat32", 4},
    {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
};

/* Accepts "12" style decimal codes (v1); -1 otherwise. */
static int parse_code(const char* s) {
  if (s == NULL || *s < '0' || *s > '9') return -1;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > 1000) return -1;
  return (int)v;
}

int ns_func_code(const char* name) {
  if (name == NULL) return NS_FUNC_UNKNOWN;
  int code = parse_code(name);
  if (code >= 0) return code < (int)(sizeof func_by_code / sizeof func_by_code[0]) ? code : NS_FUNC_UNKNOWN;
  if (strncmp(name, "nccl", 4) == 0) name += 4; /* "ncclAllReduce" too */
  for (size_t i = 0; i < sizeof func_names / sizeof func_names[0]; i++)
    if (strcasecmp(name, func_names[i].name) == 0) return func_names[i].code;
  if (strcasecmp(name, "AllToAll") == 0) return NS_FUNC_ALLTOALL;
  return NS_FUNC_UNKNOWN;
}

const char* ns_func_name(int code) {
  if (code < 0 || code >= (int)(sizeof func_by_code / sizeof func_by_code[0])) return "Unknown";
  return func_by_code[code];
}

unsigned ns_dtype_size(const char* name) {
  if (name == NULL) return 0;
  int code = parse_code(name);
  if (code >= 0) return code < (int)(sizeof dtypes / sizeof dtypes[0]) ? dtypes[code].size : 0;
  const char* n = strncmp(name, "nccl", 4) == 0 ? name + 4 : name;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcasecmp(n, dtypes[i].name + 4) == 0) return dtypes[i].size;
  /* aliases of the same types */
  static const struct {
    const char* name;
    unsigned size;
  } alias[] = {{"Char", 1}, {"Int", 4}, {"Half", 2}, {"Float", 4}, {"Double", 8}, {"Bf16", 2}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcasecmp(n, alias[i].name) == 0) return alias[i].size;
  return 0;
}

static int memo_lookup(ns_name_memo* m, const char* name, int (*lookup)(const char*)) {
  if (!name || strnlen(name, sizeof m->name) == sizeof m->name) return lookup(name);
  if (!m->name[0] || strcmp(name, m->name) != 0) {
    strcpy(m->name, name);
    m->value = lookup(name);
  }
  return m->value;
}

static int dtype_size_int(const char* name) { return (int)ns_dtype_size(name); }

int ns_func_code_memo(ns_name_memo* m, const char* name) { return memo_lookup(m, name, ns_func_code); }

unsigned ns_dtype_size_memo(ns_name_memo* m, const char* name) {
  return (unsigned)memo_lookup(m, name, dtype_size_int);
}

const char* ns_dtype_short(const char* name) {
  static const char* const shorts[] = {"int8",   "uint8",  "int32", "uint32", "int64",  "uint64",
                                       "half",   "float",  "double", "bfloat16", "f8e4m3", "f8e5m2"};
  if (name == NULL) return "-";
  int code = parse_code(name);
  if (code >= 0) return code < (int)(sizeof shorts / sizeof shorts[0]) ? shorts[code] : "-";
  const char* n = strncmp(name, "nccl", 4) == 0 ? name + 4 : name;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcasecmp(n, dtypes[i].name + 4) == 0) return shorts[i];
  return name;
}

uint64_t ns_coll_bytes(int func, uint64_t count, unsigned typesize, uint32_t nranks) {
  uint64_t b = count * (uint64_t)typesize;
  switch (func) {
    case NS_FUNC_ALLGATHER:
    case NS_FUNC_REDUCESCATTER:
    case NS_FUNC_ALLTOALL:
    case NS_FUNC_GATHER:
    case NS_FUNC_SCATTER:
      return b * (nranks ? nranks : 1);
    default:
      return b;
  }
}
