/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the record schema, declared once.
 *
 * Every event type, every field of its START record and every state id is
 * named here, in tables that the rest of the project expands (X-macros):
 * the ns_event_type and field-index enums (record.h), the per-type layouts
 * the hot path and the trace codec use (how many num[]/str[] words a START
 * carries), the typed setters the ABI adapters fill records with, the
 * decoder's layouts, and the field descriptors from which the JSONL and
 * Perfetto exporters write `details` (src/schema/schema.c). Adding a field
 * is one line in its type's list below plus the code that uses it.
 *
 * Storage. A START record carries up to NS_REC_NUMS 64-bit words (num[])
 * and NS_REC_STRS string ids (str[]). A field names its slot and index
 * explicitly: the trace format stores num[0..nums) and str[0..strs) in
 * index order, so a field's index is part of the file format and never
 * changes; the order of the lines is the order of the JSON keys.
 *
 * Columns of a field line, X(TYPE, FIELD, slot, index, ctype, json, "name", when):
 *   TYPE, FIELD  names: the index enum is NS_<TYPE>_<FIELD> (record.h)
 *   slot         num (a 64-bit word, zigzag varint on disk) or str (a string id)
 *   index        position in num[] or str[]
 *   ctype        the value NCCL passes, and how it widens to the word:
 *                u64 (zero-extended), i64 (sign-extended), ptr (address),
 *                flag (0 or 1), id (an event id this trace assigned), str
 *   json         how exporters write it: U64, I64, HEX ("0x.." string), BOOL,
 *                STR (the interned string), FUNC (a STR that is also the
 *                record's top-level `func`), ADDR (an event id as eventAddr),
 *                NETKIND (0 none, 1 "ib", 2 "socket": selects `when`)
 *   "name"       the key in `details` (docs/jsonl-contract.md)
 *   when         0: always; k: only when the type's NETKIND field equals k;
 *                NS_WHEN_NZ: only when not 0 (a string: not NULL)
 *
 * Trace format 1.3 added fields (NCCL's profiler v7). Each type's fields
 * that 1.2 did not have are also listed in NS_FIELDS13_<TYPE>; their indices
 * follow the 1.2 ones, so a 1.2 EVENTS block carries the fields that are not
 * listed there (docs/trace-format.md).
 */
#ifndef NCCLSCOPE_SCHEMA_H
#define NCCLSCOPE_SCHEMA_H

/* X(TYPE, NCCL type bit, contract name, short name, state argument key, its json kind).
 * The bit is NCCL's ncclProfile* bit position; the state argument is what
 * recordEventState's args carry for that type (written as `name` in state
 * records and Perfetto state args). */
#define NS_SCHEMA_TYPES(X)                                                       \
  X(GROUP, 0, "ncclProfileGroup", "Group", "arg", U64)                           \
  X(COLL, 1, "ncclProfileColl", "Coll", "arg", U64)                              \
  X(P2P, 2, "ncclProfileP2p", "P2p", "arg", U64)                                 \
  X(PROXY_OP, 3, "ncclProfileProxyOp", "ProxyOp", "arg", U64)                    \
  X(PROXY_STEP, 4, "ncclProfileProxyStep", "ProxyStep", "transSize", U64)        \
  X(PROXY_CTRL, 5, "ncclProfileProxyCtrl", "ProxyCtrl", "appendedProxyOps", U64) \
  X(KERNEL_CH, 6, "ncclProfileKernelCh", "KernelCh", "pTimer", U64)              \
  X(NET_PLUGIN, 7, "ncclProfileNetPlugin", "NetPlugin", "data", HEX)             \
  X(GROUP_API, 8, "ncclProfileGroupApi", "GroupApi", "arg", U64)                 \
  X(COLL_API, 9, "ncclProfileCollApi", "CollApi", "arg", U64)                    \
  X(P2P_API, 10, "ncclProfileP2pApi", "P2pApi", "arg", U64)                      \
  X(KERNEL_LAUNCH, 11, "ncclProfileKernelLaunch", "KernelLaunch", "arg", U64)    \
  X(CE_COLL, 12, "ncclProfileCeColl", "CeColl", "arg", U64)                      \
  X(CE_SYNC, 13, "ncclProfileCeSync", "CeSync", "arg", U64)                      \
  X(CE_BATCH, 14, "ncclProfileCeBatch", "CeBatch", "arg", U64)                   \
  X(KERNEL_PHASE, 15, "ncclProfileKernelPhase", "KernelPhase", "pTimer", U64)

/* `when` of a field written only when it is set (a user tag of 0 is no tag). */
#define NS_WHEN_NZ 255

/* ---- fields, per type (see the columns above) ---- */
#define NS_FIELDS_GROUP(X)
#define NS_FIELDS_PROXY_CTRL(X)

#define NS_FIELDS_COLL(X)                                   \
  X(COLL, FUNC, str, 0, str, FUNC, "func", 0)               \
  X(COLL, SEQ, num, 0, u64, U64, "seq", 0)                  \
  X(COLL, ALGO, str, 2, str, STR, "algo", 0)                \
  X(COLL, PROTO, str, 3, str, STR, "proto", 0)              \
  X(COLL, CHANNELS, num, 5, u64, U64, "channels", 0)        \
  X(COLL, WARPS, num, 6, u64, U64, "warps", 0)              \
  X(COLL, COUNT, num, 1, u64, U64, "count", 0)              \
  X(COLL, ROOT, num, 2, i64, I64, "root", 0)                \
  X(COLL, DTYPE, str, 1, str, STR, "dtype", 0)              \
  X(COLL, SEND_BUFF, num, 3, ptr, HEX, "sendBuff", 0)       \
  X(COLL, RECV_BUFF, num, 4, ptr, HEX, "recvBuff", 0)       \
  X(COLL, PARENT_GROUP, num, 7, id, ADDR, "parentGroup", 0) \
  NS_FIELDS13_COLL(X)
#define NS_FIELDS13_COLL(X)                                              \
  X(COLL, KERNEL_VARIANT, str, 4, str, STR, "kernelVariant", NS_WHEN_NZ) \
  X(COLL, IS_SYM, num, 8, flag, BOOL, "isSymColl", NS_WHEN_NZ)           \
  X(COLL, USER_TAG, num, 9, u64, U64, "userTag", NS_WHEN_NZ)

#define NS_FIELDS_P2P(X)                                   \
  X(P2P, FUNC, str, 0, str, FUNC, "func", 0)               \
  X(P2P, PEER, num, 0, i64, I64, "peer", 0)                \
  X(P2P, CHANNELS, num, 3, u64, U64, "channels", 0)        \
  X(P2P, COUNT, num, 1, u64, U64, "count", 0)              \
  X(P2P, DTYPE, str, 1, str, STR, "dtype", 0)              \
  X(P2P, BUFF, num, 2, ptr, HEX, "buff", 0)                \
  X(P2P, PARENT_GROUP, num, 4, id, ADDR, "parentGroup", 0) \
  NS_FIELDS13_P2P(X)
#define NS_FIELDS13_P2P(X) X(P2P, USER_TAG, num, 5, u64, U64, "userTag", NS_WHEN_NZ)

#define NS_FIELDS_PROXY_OP(X)                                \
  X(PROXY_OP, CHANNEL, num, 0, u64, I64, "channel", 0)       \
  X(PROXY_OP, PEER, num, 1, i64, I64, "peer", 0)             \
  X(PROXY_OP, STEPS, num, 2, i64, U64, "steps", 0)           \
  X(PROXY_OP, CHUNK_SIZE, num, 3, i64, U64, "chunkSize", 0)  \
  X(PROXY_OP, IS_SEND, num, 4, i64, I64, "isSend", 0)        \
  X(PROXY_OP, PID, num, 5, i64, U64, "eventPid", 0)

#define NS_FIELDS_PROXY_STEP(X) X(PROXY_STEP, STEP, num, 0, i64, U64, "step", 0)

#define NS_FIELDS_KERNEL_CH(X)                            \
  X(KERNEL_CH, CHANNEL, num, 0, u64, I64, "channel", 0)   \
  X(KERNEL_CH, PTIMER, num, 1, u64, U64, "pTimer", 0)

/* The descriptor behind `data` is decoded when the id's type and version
 * bits name one ncclscope knows (src/abi/adapter_common.c). */
#define NS_FIELDS_NET_PLUGIN(X)                               \
  X(NET_PLUGIN, ID, num, 0, i64, U64, "id", 0)                \
  X(NET_PLUGIN, DATA, num, 1, ptr, HEX, "data", 0)            \
  X(NET_PLUGIN, KIND, num, 2, u64, NETKIND, "netType", 0)     \
  X(NET_PLUGIN, IB_DEVICE, num, 3, i64, I64, "device", 1)     \
  X(NET_PLUGIN, IB_WR_ID, num, 4, u64, U64, "wr_id", 1)       \
  X(NET_PLUGIN, IB_OPCODE, num, 5, i64, I64, "opcode", 1)     \
  X(NET_PLUGIN, IB_QP_NUM, num, 6, i64, I64, "qpNum", 1)      \
  X(NET_PLUGIN, IB_LENGTH, num, 7, u64, U64, "length", 1)     \
  X(NET_PLUGIN, SOCK_FD, num, 3, i64, I64, "fd", 2)           \
  X(NET_PLUGIN, SOCK_OP, num, 4, i64, I64, "op", 2)           \
  X(NET_PLUGIN, SOCK_LENGTH, num, 5, u64, U64, "length", 2)

#define NS_FIELDS_GROUP_API(X)                                     \
  X(GROUP_API, DEPTH, num, 0, i64, I64, "depth", 0)                \
  X(GROUP_API, GRAPH_CAPTURED, num, 1, flag, BOOL, "graphCaptured", 0)

#define NS_FIELDS_COLL_API(X)                                         \
  X(COLL_API, FUNC, str, 0, str, FUNC, "func", 0)                     \
  X(COLL_API, COUNT, num, 0, u64, U64, "count", 0)                    \
  X(COLL_API, DTYPE, str, 1, str, STR, "dtype", 0)                    \
  X(COLL_API, ROOT, num, 1, i64, I64, "root", 0)                      \
  X(COLL_API, STREAM, num, 2, ptr, HEX, "stream", 0)                  \
  X(COLL_API, GRAPH_CAPTURED, num, 3, flag, BOOL, "graphCaptured", 0) \
  NS_FIELDS13_COLL_API(X)
#define NS_FIELDS13_COLL_API(X) X(COLL_API, USER_TAG, num, 4, u64, U64, "userTag", NS_WHEN_NZ)

#define NS_FIELDS_P2P_API(X)                                         \
  X(P2P_API, FUNC, str, 0, str, FUNC, "func", 0)                     \
  X(P2P_API, COUNT, num, 0, u64, U64, "count", 0)                    \
  X(P2P_API, DTYPE, str, 1, str, STR, "dtype", 0)                    \
  X(P2P_API, STREAM, num, 1, ptr, HEX, "stream", 0)                  \
  X(P2P_API, GRAPH_CAPTURED, num, 2, flag, BOOL, "graphCaptured", 0) \
  NS_FIELDS13_P2P_API(X)
#define NS_FIELDS13_P2P_API(X) X(P2P_API, USER_TAG, num, 3, u64, U64, "userTag", NS_WHEN_NZ)

#define NS_FIELDS_KERNEL_LAUNCH(X) X(KERNEL_LAUNCH, STREAM, num, 0, ptr, HEX, "stream", 0)

#define NS_FIELDS_CE_COLL(X)                                           \
  X(CE_COLL, FUNC, str, 0, str, FUNC, "func", 0)                       \
  X(CE_COLL, SEQ, num, 0, u64, U64, "seq", 0)                          \
  X(CE_COLL, COUNT, num, 1, u64, U64, "count", 0)                      \
  X(CE_COLL, DTYPE, str, 1, str, STR, "dtype", 0)                      \
  X(CE_COLL, ROOT, num, 2, i64, I64, "root", 0)                        \
  X(CE_COLL, SYNC_STRATEGY, str, 2, str, STR, "syncStrategy", 0)       \
  X(CE_COLL, STREAM, num, 3, ptr, HEX, "stream", 0)                    \
  X(CE_COLL, SEND_BUFF, num, 4, ptr, HEX, "sendBuff", 0)               \
  X(CE_COLL, RECV_BUFF, num, 5, ptr, HEX, "recvBuff", 0)               \
  X(CE_COLL, INTRA_BATCH_SYNC, num, 6, flag, U64, "intraBatchSync", 0) \
  X(CE_COLL, BATCH_SIZE, num, 7, u64, U64, "batchSize", 0)             \
  X(CE_COLL, NUM_BATCHES, num, 8, u64, U64, "numBatches", 0)           \
  X(CE_COLL, CE_SEQ_NUM, num, 9, u64, U64, "ceSeqNum", 0)              \
  NS_FIELDS13_CE_COLL(X)
#define NS_FIELDS13_CE_COLL(X) X(CE_COLL, USER_TAG, num, 10, u64, U64, "userTag", NS_WHEN_NZ)

#define NS_FIELDS_CE_SYNC(X)                                    \
  X(CE_SYNC, IS_COMPLETE, num, 0, flag, BOOL, "isComplete", 0)  \
  X(CE_SYNC, NRANKS, num, 1, i64, U64, "nRanks", 0)

#define NS_FIELDS_CE_BATCH(X)                                       \
  X(CE_BATCH, NUM_OPS, num, 0, i64, U64, "numOps", 0)               \
  X(CE_BATCH, TOTAL_BYTES, num, 1, u64, U64, "totalBytes", 0)       \
  X(CE_BATCH, USE_INTRA_SYNC, num, 2, flag, BOOL, "useIntraSync", 0)

/* A kernel channel's phase (v7): its GPU interval is [pTimer, the stop
 * state's pTimer]; phase 0 initial_sync, 1 compute, 2 final_sync. */
#define NS_FIELDS_KERNEL_PHASE(X)                          \
  X(KERNEL_PHASE, CHANNEL, num, 0, u64, I64, "channel", 0) \
  X(KERNEL_PHASE, PHASE, num, 1, u64, I64, "phaseId", 0)   \
  X(KERNEL_PHASE, NAME, str, 0, str, STR, "phaseName", 0)  \
  X(KERNEL_PHASE, PTIMER, num, 2, u64, U64, "pTimer", 0)
#define NS_FIELDS13_KERNEL_PHASE(X) NS_FIELDS_KERNEL_PHASE(X)

/* Types whose fields are all of 1.2. */
#define NS_FIELDS13_GROUP(X)
#define NS_FIELDS13_PROXY_OP(X)
#define NS_FIELDS13_PROXY_STEP(X)
#define NS_FIELDS13_PROXY_CTRL(X)
#define NS_FIELDS13_KERNEL_CH(X)
#define NS_FIELDS13_NET_PLUGIN(X)
#define NS_FIELDS13_GROUP_API(X)
#define NS_FIELDS13_KERNEL_LAUNCH(X)
#define NS_FIELDS13_CE_SYNC(X)
#define NS_FIELDS13_CE_BATCH(X)

/* Every field of every type, in type order. */
/* (clang-format reflows this list differently on every pass) */
/* clang-format off */
#define NS_SCHEMA_FIELDS(X)                                                                   \
  NS_FIELDS_GROUP(X) NS_FIELDS_COLL(X) NS_FIELDS_P2P(X) NS_FIELDS_PROXY_OP(X)                 \
  NS_FIELDS_PROXY_STEP(X) NS_FIELDS_PROXY_CTRL(X) NS_FIELDS_KERNEL_CH(X) NS_FIELDS_NET_PLUGIN(X) \
  NS_FIELDS_GROUP_API(X) NS_FIELDS_COLL_API(X) NS_FIELDS_P2P_API(X) NS_FIELDS_KERNEL_LAUNCH(X) \
  NS_FIELDS_CE_COLL(X) NS_FIELDS_CE_SYNC(X) NS_FIELDS_CE_BATCH(X) NS_FIELDS_KERNEL_PHASE(X)
/* clang-format on */

/* X(ID, value, "name"): NCCL's ncclProfilerEventState_t values (v1..v7 share
 * them), named as in state records (the ncclProfiler prefix dropped). */
#define NS_SCHEMA_STATES(X)                                   \
  X(PROXY_OP_SEND_POSTED, 0, "ProxyOpSendPosted")             \
  X(PROXY_OP_SEND_REM_FIFO_WAIT, 1, "ProxyOpSendRemFifoWait") \
  X(PROXY_OP_SEND_TRANSMITTED, 2, "ProxyOpSendTransmitted")   \
  X(PROXY_OP_SEND_DONE, 3, "ProxyOpSendDone")                 \
  X(PROXY_OP_RECV_POSTED, 4, "ProxyOpRecvPosted")             \
  X(PROXY_OP_RECV_RECEIVED, 5, "ProxyOpRecvReceived")         \
  X(PROXY_OP_RECV_TRANSMITTED, 6, "ProxyOpRecvTransmitted")   \
  X(PROXY_OP_RECV_DONE, 7, "ProxyOpRecvDone")                 \
  X(PROXY_STEP_SEND_GPU_WAIT, 8, "ProxyStepSendGPUWait")      \
  X(PROXY_STEP_SEND_WAIT, 9, "ProxyStepSendWait")             \
  X(PROXY_STEP_RECV_WAIT, 10, "ProxyStepRecvWait")            \
  X(PROXY_STEP_RECV_FLUSH_WAIT, 11, "ProxyStepRecvFlushWait") \
  X(PROXY_STEP_RECV_GPU_WAIT, 12, "ProxyStepRecvGPUWait")     \
  X(PROXY_CTRL_IDLE, 13, "ProxyCtrlIdle")                     \
  X(PROXY_CTRL_ACTIVE, 14, "ProxyCtrlActive")                 \
  X(PROXY_CTRL_SLEEP, 15, "ProxyCtrlSleep")                   \
  X(PROXY_CTRL_WAKEUP, 16, "ProxyCtrlWakeup")                 \
  X(PROXY_CTRL_APPEND, 17, "ProxyCtrlAppend")                 \
  X(PROXY_CTRL_APPEND_END, 18, "ProxyCtrlAppendEnd")          \
  X(PROXY_OP_IN_PROGRESS, 19, "ProxyOpInProgress")            \
  X(PROXY_STEP_SEND_PEER_WAIT, 20, "ProxyStepSendPeerWait")   \
  X(NET_PLUGIN_UPDATE, 21, "NetPluginUpdate")                 \
  X(KERNEL_CH_STOP, 22, "KernelChStop")                       \
  X(GROUP_START_API_STOP, 23, "GroupStartApiStop")            \
  X(GROUP_END_API_START, 24, "GroupEndApiStart")              \
  X(CE_COLL_START, 25, "CeCollStart")                         \
  X(CE_COLL_COMPLETE, 26, "CeCollComplete")                   \
  X(CE_SYNC_START, 27, "CeSyncStart")                         \
  X(CE_SYNC_COMPLETE, 28, "CeSyncComplete")                   \
  X(CE_BATCH_START, 29, "CeBatchStart")                       \
  X(CE_BATCH_COMPLETE, 30, "CeBatchComplete")                 \
  X(KERNEL_PHASE_STOP, 31, "KernelPhaseStop")

/* ---- the tables as data (src/schema/schema.c), for code that walks fields ---- */
#include <stdint.h>

typedef enum { NS_SLOT_num = 0, NS_SLOT_str = 1 } ns_field_slot;
typedef enum {
  NS_JSON_U64,
  NS_JSON_I64,
  NS_JSON_HEX,
  NS_JSON_BOOL,
  NS_JSON_STR,
  NS_JSON_FUNC,
  NS_JSON_ADDR,
  NS_JSON_NETKIND
} ns_field_json;

typedef struct {
  const char* name; /* key in `details` */
  uint8_t slot;     /* ns_field_slot */
  uint8_t index;    /* in num[] or str[] */
  uint8_t json;     /* ns_field_json */
  uint8_t when;     /* 0, or the NETKIND value the field is written for */
} ns_field_desc;

typedef struct {
  const char* contract;        /* "ncclProfileColl" */
  const char* short_name;      /* "Coll" */
  const char* state_arg;       /* key of the argument its states carry */
  uint8_t state_arg_json;      /* ns_field_json of that argument */
  uint8_t nfields;
  int8_t func_str;             /* str[] index of its FUNC field, -1 if none */
  const ns_field_desc* fields; /* in JSON order */
} ns_type_desc;

/* The descriptor of an event type; NULL for an out-of-range type. */
const ns_type_desc* ns_type_desc_of(unsigned type);

#endif
