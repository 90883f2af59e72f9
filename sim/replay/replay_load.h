/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: what the files that read a recording share.
 *
 * replay_fields.c reads fields the way any writer of the format may have put
 * them, replay_descr.c rebuilds event descriptors from `details`,
 * replay_load.c builds the replay model (communicators, events, states,
 * per-thread call lists), replay_gpu.c keeps GPU ground truth (CUPTI kernel
 * records of the recording, a Chrome trace beside it) and maps it onto the
 * recording's clock.
 */
#ifndef NCCLSCOPE_SIM_REPLAY_LOAD_H
#define NCCLSCOPE_SIM_REPLAY_LOAD_H

#include <json-c/json.h>
#include <json-c/linkhash.h>

#include "replay/replay.h"

typedef struct {
  simReplayRecording* r;
  lh_table* addrs;   /* eventAddr string -> event index + 1 */
  lh_table* strings; /* interned descriptor strings */
  /* per event until references are resolved: the parent's and the
   * parentGroup's addresses as recorded */
  struct eventRefs {
    char* parent;
    char* group;
  } * refs;
  char** stateAddr; /* per state: its event's address */
  int capEvents, capRefs, capStates, capStateAddr, capComms, capThreads, capKernels;
  int fileOrder;
  const char* path; /* file being read, and its line number, for messages */
  uint64_t lineNo;
  bool badTime; /* the line being read has a time beyond SIM_REPLAY_TS_LIMIT_NS */
} simReplayLoader;

/* replay_fields.c */
void* simReplayGrow(void* p, int* cap, int need, size_t elem);
const char* simReplayIntern(simReplayLoader* L, const char* s);
json_object* simReplayGet(json_object* o, const char* k);
bool simReplayGetU64(json_object* o, const char* k, uint64_t* out);
bool simReplayGetI64(json_object* o, const char* k, int64_t* out);
int simReplayGetInt(json_object* o, const char* k, int dflt);
const char* simReplayGetStr(simReplayLoader* L, json_object* o, const char* k);
/* Microseconds under key k -> ns. False when absent, not a number, or
 * beyond SIM_REPLAY_TS_LIMIT_NS; that last case also marks L's line (L->badTime,
 * the first one named in firstBadTime as FIELD, k when NULL). L may be NULL. */
bool simReplayGetTsNs(simReplayLoader* L, json_object* o, const char* k, const char* field, int64_t* out);
bool simReplayGetBool(json_object* o, const char* k);
void* simReplayGetPtr(json_object* o, const char* k);
/* A pointer field that names no object: absent, null, "null", "(nil)", "", 0. */
bool simReplayNullPtr(const char* s);
/* {"ts": us, "pid": n, "tid": n} under key k */
bool simReplayCallSite(simReplayLoader* L, json_object* o, const char* k, int64_t* ts, int* pid, int* tid);
/* A record that lacks what it needs: counted as SIM_REPLAY_SKIP_BAD_TIME when one of
 * its times is out of range, else as SIM_REPLAY_SKIP_BAD_FIELDS. */
void simReplaySkipMalformed(simReplayLoader* L);

/* replay_descr.c: the descriptor of event e (type, rank, pid set) from its `details` */
void simReplayFillDescr(simReplayLoader* L, simReplayEvent* e, json_object* det, char** group);

/* replay_gpu.c */
void simReplayCuptiRecord(simReplayLoader* L, json_object* o); /* one recordType "cuptiActivity" line */
void simReplayChromeTraceFile(simReplayRecording* r, const char* path);
void simReplayFitGpuClock(simReplayRecording* r); /* after references are resolved */

#endif
