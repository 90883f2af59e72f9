/* ncclscope: logging. INFO and WARN go through NCCL's logger when NCCL gave
 * us one (v4+: visible with NCCL_DEBUG=INFO, subsystem PROFILE); without one
 * (v1..v3) only warnings are printed, to stderr. Runs on init/finalize and
 * the writer thread. */
#include "log/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* Written by init (under the lifecycle mutex), read by any cold path: an
 * atomic pointer, relaxed is enough because the function it names is NCCL's
 * and lives as long as NCCL. */
static _Atomic(ncclDebugLogger_t) g_logger;

void ns_log_set_logger(ncclDebugLogger_t fn) {
  if (fn) atomic_store_explicit(&g_logger, fn, memory_order_relaxed);
}

void ns_log_reset(void) { atomic_store_explicit(&g_logger, NULL, memory_order_relaxed); }

static void log_v(ncclDebugLogLevel level, const char* fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  ncclDebugLogger_t fn = atomic_load_explicit(&g_logger, memory_order_relaxed);
  if (fn) {
    fn(level, NCCL_PROFILE | NCCL_INIT, __FILE__, __LINE__, "NCCLSCOPE %s", msg);
  } else if (level == NCCL_LOG_WARN) {
    fprintf(stderr, "NCCLSCOPE WARN %s\n", msg);
  }
}

void ns_log_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v(NCCL_LOG_INFO, fmt, ap);
  va_end(ap);
}

void ns_log_warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_v(NCCL_LOG_WARN, fmt, ap);
  va_end(ap);
}
