/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: logging (see log.h). Runs on init/finalize and the writer thread. */
#include "log/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* Written by init (under the lifecycle mutex), read by any cold path: an
 * atomic pointer, relaxed is enough because the function it names is ours
 * (the ABI layer's) and lives as long as the library. */
static _Atomic(ns_log_sink_fn) g_sink;

void ns_log_set_sink(ns_log_sink_fn fn) {
  if (fn) atomic_store_explicit(&g_sink, fn, memory_order_relaxed);
}

void ns_log_reset(void) { atomic_store_explicit(&g_sink, NULL, memory_order_relaxed); }

static void log_v(int warn, const char* fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  /* One call, one line: a control character from a value we quote (an
   * environment variable, a path) never splits or forges a log line. */
  for (char* p = msg; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  ns_log_sink_fn fn = atomic_load_explicit(&g_sink, memory_order_relaxed);
  if (fn)
    fn(warn, msg);
  else if (warn)
    fprintf(stderr, "NCCLSCOPE WARN %s\n", msg);
}

void ns_log_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v(0, fmt, ap);
  va_end(ap);
}

void ns_log_warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v(1, fmt, ap);
  va_end(ap);
}
