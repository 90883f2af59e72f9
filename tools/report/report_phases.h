/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, `report`: each rank's collectives' GPU time split by
 * kernel phase (NCCL 2.31+, profiler v7: KernelPhase events): initial sync
 * (waiting for the peers to reach the collective), compute, final sync.
 *
 * Per (communicator, rank), the sum over its KernelPhase events of their
 * GPU durations (stop pTimer - start pTimer: one GPU clock, so no clock
 * fit is involved) per phase. The verdicts, per communicator of 2+ ranks
 * with phases, on each rank's initial-sync share of its phases' time: a
 * rank that waits (its share at least NS_PHASE_WAITS, NS_PHASE_GAP above
 * the median rank's and half of it above the next rank's, and its phases'
 * time at least the median rank's: its peers reach the collectives late),
 * and a rank the others wait for (the median share at least
 * NS_PHASE_PEERS_WAIT, this rank's NS_PHASE_GAP below it and half of it
 * below the next rank's: it reaches the collectives last). Shares, not
 * times: a loaded host's ranks all wait milliseconds for each other.
 *
 * Memory: per (communicator, rank) 80 bytes; per KernelPhase in flight in
 * the file being read 32. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_PHASES_H
#define NCCLSCOPE_TOOLS_REPORT_PHASES_H

#include <stdio.h>

#include "util/json_writer.h"
#include "ncclscope/record.h"

#define NS_PHASE_WAITS 0.5
#define NS_PHASE_PEERS_WAIT 0.25
#define NS_PHASE_GAP 0.2

typedef struct ns_phases ns_phases;

ns_phases* ns_phases_new(void); /* NULL when out of memory */
void ns_phases_free(ns_phases* p);
/* A communicator rank of the file being read (its COMM_INIT). */
void ns_phases_comm(ns_phases* p, const ns_comm_info* ci);
/* A record of the file being read: KernelPhase starts and stops count. */
void ns_phases_record(ns_phases* p, const ns_record* r);
/* The file ends: its serials and the phases it left open are forgotten. */
void ns_phases_file_end(ns_phases* p);
/* Sorts the ranks and judges each communicator (after the last file). */
void ns_phases_finish(ns_phases* p);

/* The verdict lines ("# verdict: ...") and the section; nothing without phases. */
size_t ns_phases_verdict_text(const ns_phases* p, FILE* out);
void ns_phases_text(const ns_phases* p, FILE* out);
/* "kernelPhases": [...] (a member, after a comma when one is due). */
void ns_phases_json(const ns_phases* p, ns_json* j);

#endif
