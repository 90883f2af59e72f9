/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the process's session: its configuration, clock, host and
 * trace path. The runtime fills it at the first init, before any context is
 * published (the context's release store orders it for the hot path), and
 * clears it after the last finalize joined the writer; in between it is
 * read-only, so the capture and the writer read it without ordering. */
#ifndef NCCLSCOPE_SESSION_SESSION_H
#define NCCLSCOPE_SESSION_SESSION_H

#include <limits.h>
#include <stdint.h>

#include "clock/clock.h"
#include "config/config.h"

typedef struct {
  ns_config cfg;
  ns_clock clock;
  uint32_t pid;
  char hostname[256];
  char trace_path[PATH_MAX + 320]; /* dump dir + "/" + file name, for messages */
  int abi_version; /* the ncclProfiler_vN of the first init: NCCL picks one per process (7: 1.3 EVENTS13 blocks) */
} ns_session;
extern ns_session ns_sess;

#endif
