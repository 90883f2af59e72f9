/* SPDX-License-Identifier: Apache-2.0 */
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

#include "ncclscope/schema.h"

/* Event types (schema.h): ncclscope's number is the bit position of NCCL's type bit. */
typedef enum {
#define NS_TYPE_ENUM(T, bit, contract, short_name, arg_name, arg_json) NS_EV_##T = bit,
  NS_SCHEMA_TYPES(NS_TYPE_ENUM)
#undef NS_TYPE_ENUM
      NS_EV_COUNT = 16
} ns_event_type;
/* Every event type's bit (NCCL's ncclProfile* bits 0 .. NS_EV_COUNT-1). */
#define NS_EV_ALL_MASK ((1u << NS_EV_COUNT) - 1u)

/* Field indices (schema.h): NS_<TYPE>_<FIELD> is the field's position in
 * num[] or str[] of its type's START record. */
enum {
#define NS_FIELD_ENUM(T, F, slot, idx, ctype, json, name, when) NS_##T##_##F = idx,
  NS_SCHEMA_FIELDS(NS_FIELD_ENUM)
#undef NS_FIELD_ENUM
};

/* NCCL's state ids (schema.h): NS_ST_KERNEL_CH_STOP etc. */
typedef enum {
#define NS_STATE_ENUM(ID, value, name) NS_ST_##ID = value,
  NS_SCHEMA_STATES(NS_STATE_ENUM)
#undef NS_STATE_ENUM
} ns_state_id;

/* ncclscope's own state records, which no NCCL call made (NCCL's ids are
 * 0..30; one it passes at or above NS_ST_OWN_FIRST is recorded as
 * NS_ST_OWN_FIRST - 1):
 *  - REPEATED: the event's previous state was reported `arg` more times,
 *    identically (state and argument), up to this record's time; the
 *    plugin recorded it once and counted the rest.
 *  - CLOSED: the plugin closed this event, which NCCL never stopped; `arg`
 *    says why (NS_CLOSE_*). The event ends incomplete at this record. */
#define NS_ST_OWN_FIRST 250
#define NS_ST_REPEATED 254
#define NS_ST_CLOSED 255

/* Why the plugin closed an event NCCL did not stop (NS_ST_CLOSED's arg). */
#define NS_CLOSE_RESTARTED 1     /* NCCL started the same ProxyStep again: its first start is never stopped */
#define NS_CLOSE_MAX_AGE 2       /* still running after NCCLSCOPE_MAX_AGE_MS */
#define NS_CLOSE_PRESSURE 3      /* its slab ran short of slots: the oldest open leak-prone events went first */
#define NS_CLOSE_COMM_END 4      /* its communicator was finalized with it running */
#define NS_CLOSE_EXIT 5          /* the process ended (exit, signal) with it running */
#define NS_CLOSE_NEVER_STOPPED 6 /* a ProxyOp of a transport that never stops them (no state after NCCLSCOPE_HOLD_MS) */
#define NS_CLOSE_REASONS 7
/* "restarted" etc. (the JSON Lines incompleteReason); NULL if unknown. */
const char* ns_close_reason_name(unsigned reason);

typedef enum { NS_REC_START = 1, NS_REC_STOP = 2, NS_REC_STATE = 3 } ns_record_kind;

/* Record flags. */
#define NS_RF_PXN 0x1u          /* runs on behalf of another process (origin_pid) */
#define NS_RF_PARENT_RAW 0x2u   /* START: `parent` is a raw foreign pointer, not an id */
#define NS_RF_PARENT_LOST 0x4u  /* START: NCCL named a parent we could not resolve */
#define NS_RF_STR_TRUNC 0x8u    /* START: a string was truncated to fit the ring */
#define NS_RF_HAS_ARG 0x10u     /* STATE: NCCL passed state args (`arg` is meaningful) */

#define NS_REC_NUMS 11
#define NS_REC_STRS 5

