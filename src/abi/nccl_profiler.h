/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: every ncclProfiler_vN ABI version in one include. */
#ifndef NCCLSCOPE_ABI_NCCL_PROFILER_H
#define NCCLSCOPE_ABI_NCCL_PROFILER_H
#include "nccl_common.h"
#include "profiler_v1.h"
#include "profiler_v2.h"
#include "profiler_v3.h"
#include "profiler_v4.h"
#include "profiler_v5.h"
#include "profiler_v6.h"
#include "profiler_v7.h"
#endif
