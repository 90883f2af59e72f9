/* SPDX-License-Identifier: Apache-2.0 */
/* Bytes, algbw and busbw against hand-computed nccl-tests values. */
#include <string.h>

#include "ncclscope/analysis.h"
#include "check.h"

int main(void) {
  /* datatype sizes by name and v1 code */
  CHECK_U64(ns_dtype_size("ncclFloat32"), 4);
  CHECK_U64(ns_dtype_size("ncclBfloat16"), 2);
  CHECK_U64(ns_dtype_size("ncclFloat16"), 2);
  CHECK_U64(ns_dtype_size("ncclFloat64"), 8);
  CHECK_U64(ns_dtype_size("ncclInt8"), 1);
  CHECK_U64(ns_dtype_size("ncclUint8"), 1);
  CHECK_U64(ns_dtype_size("ncclInt64"), 8);
  CHECK_U64(ns_dtype_size("ncclFloat8e4m3"), 1);
  CHECK_U64(ns_dtype_size("ncclFloat8e5m2"), 1);
  CHECK_U64(ns_dtype_size("7"), 4);  /* v1 code ncclFloat32 */
  CHECK_U64(ns_dtype_size("9"), 2);  /* ncclBfloat16 */
  CHECK_U64(ns_dtype_size("Unknown"), 0);
  CHECK_U64(ns_dtype_size(NULL), 0);
  CHECK_U64(ns_func_code("AllReduce"), NS_FUNC_ALLREDUCE);
  CHECK_U64(ns_func_code("AlltoAll"), NS_FUNC_ALLTOALL);
  CHECK_U64(ns_func_code("AllToAll"), NS_FUNC_ALLTOALL);
  CHECK_U64(ns_func_code("4"), NS_FUNC_ALLREDUCE);
  CHECK_U64(ns_func_code("2"), NS_FUNC_ALLGATHER);
  CHECK_TRUE(ns_func_code("Bogus") == NS_FUNC_UNKNOWN);

  /* through a memo: each answer is the table's, whatever the memo held before */
  ns_name_memo fm = {0}, dm = {0};
  static const char* const names[] = {"AllReduce", "AllReduce", "Send", "4", "Bogus", "AllReduce", NULL,
                                      "ncclAllGatherThisNameIsLongerThanTheMemo", "AllGather", "Recv"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK_U64(ns_func_code_memo(&fm, names[i]), ns_func_code(names[i]));
  static const char* const dtypes[] = {"ncclFloat32", "ncclFloat32", "ncclInt8", NULL, "9", "Unknown", "ncclFloat32"};
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    CHECK_U64(ns_dtype_size_memo(&dm, dtypes[i]), ns_dtype_size(dtypes[i]));

  /* n = 8 ranks, float32, count 1M, 1 ms */
  const uint32_t n = 8;
  const uint64_t count = 1 << 20, dur = 1000000;
  struct {
    const char* func;
    uint64_t bytes;
    double factor;
  } cases[] = {
      {"AllReduce", count * 4, 2.0 * 7 / 8}, {"Broadcast", count * 4, 1.0},       {"Reduce", count * 4, 1.0},
      {"AllGather", count * 4 * 8, 7.0 / 8}, {"ReduceScatter", count * 4 * 8, 7.0 / 8},
      {"AlltoAll", count * 4 * 8, 7.0 / 8},  {"Gather", count * 4 * 8, 7.0 / 8},  {"Scatter", count * 4 * 8, 7.0 / 8},
      {"Send", count * 4, 1.0},              {"Recv", count * 4, 1.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int f = ns_func_code(cases[i].func);
    uint64_t b = ns_coll_bytes(f, count, ns_dtype_size("ncclFloat32"), n);
    if (b != cases[i].bytes) fprintf(stderr, "func %s\n", cases[i].func);
    CHECK_U64(b, cases[i].bytes);
    double alg = ns_algbw_gbs(b, dur);
    double expect_alg = (double)cases[i].bytes / 1e9 / 1e-3; /* bytes / 1e9 / seconds */
    CHECK_REL(alg, expect_alg, 1e-12);
    CHECK_REL(alg * ns_busbw_factor(f, n), expect_alg * cases[i].factor, 1e-12);
  }
  /* the worked example: AllReduce 4 MiB over 8 ranks in 1 ms: algbw 4.194304, busbw 7.340032 */
  double alg = ns_algbw_gbs(4194304, 1000000);
  CHECK_NEAR(alg, 4.194304, 1e-9);
  CHECK_NEAR(alg * ns_busbw_factor(NS_FUNC_ALLREDUCE, 8), 7.340032, 1e-9);
  CHECK_NEAR(ns_busbw_factor(NS_FUNC_ALLREDUCE, 1), 0.0, 0);
  CHECK_U64(ns_algbw_gbs(100, 0) == 0.0, 1);
  CHECK_DONE();
}