/* What num[] and str[] hold per type: include/ncclscope/schema.h. Signed
 * values (root, peer) are stored sign-extended to 64 bits. */
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

/* A record with its identity set and every other field zero (for code that
 * makes records: the writer, tests, benchmarks); tid, flags and the
 * type's fields are the caller's to add. */
static inline ns_record ns_record_make(uint8_t kind, uint8_t type, uint32_t comm, uint64_t ts, uint64_t id,
                                       uint64_t parent) {
  return (ns_record){.kind = kind, .type = type, .comm = comm, .ts = ts, .id = id, .parent = parent};
}

/* Number of num[] and str[] fields each type carries on START (from the
 * schema; the hot path sizes ring entries with it, the codec encodes it). */
typedef struct {
  uint8_t nums;
  uint8_t strs;
} ns_type_layout;

extern const ns_type_layout ns_type_layouts[NS_EV_COUNT];
/* The same for a 1.2 EVENTS block: the fields of NS_FIELDS13_<TYPE> left
 * out (KernelPhase has none: it never appears in one). */
extern const ns_type_layout ns_type_layouts12[NS_EV_COUNT];

/* "ncclProfileColl" etc.; NULL for an out-of-range type. */
const char* ns_event_type_name(unsigned type);
/* "Coll" etc. (the contract name without "ncclProfile"); NULL for an out-of-range type. */
const char* ns_event_short_name(unsigned type);
/* "ProxyStepSendWait" etc. (NCCL's state names without the ncclProfiler prefix); NULL if unknown. */
const char* ns_state_name(int state);

/* Typed setters, one per field: ns_set_<TYPE>_<FIELD>(num, str, value)
 * widens the value NCCL passed to its word as the schema's ctype says. */
#define NS_CTYPE_u64 uint64_t
#define NS_CTYPE_i64 int64_t
#define NS_CTYPE_ptr const void*
#define NS_CTYPE_flag int
#define NS_CTYPE_id uint64_t
#define NS_CTYPE_str const char*
#define NS_WIDEN_u64(v) ((uint64_t)(v))
#define NS_WIDEN_i64(v) ((uint64_t)(int64_t)(v)) /* sign-extended */
#define NS_WIDEN_ptr(v) ((uint64_t)(uintptr_t)(v))
#define NS_WIDEN_flag(v) ((uint64_t)((v) != 0))
#define NS_WIDEN_id(v) ((uint64_t)(v))
#define NS_STORE_num(idx, ctype, v) \
  (void)str;                        \
  num[idx] = NS_WIDEN_##ctype(v);
#define NS_STORE_str(idx, ctype, v) \
  (void)num;                        \
  str[idx] = (v);
#define NS_FIELD_SETTER(T, F, slot, idx, ctype, json, name, when)                                 \
  static inline void ns_set_##T##_##F(uint64_t* num, const char** str, NS_CTYPE_##ctype v) { \
    NS_STORE_##slot(idx, ctype, v)                                                              \
  }
NS_SCHEMA_FIELDS(NS_FIELD_SETTER)
#undef NS_FIELD_SETTER

/* A communicator rank as its COMM_INIT block records it. */
typedef struct {
  uint32_t comm; /* serial within this trace, >= 1 */
  uint64_t comm_id;
  int32_t rank;
  uint32_t nranks;
  uint32_t nnodes;
  int has_name;
  char comm_name[256];
  uint32_t abi_version;
  uint64_t event_mask;
  char gpu_uuid[64];
  uint64_t ts;
  uint32_t tid;
  uint64_t ctx_addr;
} ns_comm_info;

/* A communicator's info with only its identity set (the rest zero): what
 * tests, benchmarks and the writer start from before adding what they know. */
static inline ns_comm_info ns_comm_info_make(uint32_t comm, uint64_t comm_id, int32_t rank, uint32_t nranks) {
  ns_comm_info ci = {.comm = comm, .comm_id = comm_id, .rank = rank, .nranks = nranks};
  return ci;
}

#endif
