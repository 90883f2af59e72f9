/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: prefaulting memory off the hot path.
 *
 * A first write to an anonymous page costs a page fault (about a
 * microsecond, most of it clearing the page). Rings and slots are written
 * first by NCCL's threads, so the writer thread faults them in ahead of use
 * instead. MADV_POPULATE_WRITE (Linux 5.14+) does it without touching the
 * contents, so it is safe while a producer writes the same pages. */
#ifndef NCCLSCOPE_UTIL_POPULATE_H
#define NCCLSCOPE_UTIL_POPULATE_H

#include <stddef.h>

/* Faults in [p, p + len) writable (page-aligned outward). 0, or -1 when the
 * kernel cannot (then the caller's producers fault pages in themselves). */
int ns_populate_write(void* p, size_t len);

#endif
