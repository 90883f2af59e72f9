/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the flight recorder and the hang watchdog on the writer thread
 * (flightrec_run.c). Writer thread only, except ns_writer_request_dump. */
#ifndef NCCLSCOPE_WRITER_FLIGHTREC_RUN_H
#define NCCLSCOPE_WRITER_FLIGHTREC_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "flightrec/flightrec.h"
#include "ncclscope/record.h"
#include "ncclscope/trace_reader.h" /* ns_comm_info */
#include "writer/strtab.h"

/* Async-signal-safe: asks the writer for a flight-record dump at its next
 * pass (the dump signal's handler). */
void ns_writer_request_dump(void);
/* Creates it unless NCCLSCOPE_FR_ENTRIES=0, following the tracker's events
 * (after ns_tracker_open); strings resolve through the writer's table. */
void ns_frw_open(const ns_strtab* strings);
void ns_frw_comm(const ns_comm_info* ci);
void ns_frw_comm_end(uint32_t comm);
/* After each drain (now_ns: trace clock): the watchdog and requested dumps.
 * Returns the watchdog's verdicts (new episodes and ended ones). */
int ns_frw_tick(uint64_t now_ns, int* dumped_on_request);
/* Operations starting from now on have full detail (KernelCh, ProxyOps on every channel), or not. */
void ns_frw_detail(int full, uint64_t now_ns);
/* Whether the flight recorder runs (the live metrics exist). */
int ns_frw_running(void);
/* Each live communicator's oldest operation in flight at now_ns (ns_fr_inflight_get). */
size_t ns_frw_inflight(uint64_t now_ns, ns_fr_inflight* out, size_t max);
void ns_frw_close(void);

#endif
