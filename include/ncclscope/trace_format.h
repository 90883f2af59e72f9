/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the on-disk trace format, version 1 (see docs/trace-format.md).
 *
 * A trace file is a 32-byte file header followed by self-contained blocks.
 * Each block carries its payload length and a CRC-32 of the payload, so a
 * reader keeps every complete block of a file whose writer was killed and
 * reports how many bytes at the tail were cut. All integers in headers are
 * little-endian; payloads use LEB128 varints (zigzag for signed values).
 */
#ifndef NCCLSCOPE_TRACE_FORMAT_H
#define NCCLSCOPE_TRACE_FORMAT_H

#include <stdint.h>

#define NS_TRACE_MAGIC "NCCLSCOPE-TRACE" /* 15 chars + NUL = 16 bytes */
#define NS_TRACE_VERSION_MAJOR 1         /* readers reject other majors */
#define NS_TRACE_VERSION_MINOR \
  3 /* readers accept any minor; unknown blocks/keys are skipped (1: ANCHOR, 2: DETAIL, 3: EVENTS13) */
#define NS_TRACE_FILE_SUFFIX ".nstrace"

typedef struct {
  char magic[16];
  uint32_t version_major;
  uint32_t version_minor;
  uint32_t header_size; /* sizeof(ns_file_header) = 32 */
  uint32_t reserved;
} ns_file_header;

#define NS_BLOCK_MAGIC 0x3142534eu /* "NSB1" */

typedef struct {
  uint32_t magic;
  uint16_t kind;     /* ns_block_kind */
  uint16_t reserved;
  uint32_t payload_size;
  uint32_t payload_crc32;
  uint64_t seq; /* 0, 1, 2 ... per file: a gap means a lost block */
} ns_block_header;  /* 24 bytes */

typedef enum {
  NS_BLOCK_PROCESS = 1,   /* props: NS_P_* process keys; first block of a file */
  NS_BLOCK_STRINGS = 2,   /* varint n, n x (varint id, varint len, bytes) */
  NS_BLOCK_THREAD = 3,    /* props: NS_P_TID, NS_P_RING, NS_P_NAME */
  NS_BLOCK_COMM_INIT = 4, /* props: NS_P_COMM ... */
  NS_BLOCK_EVENTS = 5,    /* see below */
  NS_BLOCK_COMM_FINI = 6, /* props: NS_P_COMM, NS_P_TS, NS_P_TID, counters */
  NS_BLOCK_COUNTERS = 7,  /* props: process counters (NS_P_EVENTS, NS_P_DROPPED, NS_P_TYPE_* ...) */
  NS_BLOCK_CLOCKFIT = 8,  /* props: NS_P_COMM, NS_P_TS (the reference time the offset holds at), NS_P_GPU_* */
  NS_BLOCK_END = 9,       /* props: NS_P_END_HOW [NS_P_END_SIGNAL]: the writer closed the file */
  NS_BLOCK_ANCHOR =
      10, /* (1.1) props: NS_P_TS, NS_P_REALTIME_OFFSET_NS: a CLOCK_REALTIME reading at each timed flush */
  NS_BLOCK_DETAIL = 11,   /* (1.2) props: NS_P_TS, NS_P_EVENT_MASK, NS_P_DETAIL_*: the plugin changed NCCL's mask */
  NS_BLOCK_EVENTS13 = 12, /* (1.3) EVENTS with every field of schema.h (v7's tags, KernelPhase): written by a
                             process NCCL gave ncclProfiler_v7 */
} ns_block_kind;

/* Why the plugin changed NCCL's mask (DETAIL block, NS_P_DETAIL_REASON). */
typedef enum {
  NS_DETAIL_WHY_START = 0,     /* the first mask */
  NS_DETAIL_WHY_SAMPLE = 1,    /* a sampling period begins (NCCLSCOPE_DETAIL=sampled) */
  NS_DETAIL_WHY_SAMPLE_END = 2,
  NS_DETAIL_WHY_INFLIGHT = 3,  /* escalation: an operation in flight a tenth of the hang timeout */
  NS_DETAIL_WHY_STRAGGLER = 4, /* escalation: a local rank last in most collectives of a window, well behind */
  NS_DETAIL_WHY_BUSBW = 5,     /* escalation: a window's busbw under half of the job's recent level for that size */
  NS_DETAIL_WHY_SIGNAL = 6,    /* escalation: the dump signal */
  NS_DETAIL_WHY_CALM = 7,      /* an escalation ended */
  NS_DETAIL_WHY_COUNT
} ns_detail_why;
#define NS_DETAIL_WHY_NAMES {"start", "sample", "sample-end", "inflight", "straggler", "busbw-drop", "signal", "calm"}

/* How a trace ended (END block). */
#define NS_END_FINALIZE 1 /* the last communicator was finalized */
#define NS_END_EXIT 2     /* the process exited (exit() or return from main) with communicators alive */
#define NS_END_SIGNAL 3   /* a termination signal (SIGTERM, SIGINT...) reached the process */

