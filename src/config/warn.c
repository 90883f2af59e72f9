/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: configuration warning lines (warn.h). Cold. */
#include "config/warn.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ns_config_warnf(ns_config_warn_fn warn, const char* fmt, ...) {
  if (!warn) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  warn(msg);
}

void ns_config_escape(const char* s, char* out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t at = 0, i = 0;
  if (!cap) return;
  for (; s[i] && i < 80; i++) {
    unsigned char c = (unsigned char)s[i];
    char e[5];
    size_t n = 0;
    if (c == '"' || c == '\\')
      e[n++] = '\\', e[n++] = (char)c;
    else if (c >= 0x20 && c < 0x7f)
      e[n++] = (char)c;
    else
      e[n++] = '\\', e[n++] = 'x', e[n++] = hex[c >> 4], e[n++] = hex[c & 15];
    if (at + n + 4 >= cap) break;
    memcpy(out + at, e, n);
    at += n;
  }
  if (s[i] && at + 3 < cap) memcpy(out + at, "...", 3), at += 3;
  out[at] = '\0';
}

void ns_config_bad_value(ns_config_warn_fn warn, const char* name, const char* value, const char* why,
                         const char* used_fmt, ...) {
  char esc[400], used[PATH_MAX + 64];
  ns_config_escape(value, esc, sizeof esc);
  va_list ap;
  va_start(ap, used_fmt);
  vsnprintf(used, sizeof used, used_fmt, ap);
  va_end(ap);
  ns_config_warnf(warn, "%s=\"%s\" %s; using %s", name, esc, why, used);
}
