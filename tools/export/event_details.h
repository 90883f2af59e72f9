/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the type-specific `details` of an event and the common
 * record fields, shared by the JSONL and Chrome exporters
 * (field names: docs/jsonl-contract.md). */
#ifndef NCCLSCOPE_TOOLS_EVENT_DETAILS_H
#define NCCLSCOPE_TOOLS_EVENT_DETAILS_H

#include "export/export_walk.h"
#include "util/json_writer.h"

/* Writes "eventAddr" and "parentObj" (an eventAddr, the raw foreign pointer
 * of a PXN parent, or null). */
void ns_write_event_ids(ns_json* j, const ns_wfile* f, const ns_event* ev);
/* Writes the key/value pairs of `details` (without the braces), then the
 * extensions' fields. */
void ns_write_details(ns_walk* w, ns_wfile* f, const ns_event* ev, ns_json* j);
/* The `func` string of types that have one, else NULL (*has = 0). */
const char* ns_event_func(const ns_wfile* f, const ns_event* ev, int* has);
/* The name to show for a state id ("State<n>" for ids the codec does not know). */
const char* ns_state_label(int state, char* buf, size_t n);
/* Writes the state's argument field, if the call carried one. */
void ns_write_state_arg(ns_json* j, uint8_t type, const ns_record* st);
/* For an event that never stopped: "incomplete": true and "incompleteReason"
 * (the plugin's NS_CLOSE_* name, "evicted" when the exporter let it go
 * running, "traceEnded" when the data ended first). Nothing if it stopped. */
void ns_write_incomplete(ns_json* j, const ns_event* ev);
/* An NS_ST_REPEATED record of ev as the state it repeats: that state's
 * record (id, argument) for the caller to write, plus the count in *n. */
ns_record ns_repeated_state(const ns_event* ev, const ns_record* st, uint64_t* n);

/* The counters of a COMM_FINI or COUNTERS block as key/value pairs: `events`
 * and `dropped` always, then every other counter present (droppedRing,
 * droppedHandles, badHandles, pxnEvents, bytesWritten, writeErrors,
 * parentLost) and the objects eventsByType / droppedByType when any type has one. */
void ns_write_counter_fields(ns_json* j, const ns_props_info* p);

#endif
