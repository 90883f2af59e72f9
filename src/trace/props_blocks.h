/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the props blocks of a trace (PROCESS, THREAD, COMM_INIT, and
 * the numeric ones: COMM_FINI, COUNTERS, CLOCKFIT, END, ANCHOR) decoded
 * from their payload [p, end) into the reader's info structs. Each returns
 * 0, or -1 when the payload is malformed (what came before stays in *out). */
#ifndef NCCLSCOPE_TRACE_PROPS_BLOCKS_H
#define NCCLSCOPE_TRACE_PROPS_BLOCKS_H

#include <stdint.h>

#include "ncclscope/trace_reader.h"

int ns_props_process(const uint8_t* p, const uint8_t* end, ns_process_info* out);
int ns_props_thread(const uint8_t* p, const uint8_t* end, ns_thread_info* out);
/* rank -1 unless the block gives one */
int ns_props_comm_init(const uint8_t* p, const uint8_t* end, ns_comm_info* out);
/* every numeric prop by key; strings are ignored */
int ns_props_numeric(const uint8_t* p, const uint8_t* end, ns_props_info* out);

#endif
