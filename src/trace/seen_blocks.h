/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope reader: the blocks already read, by sequence number, over the
 * whole file, so a block copied any distance away is known as a duplicate.
 *
 * A block's seq is in its header, outside the CRC, so a damaged seq can name
 * a block already read: a block is a duplicate only when its seq AND its
 * payload CRC match one read before. The set keeps runs of consecutive seqs,
 * each with the payload CRC of every block in it: 4 bytes a block (under 0.1%
 * of a trace whose blocks are a few KiB), plus one run for every break in
 * the sequence (a damaged seq, a lost block). Single-threaded.
 */
#ifndef NCCLSCOPE_TRACE_SEEN_BLOCKS_H
#define NCCLSCOPE_TRACE_SEEN_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t lo;   /* first seq of the run */
  uint32_t* crc; /* crc[i]: the payload CRC of block lo + i */
  size_t n, cap;
} ns_seen_run;

typedef struct {
  ns_seen_run* runs; /* sorted by lo, disjoint and not adjacent */
  size_t n, cap;
  size_t last; /* the run the last insert went to: the next seq usually extends it */
} ns_seen_blocks;

/* 1 when a block with this seq and payload CRC was recorded. */
int ns_seen_blocks_has(const ns_seen_blocks* s, uint64_t seq, uint32_t crc);
/* Records the block (a seq already recorded keeps its first CRC). 0, or -1
 * when out of memory (the set is unchanged: that block will not be known as
 * a duplicate). */
int ns_seen_blocks_add(ns_seen_blocks* s, uint64_t seq, uint32_t crc);
void ns_seen_blocks_free(ns_seen_blocks* s);

#endif
