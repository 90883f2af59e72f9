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
  rpRecording* r;
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
  bool badTime; /* the line being read has a time beyond RP_TS_LIMIT_NS */
} rpLoader;

/* replay_fields.c */
void* rpGrow(void* p, int* cap, int need, size_t elem);
const char* rpIntern(rpLoader* L, const char* s);
json_object* rpGet(json_object* o, const char* k);
bool rpGetU64(json_object* o, const char* k, uint64_t* out);
bool rpGetI64(json_object* o, const char* k, int64_t* out);
int rpGetInt(json_object* o, const char* k, int dflt);
const char* rpGetStr(rpLoader* L, json_object* o, const char* k);
/* Microseconds under key k -> ns. False when absent, not a number, or
 * beyond RP_TS_LIMIT_NS; that last case also marks L's line (L->badTime,
 * the first one named in firstBadTime as FIELD, k when NULL). L may be NULL. */
bool rpGetTsNs(rpLoader* L, json_object* o, const char* k, const char* field, int64_t* out);
bool rpGetBool(json_object* o, const char* k);
void* rpGetPtr(json_object* o, const char* k);
/* A pointer field that names no object: absent, null, "null", "(nil)", "", 0. */
bool rpNullPtr(const char* s);
/* {"ts": us, "pid": n, "tid": n} under key k */
bool rpCallSite(rpLoader* L, json_object* o, const char* k, int64_t* ts, int* pid, int* tid);
/* A record that lacks what it needs: counted as RP_SKIP_BAD_TIME when one of
 * its times is out of range, else as RP_SKIP_BAD_FIELDS. */
void rpSkipMalformed(rpLoader* L);

/* replay_descr.c: the descriptor of event e (type, rank, pid set) from its `details` */
void rpFillDescr(rpLoader* L, rpEvent* e, json_object* det, char** group);

/* replay_gpu.c */
void rpCuptiRecord(rpLoader* L, json_object* o); /* one recordType "cuptiActivity" line */
void rpChromeTraceFile(rpRecording* r, const char* path);
void rpFitGpuClock(rpRecording* r); /* after references are resolved */

#endif
