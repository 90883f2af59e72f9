/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: streaming reader of one trace file (format: docs/trace-format.md).
 *
 * The reader holds one block, the string table, the first
 * NS_READER_MAX_DAMAGE damaged ranges and, to know duplicates, the CRC of
 * every block read (4 bytes a block: the only memory that grows with the
 * length of the trace).
 * Damaged input never crashes it: after a bad block (torn write, flipped
 * bit, overwritten bytes) it resynchronises on the next valid block (magic,
 * plausible size, CRC), so every intact block after the damage is read; a
 * block whose sequence number was already read (a duplicate) is dropped.
 * A damaged file header costs nothing more: the blocks are found by their
 * own framing and CRCs. ns_reader_stats and ns_reader_damage_list say what
 * was lost, where.
 * Single-threaded.
 */
#ifndef NCCLSCOPE_TRACE_READER_H
#define NCCLSCOPE_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/record.h"
#include "ncclscope/trace_format.h"

typedef struct ns_reader ns_reader;

typedef struct {
  uint32_t pid;
  char hostname[256];
  uint64_t start_mono_ns;
  int64_t realtime_offset_ns; /* add to a ts to get Unix-epoch ns */
  char clock_source[32];
  double tsc_hz;
  char version[64];
  char slurm_job[64];
} ns_process_info;

#define NS_MAX_PROP_KEY 160

/* COMM_FINI, COUNTERS, CLOCKFIT, END and ANCHOR: every numeric property by key. */
typedef struct {
  uint32_t comm; /* 0 for process COUNTERS */
  uint64_t ts;
  uint32_t tid;
  uint8_t has[NS_MAX_PROP_KEY];
  uint64_t u[NS_MAX_PROP_KEY]; /* U64/I64 values */
  double f[NS_MAX_PROP_KEY];   /* F64 values */
} ns_props_info;

typedef struct {
  uint32_t tid;
  uint32_t ring;
  char name[64];
} ns_thread_info;

typedef enum {
  NS_ITEM_PROCESS = 1,
  NS_ITEM_THREAD,
  NS_ITEM_COMM_INIT,
  NS_ITEM_COMM_FINI,
  NS_ITEM_COUNTERS,
  NS_ITEM_CLOCKFIT,
  NS_ITEM_RECORD,
  NS_ITEM_END, /* the writer closed the file (props: NS_P_END_HOW, NS_P_END_SIGNAL) */
  NS_ITEM_ANCHOR, /* (format 1.1) trace ts NS_P_TS was Unix-epoch ns ts + NS_P_REALTIME_OFFSET_NS (an i64 in u[]) */
  NS_ITEM_DETAIL, /* (format 1.2) props: from NS_P_TS, NCCL's mask NS_P_EVENT_MASK, NS_P_DETAIL_* */
} ns_item_kind;

typedef struct {
  ns_item_kind kind;
  /* Valid until the next ns_reader_next call; exactly one is set. */
  const ns_process_info* process;
  const ns_thread_info* thread;
  const ns_comm_info* comm;
  const ns_props_info* props;
  const ns_record* record;
} ns_item;

/* NULL on failure with a message in err (not a trace, other major version, unreadable). A damaged
 * header (stats.header_damaged) is not a failure when valid blocks follow it. */
ns_reader* ns_reader_open(const char* path, char* err, size_t errlen);
/* 1: *item filled; 0: end of readable data (see stats for why). */
int ns_reader_next(ns_reader* r, ns_item* item);
/* The string with that id, "" for unknown ids; NULL for id 0 (NCCL passed NULL). */
const char* ns_reader_string(const ns_reader* r, uint32_t id);
/* Process info once the PROCESS block has been read (NULL before). */
const ns_process_info* ns_reader_process(const ns_reader* r);

typedef struct {
  uint64_t file_size;      /* = bytes_ok + bytes_skipped + bytes_duplicate + bytes_cut once the stream ended */
  uint64_t bytes_ok;       /* header + every valid block read */
  uint64_t bytes_cut;      /* trailing bytes after the last valid block (a killed writer's torn tail) */
  uint64_t bytes_skipped;  /* damaged bytes between valid blocks, skipped */
  uint64_t bytes_duplicate; /* valid blocks dropped as duplicates */
  uint64_t blocks;
  uint64_t blocks_duplicate; /* valid blocks whose seq was already read: dropped */
  uint64_t records;
  uint64_t comm_inits;     /* COMM_INIT blocks read */
  uint64_t seq_gaps;       /* block sequence numbers missing between the lowest and the highest read, whatever the
                              order of the blocks (a block copied before its original opens no gap) */
  uint64_t damaged;        /* damaged ranges inside the file (each one resynchronised) */
  uint64_t damaged_kept;   /* of those, blocks read all the same: an EVENTS block whose record count disagrees
                              with the records its payload holds (every record read) */
  int header_damaged;      /* the file header did not check out (magic, major version or size): the blocks were
                              found by their framing and CRCs, the header is the first damaged range */
  int clean_end;           /* END block seen */
  unsigned end_how;        /* NS_END_*: how the traced process ended the file (0: no END) */
  int end_signal;          /* NS_END_SIGNAL: the signal */
  char stop_reason[128];   /* why the tail was cut, "" if it was not */
} ns_reader_stats;

/* One damaged range: bytes [offset, offset + length) were not a valid block.
 * Blocks seq_first .. seq_next - 1 were lost in it (none when seq_next <=
 * seq_first; seq_next is 0 for a cut tail: how many were lost is unknown).
 * A kept range is one block (seq_first) that was read all the same. */
#define NS_READER_MAX_DAMAGE 64
typedef struct {
  uint64_t offset, length;
  uint64_t seq_first, seq_next;
  int tail; /* the range runs to the end of the file */
  int kept; /* the block was read all the same: only its record count was wrong */
  char why[64];
} ns_reader_damage;

/* The first NS_READER_MAX_DAMAGE damaged ranges in file order (stats.damaged
 * counts all; the cut tail, if any, is the last). */
size_t ns_reader_damage_list(const ns_reader* r, const ns_reader_damage** out);
/* The file offset and sequence number of the block the last item came from. */
void ns_reader_block_pos(const ns_reader* r, uint64_t* offset, uint64_t* seq);

void ns_reader_get_stats(const ns_reader* r, ns_reader_stats* out);
void ns_reader_close(ns_reader* r);

/* What a quick pass over the block headers of a file finds: payloads are
 * skipped (no CRC check) except a COUNTERS block's, which is checked and
 * parsed. Stops where ns_reader_next would stop on a bad header. The
 * exporter uses it to know, before it writes a file's lifecycle records,
 * the process counters the plugin writes at the very end. */
typedef struct {
  int has_counters;               /* a COUNTERS block with a good CRC was found (the last one counts) */
  ns_props_info counters;         /* its props (comm 0) */
  uint64_t finis_before_counters; /* COMM_FINI blocks that precede it */
  uint64_t blocks;                /* headers read */
} ns_trace_scan;

/* 0: *out filled (possibly without counters); -1: the file is not readable
 * as a trace (message in err, as ns_reader_open). */
int ns_reader_scan(const char* path, ns_trace_scan* out, char* err, size_t errlen);

/* The CRC-32 the reader checks block payloads with: the value the writer's
 * ns_crc32 gives, computed 8 bytes at a time. Thread-safe. */
uint32_t ns_reader_crc32(const void* data, size_t n);

#endif
