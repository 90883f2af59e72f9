/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: reading one field of a recorded line.
 *
 * Every accessor accepts what a reasonable writer of the format may have
 * used: numbers as JSON integers, doubles, booleans or strings ("0x..."),
 * pointers as hex strings or the string "null". json-c keeps 64-bit ids exact
 * and the original text of numbers, so microsecond timestamps with three
 * decimals become exact nanoseconds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_load.h"

void* simReplayGrow(void* p, int* cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int nc = *cap ? *cap * 2 : 256;
  while (nc < need) nc *= 2;
  void* q = realloc(p, (size_t)nc * elem);
  if (!q) {
    SIM_ERR("replay: out of memory");
    exit(2);
  }
  memset((char*)q + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *cap = nc;
  return q;
}

const char* simReplayIntern(simReplayLoader* L, const char* s) {
  if (!s) return NULL;
  struct lh_entry* e = lh_table_lookup_entry(L->strings, s);
  if (e) return lh_entry_k(e);
  char* k = strdup(s);
  lh_table_insert(L->strings, k, NULL);
  return k;
}

json_object* simReplayGet(json_object* o, const char* k) {
  json_object* v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

bool simReplayGetU64(json_object* o, const char* k, uint64_t* out) {
  json_object* v = simReplayGet(o, k);
  if (!v) return false;
  switch (json_object_get_type(v)) {
  case json_type_int:
    /* json-c keeps integers above INT64_MAX as unsigned */
    *out = json_object_get_uint64(v);
    return true;
  case json_type_double: {
    double d = json_object_get_double(v);
    if (!(d >= 0 && d < 18446744073709551616.0)) return false; /* 2^64; NaN too */
    *out = (uint64_t)d;
    return true;
  }
  case json_type_boolean: *out = json_object_get_boolean(v) ? 1 : 0; return true;
  case json_type_string: {
    const char* s = json_object_get_string(v);
    char* end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s) return false;
    *out = x;
    return true;
  }
  default: return false;
  }
}

bool simReplayGetI64(json_object* o, const char* k, int64_t* out) {
  json_object* v = simReplayGet(o, k);
  if (!v) return false;
  if (json_object_get_type(v) == json_type_int) {
    *out = json_object_get_int64(v);
    return true;
  }
  uint64_t u;
  if (!simReplayGetU64(o, k, &u)) return false;
  *out = (int64_t)u;
  return true;
}

int simReplayGetInt(json_object* o, const char* k, int dflt) {
  int64_t x;
  return simReplayGetI64(o, k, &x) ? (int)x : dflt;
}

const char* simReplayGetStr(simReplayLoader* L, json_object* o, const char* k) {
  json_object* v = simReplayGet(o, k);
  return v && json_object_get_type(v) == json_type_string ? simReplayIntern(L, json_object_get_string(v)) : NULL;
}

enum { TS_NONE, TS_OK, TS_OUT_OF_RANGE };

/* Microseconds as written (a JSON number with decimals) -> exact ns, from the number's own text. */
static int tsNs(json_object* v, int64_t* out) {
  const int64_t limitUs = SIM_REPLAY_TS_LIMIT_NS / 1000;
  enum json_type t = json_object_get_type(v);
  if (t == json_type_int) {
    int64_t us = json_object_get_int64(v); /* clamped to INT64_MAX above it: out of range too */
    if (us <= -limitUs || us >= limitUs) return TS_OUT_OF_RANGE;
    *out = us * 1000;
    return TS_OK;
  }
  if (t != json_type_double) return TS_NONE;
  const char* s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
  bool neg = *s == '-';
  if (neg) s++;
  int64_t whole = 0, frac = 0;
  int digits = 0;
  bool big = false; /* whole reached limitUs: no more digits added (no overflow) */
  for (; *s >= '0' && *s <= '9'; s++) {
    if (!big) whole = whole * 10 + (*s - '0');
    big = big || whole >= limitUs;
  }
  if (*s == '.') {
    for (s++; *s >= '0' && *s <= '9'; s++) {
      if (digits < 3)
        frac = frac * 10 + (*s - '0'), digits++;
      else if (digits == 3) {
        if (*s >= '5') frac++; /* round at the 4th decimal */
        digits++;
      }
    }
  }
  if (*s == 'e' || *s == 'E') { /* exponent form: fall back to the double */
    double ns = json_object_get_double(v) * 1000.0;
    if (!(fabs(ns) < (double)SIM_REPLAY_TS_LIMIT_NS)) return TS_OUT_OF_RANGE; /* NaN too */
    int64_t rounded = (int64_t)(ns + (ns >= 0 ? 0.5 : -0.5));
    if (rounded >= SIM_REPLAY_TS_LIMIT_NS || rounded <= -SIM_REPLAY_TS_LIMIT_NS) return TS_OUT_OF_RANGE;
    *out = rounded;
    return TS_OK;
  }
  if (big) return TS_OUT_OF_RANGE;
  while (digits < 3 && digits >= 0) frac *= 10, digits++;
  int64_t ns = whole * 1000 + frac; /* whole < limitUs: no overflow */
  if (ns >= SIM_REPLAY_TS_LIMIT_NS) return TS_OUT_OF_RANGE;
  *out = neg ? -ns : ns;
  return TS_OK;
}

bool simReplayGetTsNs(simReplayLoader* L, json_object* o, const char* k, const char* field, int64_t* out) {
  json_object* v = simReplayGet(o, k);
  if (!v) return false;
  int got = tsNs(v, out);
  if (got == TS_OUT_OF_RANGE && L) {
    L->badTime = true;
    simReplayRecording* r = L->r;
    if (!r->firstBadTime[0])
      snprintf(r->firstBadTime, sizeof r->firstBadTime, "%s:%llu (%s %.40s)", L->path, (unsigned long long)L->lineNo,
               field ? field : k, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  }
  return got == TS_OK;
}

void simReplaySkipMalformed(simReplayLoader* L) {
  L->r->skipped[L->badTime ? SIM_REPLAY_SKIP_BAD_TIME : SIM_REPLAY_SKIP_BAD_FIELDS]++;
}

bool simReplayGetBool(json_object* o, const char* k) {
  uint64_t x;
  return simReplayGetU64(o, k, &x) && x != 0;
}

void* simReplayGetPtr(json_object* o, const char* k) {
  uint64_t x = 0;
  simReplayGetU64(o, k, &x);
  return (void*)(uintptr_t)x;
}

bool simReplayNullPtr(const char* s) {
  if (!s || !*s || !strcmp(s, "null") || !strcmp(s, "(nil)") || !strcmp(s, "NULL")) return true;
  char* end;
  unsigned long long x = strtoull(s, &end, 16);
  return !*end && x == 0;
}

bool simReplayCallSite(simReplayLoader* L, json_object* o, const char* k, int64_t* ts, int* pid, int* tid) {
  json_object* s = simReplayGet(o, k);
  if (!s || json_object_get_type(s) != json_type_object) return false;
  char field[64];
  snprintf(field, sizeof field, "%s.ts", k);
  if (!simReplayGetTsNs(L, s, "ts", field, ts)) return false;
  *pid = simReplayGetInt(s, "pid", -1);
  *tid = simReplayGetInt(s, "tid", -1);
  return *pid >= 0 && *tid >= 0;
}
