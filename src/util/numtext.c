/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: numbers and switches from text (numtext.h). */
#include "util/numtext.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

unsigned long long ns_parse_uint(const char* s, char** end) {
  const char* p = s;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '+') p++;
  int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  return strtoull(s, end, hex ? 16 : 10);
}

int ns_parse_count(const char* s, unsigned long long lo, unsigned long long hi, unsigned long long* out) {
  const char* first = s; /* the first character that is not a space */
  while (isspace((unsigned char)*first)) first++;
  char* end;
  errno = 0;
  unsigned long long v = ns_parse_uint(s, &end);
  /* end == s: no digits (strtoull leaves end at s), checked before the
   * trailing spaces move it; blanks alone are not a zero. */
  if (end == s || *first == '-') return -1;
  while (isspace((unsigned char)*end)) end++;
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int is_decimal(const char* s) {
  while (isspace((unsigned char)*s)) s++;
  if (*s == '+' || *s == '-') s++;
  int digits = 0;
  while (isdigit((unsigned char)*s)) s++, digits++;
  if (*s == '.') {
    s++;
    while (isdigit((unsigned char)*s)) s++, digits++;
  }
  if (!digits) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
  }
  while (isspace((unsigned char)*s)) s++;
  return *s == '\0';
}

int ns_parse_seconds(const char* s, double lo, double hi, int zero_off, double* out) {
  char* end = NULL;
  errno = 0;
  double v = is_decimal(s) ? strtod(s, &end) : 0;
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || errno || end == s || *end || !((v >= lo && v <= hi) || (zero_off && v == 0))) return -1;
  *out = v;
  return 0;
}

int ns_parse_switch(const char* s, int* out) {
  static const char* const yes[] = {"1", "true", "yes", "on"};
  static const char* const no[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(s, yes[i])) return *out = 1, 0;
    if (!strcasecmp(s, no[i])) return *out = 0, 0;
  }
  return -1;
}