/* EVENTS payload: varint tid, varint ring, varint base_ts, varint base_id,
 * varint count, then `count` records. A record:
 *   tag  = kind << 6 | has_flags << 5 | comm_changed << 4 | type   (1 byte)
 *   varint zigzag(ts - prev_ts), varint zigzag(id - prev_id)
 *   [varint flags] [varint comm]
 *   START: varint parent code (0 none; raw+1 if PARENT_RAW; else zigzag(id - parent) + 1)
 *          [varint origin_pid if PXN], nums x varint zigzag, strs x varint
 *   STATE: varint state, varint arg
 * prev_ts/prev_id start at base_ts/base_id; prev_comm at 0.
 */

/* Property keys of the props encoding: varint key, varint ptype, value
 * (NS_PT_U64: varint; NS_PT_I64: zigzag varint; NS_PT_STR: varint len + bytes;
 * NS_PT_F64: 8 bytes IEEE little-endian). Readers skip unknown keys. */
typedef enum { NS_PT_U64 = 0, NS_PT_I64 = 1, NS_PT_STR = 2, NS_PT_F64 = 3 } ns_prop_type;

typedef enum {
  /* PROCESS */
  NS_P_PID = 1,
  NS_P_HOSTNAME = 2,
  NS_P_START_MONO_NS = 3,
  NS_P_REALTIME_OFFSET_NS = 4, /* i64: add to a trace ts to get Unix-epoch ns */
  NS_P_CLOCK_SOURCE = 5,       /* str: "tsc" or "clock_gettime" */
  NS_P_TSC_HZ = 6,             /* f64 */
  NS_P_PLUGIN_VERSION = 7,     /* str: ncclscope version */
  NS_P_SLURM_JOB = 8,          /* str */
  /* THREAD */
  NS_P_TID = 20,
  NS_P_RING = 21,
  NS_P_NAME = 22,
  /* COMM_INIT / COMM_FINI */
  NS_P_COMM = 30,       /* comm serial in this trace, >= 1 */
  NS_P_COMM_ID = 31,    /* commId / commHash NCCL passed to init */
  NS_P_RANK = 32,       /* i64 */
  NS_P_NRANKS = 33,
  NS_P_NNODES = 34,
  NS_P_COMM_NAME = 35,  /* str, absent when NCCL passed NULL */
  NS_P_ABI_VERSION = 36, /* the ncclProfiler_vN NCCL picked */
  NS_P_EVENT_MASK = 37,
  NS_P_GPU_UUID = 38,   /* str */
  NS_P_TS = 39,
  NS_P_CTX_ADDR = 40,
  /* counters (COMM_FINI and COUNTERS) */
  NS_P_EVENTS = 50,         /* events started and recorded */
  NS_P_DROPPED = 51,        /* records lost: ring full, no free handle */
  NS_P_DROPPED_RING = 52,
  NS_P_DROPPED_HANDLES = 53,
  NS_P_BAD_HANDLES = 54,    /* stop/state calls with a handle that is not ours */
  NS_P_PXN_EVENTS = 55,
  NS_P_BYTES_WRITTEN = 56,
  NS_P_WRITE_ERRORS = 57,
  NS_P_PARENT_LOST = 58,
  NS_P_BYTES_LOST = 59,     /* trace bytes the writer could not write (disk full beyond what it holds) */
  /* COUNTERS: how NCCL used the handles, and what the plugin closed */
  NS_P_STALE_HANDLES = 140, /* stop/state on a handle whose event was already over and its slot reused */
  NS_P_DOUBLE_STOPS = 141,  /* a second stop of one event */
  NS_P_LATE_STATES = 142,   /* a state of an event after its stop */
  NS_P_STATE_REPEATS = 143, /* identical states counted, not recorded (NS_ST_REPEATED) */
  NS_P_PARENTS_LATE = 144,  /* children whose parent was over, found by its handle */
  NS_P_STEPS_UNANALYSED = 147, /* ProxySteps recorded but left out of the live analysis (the writer was behind) */
  NS_P_CLOSED_BASE = 150,   /* + NS_CLOSE_*: events the plugin closed for that reason */
  /* END */
  NS_P_END_HOW = 145,       /* NS_END_*: how the process ended its trace */
  NS_P_END_SIGNAL = 146,    /* NS_END_SIGNAL: the signal */
  NS_P_TYPE_EVENTS_BASE = 100,  /* + ns_event_type: events of that type */
  NS_P_TYPE_DROPPED_BASE = 120, /* + ns_event_type */
  /* CLOCKFIT */
  NS_P_GPU_OFFSET_NS = 60, /* f64: ts = pTimer - offset (at the reference point) */
  NS_P_GPU_DRIFT_PPM = 61, /* f64 */
  NS_P_GPU_ERROR_NS = 62,  /* f64: published error bound */
  NS_P_GPU_SAMPLES = 63,
  /* DETAIL (NS_P_EVENT_MASK: the mask NCCL reads from NS_P_TS on, for its next task) */
  NS_P_DETAIL_LEVEL = 70,  /* NCCLSCOPE_DETAIL: 0 ops, 1 sampled, 2 full */
  NS_P_DETAIL_FULL = 71,   /* 1: full detail from now on (KernelCh, ProxyStep ...), 0: operations only */
  NS_P_DETAIL_REASON = 72, /* ns_detail_why */
  /* COUNTERS */
  NS_P_DETAIL_SWITCHES = 73,    /* mask changes */
  NS_P_DETAIL_ESCALATIONS = 74, /* escalations to full detail */
  NS_P_DETAIL_FULL_NS = 75,     /* time with full detail */
} ns_prop_key;

#endif
