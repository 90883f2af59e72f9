/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: encoding and decoding of trace blocks (format: docs/trace-format.md).
 *
 * Shared by the plugin's background writer thread and by the CLI's reader.
 * Never on NCCL's threads: ns_buf grows with realloc.
 */
#ifndef NCCLSCOPE_TRACE_CODEC_H
#define NCCLSCOPE_TRACE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/record.h"
#include "ncclscope/trace_format.h"
#include "util/bytebuf.h" /* ns_buf */

static inline uint64_t ns_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t ns_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Reads a varint from [*p, end); returns 0 and advances *p, or -1 if truncated/overlong. */
int ns_get_varint(const uint8_t** p, const uint8_t* end, uint64_t* out);

uint32_t ns_crc32(const void* data, size_t n);
/* The same value one byte per step: the reference the tests check ns_crc32 against. */
uint32_t ns_crc32_bytewise(const void* data, size_t n);

/* File header bytes (32). */
void ns_file_header_init(ns_file_header* h);
/* 0 if `h` is a version-1 ncclscope trace header, -1 otherwise. */
int ns_file_header_check(const ns_file_header* h);

/* Block framing: begin reserves the header, end fills size and CRC. */
size_t ns_block_begin(ns_buf* b);
void ns_block_end(ns_buf* b, size_t at, uint16_t kind, uint64_t seq);

/* Props (PROCESS, THREAD, COMM_*, COUNTERS, CLOCKFIT payloads). */
void ns_props_u64(ns_buf* b, uint32_t key, uint64_t v);
void ns_props_i64(ns_buf* b, uint32_t key, int64_t v);
void ns_props_f64(ns_buf* b, uint32_t key, double v);
void ns_props_str(ns_buf* b, uint32_t key, const char* s, size_t n);

typedef struct {
  uint32_t key;
  uint32_t ptype; /* ns_prop_type */
  uint64_t u;     /* NS_PT_U64, NS_PT_I64 (as int64_t bits) */
  double f;       /* NS_PT_F64 */
  const char* s;  /* NS_PT_STR: not NUL-terminated */
  size_t slen;
} ns_prop;

/* Iterates props in [*p, end): 1 = one prop read, 0 = end, -1 = malformed. */
int ns_props_next(const uint8_t** p, const uint8_t* end, ns_prop* out);

/* EVENTS block encoder: begin, then one call per record, then end. */
typedef struct {
  ns_buf* buf;
  size_t block_at;
  size_t count_at;  /* offset of the fixed 5-byte count placeholder */
  uint32_t count;
  uint64_t prev_ts, prev_id;
  uint32_t prev_comm;
  int v13; /* 1: an EVENTS13 block (1.3 layouts); 0: EVENTS (1.2 layouts) */
} ns_event_encoder;

/* An EVENTS block (format 1.2 layouts: every START without the fields of
 * NS_FIELDS13_*, which it stores as 0; no KernelPhase), or with v13 an
 * EVENTS13 block, which stores every field (1.3; a 1.2 reader skips it). */
void ns_events_begin(ns_event_encoder* e, ns_buf* b, uint32_t tid, uint32_t ring, uint64_t base_ts,
                     uint64_t base_id);
void ns_events13_begin(ns_event_encoder* e, ns_buf* b, uint32_t tid, uint32_t ring, uint64_t base_ts, uint64_t base_id);
void ns_events_put(ns_event_encoder* e, const ns_record* r);
void ns_events_end(ns_event_encoder* e, uint64_t seq);

/* EVENTS block decoder over one block payload. The records are read up to
 * the end of the payload, whatever its count says: the payload is under the
 * CRC and the writer puts exactly `count` records in it, so a count that
 * disagrees (ns_events_miscounted) is damage to the count, not a reason to
 * leave records unread or to read past the payload. */
typedef struct {
  const uint8_t* p;
  const uint8_t* end;
  uint32_t tid, ring;
  uint64_t count;   /* the record count the block states */
  uint64_t decoded; /* records decoded so far */
  uint64_t prev_ts, prev_id;
  uint32_t prev_comm;
  const ns_type_layout* layouts; /* ns_type_layouts12 (EVENTS) or ns_type_layouts (EVENTS13) */
} ns_event_decoder;

int ns_events_open(ns_event_decoder* d, const uint8_t* payload, size_t n);
int ns_events13_open(ns_event_decoder* d, const uint8_t* payload, size_t n);
/* 1 = record decoded, 0 = block done (the payload ends after a whole
 * record), -1 = malformed. */
int ns_events_next(ns_event_decoder* d, ns_record* r);
/* Once ns_events_next returned 0: 1 when the block's count is not the
 * number of records its payload held. */
int ns_events_miscounted(const ns_event_decoder* d);

/* STRINGS payload helpers. */
typedef struct {
  ns_buf* buf;
  size_t block_at;
  size_t count_at;
  uint32_t count;
} ns_strings_encoder;
void ns_strings_begin(ns_strings_encoder* e, ns_buf* b);
void ns_strings_put(ns_strings_encoder* e, uint32_t id, const char* s, size_t n);
void ns_strings_end(ns_strings_encoder* e, uint64_t seq);
/* Iterates a STRINGS payload: 1 = one string, 0 = end, -1 = malformed. */
typedef struct {
  const uint8_t* p;
  const uint8_t* end;
  uint32_t remaining;
} ns_strings_decoder;
int ns_strings_open(ns_strings_decoder* d, const uint8_t* payload, size_t n);
int ns_strings_next(ns_strings_decoder* d, uint32_t* id, const char** s, size_t* n);

#endif
