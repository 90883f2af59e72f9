/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: NCCL types shared by every profiler ABI version.
 *
 * Written from the documented layouts of NCCL's profiler plugin interface
 * (NCCL 2.23 .. 2.32). These are ABI facts; the names follow NCCL's so that
 * the adapters read like the documentation. Only src/abi/, sim/ and tests/
 * include this file: the rest of the plugin works on ncclscope's own types.
 */
#ifndef NCCLSCOPE_ABI_NCCL_COMMON_H
#define NCCLSCOPE_ABI_NCCL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6
} ncclResult_t;

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

/* Subsystem flags passed to the logger. */
#define NCCL_INIT 1UL
#define NCCL_ENV 128UL
#define NCCL_PROFILE 16384UL

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

/* Event type bits (eActivationMask and descriptor `type`). */
enum {
  ncclProfileGroup = (1 << 0),
  ncclProfileColl = (1 << 1),
  ncclProfileP2p = (1 << 2),
  ncclProfileProxyOp = (1 << 3),
  ncclProfileProxyStep = (1 << 4),
  ncclProfileProxyCtrl = (1 << 5),
  ncclProfileKernelCh = (1 << 6),
  ncclProfileNetPlugin = (1 << 7),
  ncclProfileGroupApi = (1 << 8),
  ncclProfileCollApi = (1 << 9),
  ncclProfileP2pApi = (1 << 10),
  ncclProfileKernelLaunch = (1 << 11),
  ncclProfileCeColl = (1 << 12),
  ncclProfileCeSync = (1 << 13),
  ncclProfileCeBatch = (1 << 14),
  ncclProfileKernelPhase = (1 << 15), /* v7: a kernel channel's phase, child of its KernelCh */
};
#define NCCL_PROFILE_ALL_V4_MASK 0xFF   /* bits a v4-and-older NCCL can emit */
#define NCCL_PROFILE_CE_MASK (ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch)
#define NCCL_PROFILE_ALL_MASK 0x7FFF

/* One state enum for every version; versions differ in which values they send. */
typedef enum {
  ncclProfilerProxyOpSendPosted = 0, /* 0..7: ProxyOp states, not sent from v4 on */
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,
  ncclProfilerProxyStepSendWait = 9,
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,
  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22,
  ncclProfilerGroupStartApiStop = 23,
  ncclProfilerGroupEndApiStart = 24,
  ncclProfilerCeCollStart = 25, /* 25..30: defined, never sent by NCCL */
  ncclProfilerCeCollComplete = 26,
  ncclProfilerCeSyncStart = 27,
  ncclProfilerCeSyncComplete = 28,
  ncclProfilerCeBatchStart = 29,
  ncclProfilerCeBatchComplete = 30,
  ncclProfilerKernelPhaseStop = 31, /* v7: args carry the phase's end in kernelCh.pTimer */
} ncclProfilerEventState_t;

/* NetPlugin event ids: low 16 bits = descriptor version, next 16 = plugin type. */
#define NCCL_PROFILER_NET_VER_BITS 16
#define NCCL_PROFILER_NET_VER_MASK 0xFFFFULL
#define NCCL_PROFILER_NET_TYPE_MASK 0xFFFF0000ULL
#define NCCL_PROFILER_NET_TYPE_IB (1ULL << NCCL_PROFILER_NET_VER_BITS)
#define NCCL_PROFILER_NET_TYPE_SOCK (2ULL << NCCL_PROFILER_NET_VER_BITS)

#define NCCL_PROFILER_NET_IB_VER 1
#define NCCL_PROFILER_NET_SOCKET_VER 1
enum { ncclProfileQp = (1 << 0) };
enum { ncclProfileSocket = (1 << 0) };

typedef struct {
  uint8_t type; /* ncclProfileQp */
  union {
    struct {
      int device;
      uint64_t wr_id;
      int opcode;
      int qpNum;
      size_t length;
    } qp;
  };
} ncclProfilerNetIbDescr_v1_t;

typedef struct {
  uint8_t type; /* ncclProfileSocket */
  union {
    struct {
      int fd;
      int op;
      size_t length;
    } sock;
  };
} ncclProfilerNetSockDescr_v1_t;

/* v1 numeric codes (NCCL's enums at the time of 2.23). */
enum { ncclFuncBroadcast_v1 = 0, ncclFuncReduce_v1 = 1, ncclFuncAllGather_v1 = 2, ncclFuncReduceScatter_v1 = 3,
       ncclFuncAllReduce_v1 = 4, ncclFuncSendRecv_v1 = 5, ncclFuncSend_v1 = 6, ncclFuncRecv_v1 = 7 };
enum { ncclAlgoTree_v1 = 0, ncclAlgoRing_v1 = 1, ncclAlgoCollNetDirect_v1 = 2, ncclAlgoCollNetChain_v1 = 3,
       ncclAlgoNvls_v1 = 4, ncclAlgoNvlsTree_v1 = 5, ncclAlgoPat_v1 = 6 };
enum { ncclProtoLL_v1 = 0, ncclProtoLL128_v1 = 1, ncclProtoSimple_v1 = 2 };
enum { ncclInt8_v1 = 0, ncclUint8_v1 = 1, ncclInt32_v1 = 2, ncclUint32_v1 = 3, ncclInt64_v1 = 4, ncclUint64_v1 = 5,
       ncclFloat16_v1 = 6, ncclFloat32_v1 = 7, ncclFloat64_v1 = 8, ncclBfloat16_v1 = 9 };

#endif
