/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: draining the rings (writer thread only). Each ring's entries
 * are decoded into records (ring.h's entry layout), its new strings
 * interned, and both written as one STRINGS and one EVENTS block per ring
 * (a THREAD block first for a ring with a new owner). Every record also
 * goes to the analysis and the flight recorder; a ring that fills sheds:
 * its ProxySteps skip the analysis. What was recorded is counted in ns_ws. */
#ifndef NCCLSCOPE_WRITER_DRAIN_H
#define NCCLSCOPE_WRITER_DRAIN_H

#include <stdint.h>

#include "writer/strtab.h"

/* When tracing starts: the string table and the per-ring state. 0 or -1. */
int ns_drain_open(void);
/* When tracing ends: frees them. */
void ns_drain_close(void);
/* The string table (records' strings resolve through it). */
const ns_strtab* ns_drain_strings(void);
/* Drains every ring into ns_ws.out. Returns the fullest ring's fill, in
 * percent, before its drain. */
unsigned ns_drain_all(void);

#endif
