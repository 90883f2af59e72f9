/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the detail decision applied and recorded (detail_out.c). Writer thread. */
#ifndef NCCLSCOPE_WRITER_DETAIL_OUT_H
#define NCCLSCOPE_WRITER_DETAIL_OUT_H

#include <stdint.h>

#include "trace/codec.h"

/* Each pass: the decision of the moment into every live communicator's
 * NCCL mask; a DETAIL block into out when it changed (1 then). */
int ns_detail_out(ns_buf* out, uint64_t* seq, uint64_t now_ns);
/* The detail counters, into a COUNTERS block being written. */
void ns_detail_out_counters(ns_buf* out, uint64_t now_ns);

#endif
