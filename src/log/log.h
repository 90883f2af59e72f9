/* ncclscope: logging through NCCL's logger (v4+), stderr otherwise.
 * Cold paths only (init, finalize, the writer thread): never on the hot path. */
#ifndef NCCLSCOPE_LOG_H
#define NCCLSCOPE_LOG_H

#include "abi/nccl_common.h"

/* Sets the logger NCCL handed to init (NULL for v1..v3). */
void ns_log_set_logger(ncclDebugLogger_t fn);
/* Forgets the logger (last finalize: the function may go away with NCCL). */
void ns_log_reset(void);

void ns_log_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void ns_log_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
