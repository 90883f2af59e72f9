/* ncclscope: the logical trace record.
 *
 * One ns_record is one profiler call as ncclscope understood it: the start
 * of an event (with its type-specific fields), its stop, or one state
 * transition. The plugin's background thread builds these from ring entries
 * and encodes them (src/trace/codec.c); the reader decodes them back. The
 * analysis code and every exporter consume nothing else.
 */
#ifndef NCCLSCOPE_RECORD_H
#define NCCLSCOPE_RECORD_H

#include <stdint.h>

/* Event types: ncclscope's number is the bit position of NCCL's type bit. */
typedef enum {
  NS_EV_GROUP = 0,
  NS_EV_COLL = 1,
  NS_EV_P2P = 2,
  NS_EV_PROXY_OP = 3,
  NS_EV_PROXY_STEP = 4,
  NS_EV_PROXY_CTRL = 5,
  NS_EV_KERNEL_CH = 6,
  NS_EV_NET_PLUGIN = 7,
  NS_EV_GROUP_API = 8,
  NS_EV_COLL_API = 9,
  NS_EV_P2P_API = 10,
  NS_EV_KERNEL_LAUNCH = 11,
  NS_EV_CE_COLL = 12,
  NS_EV_CE_SYNC = 13,
  NS_EV_CE_BATCH = 14,
  NS_EV_COUNT = 15
} ns_event_type;

typedef enum { NS_REC_START = 1, NS_REC_STOP = 2, NS_REC_STATE = 3 } ns_record_kind;

/* Record flags. */
#define NS_RF_PXN 0x1u          /* runs on behalf of another process (origin_pid) */
#define NS_RF_PARENT_RAW 0x2u   /* START: `parent` is a raw foreign pointer, not an id */
#define NS_RF_PARENT_LOST 0x4u  /* START: NCCL named a parent we could not resolve */
#define NS_RF_STR_TRUNC 0x8u    /* START: a string was truncated to fit the ring */
#define NS_RF_HAS_ARG 0x10u     /* STATE: NCCL passed state args (`arg` is meaningful) */

#define NS_REC_NUMS 10
#define NS_REC_STRS 4

/* Per-type meaning of num[] and str[] (see ns_type_layout in codec.c):
 *  GROUP        -
 *  COLL         num: seq count root sendBuff recvBuff nChannels nWarps parentGroup(id)  str: func dtype algo proto
 *  P2P          num: peer count buff nChannels parentGroup(id)                         str: func dtype
 *  PROXY_OP     num: channel peer nSteps chunkSize isSend pid
 *  PROXY_STEP   num: step
 *  PROXY_CTRL   -
 *  KERNEL_CH    num: channel pTimer
 *  NET_PLUGIN   num: netId data decodedKind(0 none, 1 IB QP, 2 socket) then
 *               IB: device wr_id opcode qpNum length | socket: fd op length
 *  GROUP_API    num: depth graphCaptured
 *  COLL_API     num: count root stream graphCaptured                              str: func dtype
 *  P2P_API      num: count stream graphCaptured                                   str: func dtype
 *  KERNEL_LAUNCH num: stream
 *  CE_COLL      num: seq count root stream sendBuff recvBuff intraBatchSync batchSize numBatches ceSeqNum
 *               str: func dtype syncStrategy
 *  CE_SYNC      num: isComplete nRanks
 *  CE_BATCH     num: numOps totalBytes useIntraSync
 * Signed values (root, peer) are stored sign-extended to 64 bits.
 */
typedef struct ns_record {
  uint8_t kind;        /* ns_record_kind */
  uint8_t type;        /* ns_event_type (also on STOP and STATE records) */
  uint16_t flags;      /* NS_RF_* */
  uint32_t comm;       /* communicator serial in this trace (COMM_INIT block); 0 = unknown (PXN) */
  int32_t state;       /* STATE: NCCL's state id */
  uint32_t tid;        /* thread of the call (from the block header) */
  uint32_t origin_pid; /* NS_RF_PXN: the process the event runs for */
  uint32_t reserved;
  uint64_t ts;         /* ns on this trace's clock (CLOCK_MONOTONIC) */
  uint64_t id;         /* event id, unique within this trace, never 0 */
  uint64_t parent;     /* START: parent's id, 0 = none; raw pointer if NS_RF_PARENT_RAW */
  uint64_t arg;        /* STATE: transSize / appendedProxyOps / pTimer / netPlugin data */
  uint64_t num[NS_REC_NUMS];
  uint32_t str[NS_REC_STRS]; /* string ids (STRINGS block); 0 = NULL string */
} ns_record;

/* Number of num[] and str[] fields each type carries on START. */
typedef struct {
  uint8_t nums;
  uint8_t strs;
} ns_type_layout;

extern const ns_type_layout ns_type_layouts[NS_EV_COUNT];

/* "ncclProfileColl" etc.; NULL for an out-of-range type. */
const char* ns_event_type_name(unsigned type);
/* "ProxyStepSendWait" etc. (NCCL's state names without the ncclProfiler prefix); NULL if unknown. */
const char* ns_state_name(int state);

#endif
