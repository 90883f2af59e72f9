/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the warning lines of the configuration, shared by every file
 * that reads a variable (config.c, otel.c, names.c), which call in here and
 * never into each other for it. */
#ifndef NCCLSCOPE_CONFIG_WARN_H
#define NCCLSCOPE_CONFIG_WARN_H

#include <stddef.h>

/* Receives one line per rejected value (the runtime logs it); may be NULL. */
typedef void (*ns_config_warn_fn)(const char* line);

/* Writes `s` for a log line: printable ASCII as is, '"' and '\\' escaped,
 * every other byte as \xNN; at most 80 source bytes, then "...". */
void ns_config_escape(const char* s, char* out, size_t cap);
/* One line to warn (nothing when NULL). */
void ns_config_warnf(ns_config_warn_fn warn, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line: `NAME="value" why; using what` (the value escaped). */
void ns_config_bad_value(ns_config_warn_fn warn, const char* name, const char* value, const char* why,
                         const char* used_fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
