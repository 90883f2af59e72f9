/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v5 (NCCL 2.28: uint64_t type, API events, parentGroup, new init argument order).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 5
#include "abi/adapter_template.h"
