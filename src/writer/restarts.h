/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ProxySteps NCCL starts again before stopping them.
 *
 * NCCL's receive progress (transport/net.cc, 2.23+) starts a step's
 * ProxyStep event, and when the post cannot go out yet (a registered
 * buffer the kernel has not published, a network that returns no request,
 * a grouped receive out of depth) starts the same step of the same
 * ProxyOp again on its next pass, overwriting the handle: every start but
 * the last is never stopped. The step started is always its ProxyOp's
 * `posted` one, which advances only when the post went out, so a restart
 * repeats the last step its ProxyOp started. The writer sees each START in
 * order and asks here whether that ProxyOp's last step has the same number
 * and is still open; the earlier event is then closed at once
 * (NS_CLOSE_RESTARTED) instead of staying open until
 * NCCLSCOPE_MAX_AGE_MS.
 *
 * Writer thread only. Memory: one entry per ProxyOp that started a step and
 * has not stopped (ProxyOps that never stop are forgotten once their last
 * step is over and the map holds 65,536).
 */
#ifndef NCCLSCOPE_WRITER_RESTARTS_H
#define NCCLSCOPE_WRITER_RESTARTS_H

#include <stdint.h>

/* A ProxyStep START: parent (its ProxyOp's id, or raw pointer), its step
 * number and its id. Returns the id of the open event the same (parent,
 * step) named before (the caller closes it), or 0. is_open(id) says whether
 * an event is still open. */
uint64_t ns_restarts_start(uint64_t parent, uint64_t step, uint64_t id, int (*is_open)(uint64_t id));
/* A ProxyOp stopped (or was closed): its entry goes. */
void ns_restarts_parent_stopped(uint64_t parent);
/* Session end: frees the table. */
void ns_restarts_reset(void);

#endif
