/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin tests: a whole trace file (or dump dir) in memory, read
 * with the public reader (include/ncclscope/trace_reader.h). Tests only. */
#ifndef NCCLSCOPE_TEST_TRACE_LOAD_H
#define NCCLSCOPE_TEST_TRACE_LOAD_H
#include <stddef.h>
#include "ncclscope/trace_reader.h"

typedef struct {
  ns_record r;
  char str[NS_REC_STRS][80]; /* resolved strings; "" for NULL (see has_str) */
  int has_str[NS_REC_STRS];
} tl_rec;

typedef struct {
  tl_rec* recs;
  size_t nrecs, cap;
  ns_comm_info comms[64];
  int ncomms;
  ns_props_info finis[64];
  int nfinis;
  ns_props_info counters;
  int have_counters;
  ns_thread_info threads[512];
  int nthreads;
  ns_process_info process;
  int files;
  int clean_end; /* every file */
  uint64_t bytes_cut, seq_gaps;
} tl_trace;

/* Loads one file; appends to t. 0 or -1. */
int tl_load_file(tl_trace* t, const char* path);
/* Loads every *.nstrace in dir. Returns the number of files, -1 on error. */
int tl_load_dir(tl_trace* t, const char* dir);
void tl_free(tl_trace* t);
/* START record with that id, or NULL. */
const tl_rec* tl_find_start(const tl_trace* t, uint64_t id);
size_t tl_count(const tl_trace* t, int kind, int type);
/* Finds a COMM_INIT by serial (first file). */
const ns_comm_info* tl_comm(const tl_trace* t, uint32_t serial);
#endif
