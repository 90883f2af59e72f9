/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the events section of `ncclscope report`: per event type,
 * what the event assembler counted over every trace (events, never stopped,
 * parents, PXN, a digest of the hierarchy). `ncclscope export` assembles
 * the same traces with the same assembler and policy, so its JSONL yields
 * the same numbers (tests/tools/check_agreement.py). Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_EVENTS_H
#define NCCLSCOPE_TOOLS_REPORT_EVENTS_H

#include <stdio.h>

#include "util/json_writer.h"
#include "ncclscope/events.h"

/* Adds one trace's counts into *sum. */
void ns_events_add(ns_asm_stats* sum, const ns_asm_stats* one);
/* The text section. */
void ns_events_text(const ns_asm_stats* s, FILE* out);
/* A JSON array value: one object per type that has events. */
void ns_events_json(const ns_asm_stats* s, ns_json* j);

#endif
