/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin tests: minimal accessors for the flat one-line JSON
 * objects of the simulator's truth file and the plugin's summary JSON
 * (tests only: no escapes, no nesting). Each returns 1 and sets *out when
 * the key is present and not null. */
#ifndef NCCLSCOPE_TEST_TRUTH_FIELDS_H
#define NCCLSCOPE_TEST_TRUTH_FIELDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char* jfind(const char* line, const char* key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char* p = strstr(line, pat);
  return p ? p + strlen(pat) : NULL;
}

/* An integer (decimal or 0x hex) or a bool (1/0). */
static inline int jint(const char* line, const char* key, long long* out) {
  const char* p = jfind(line, key);
  if (!p || *p == 'n') return 0;
  if (*p == 't' || *p == 'f') {
    *out = *p == 't';
    return 1;
  }
  *out = strtoll(p, NULL, 0);
  return 1;
}

static inline int jdbl(const char* line, const char* key, double* out) {
  const char* p = jfind(line, key);
  if (!p || *p == 'n') return 0;
  *out = strtod(p, NULL);
  return 1;
}

static inline int jstr(const char* line, const char* key, char* out, size_t len) {
  const char* p = jfind(line, key);
  if (!p || *p != '"') return 0;
  p++;
  size_t n = 0;
  while (p[n] && p[n] != '"' && n + 1 < len) n++;
  memcpy(out, p, n);
  out[n] = 0;
  return 1;
}

#endif
