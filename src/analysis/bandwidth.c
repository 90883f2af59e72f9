/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: bandwidth as nccl-tests counts it, and the duration
 * an op's bandwidth is computed from (the message size is
 * src/schema/nccl_names.c's).
 *
 * Pure functions, no state: any thread may call them (in practice the
 * plugin's writer thread and the CLI).
 *
 * busbw = algbw * factor: AllReduce 2(n-1)/n; AllGather, ReduceScatter,
 *        AlltoAll, Gather, Scatter (n-1)/n; everything else 1.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncclscope/analysis.h"

double ns_busbw_factor(int func, uint32_t nranks) {
  double n = nranks ? (double)nranks : 1.0;
  switch (func) {
    case NS_FUNC_ALLREDUCE:
      return 2.0 * (n - 1.0) / n;
    case NS_FUNC_ALLGATHER:
    case NS_FUNC_REDUCESCATTER:
    case NS_FUNC_ALLTOALL:
    case NS_FUNC_GATHER:
    case NS_FUNC_SCATTER:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

double ns_algbw_gbs(uint64_t bytes, uint64_t dur_ns) {
  if (dur_ns == 0) return 0.0;
  return (double)bytes / (double)dur_ns; /* bytes/ns == GB/s (1e9 bytes per s) */
}

int ns_op_duration(const ns_op_times* t, uint64_t* dur_ns) {
  *dur_ns = 0;
  if (t->has_gpu && t->ptimer_stop >= t->ptimer_start) {
    *dur_ns = t->ptimer_stop - t->ptimer_start;
    return NS_BASIS_GPU;
  }
  if (t->started && t->exec_stop_ns > t->start_ns) {
    *dur_ns = t->exec_stop_ns - t->start_ns;
    return NS_BASIS_EXEC;
  }
  if (t->started && t->stopped && t->stop_ns >= t->start_ns) {
    *dur_ns = t->stop_ns - t->start_ns;
    return NS_BASIS_ENQUEUE;
  }
  return NS_BASIS_NONE;
}
