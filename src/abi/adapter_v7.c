/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v7 (NCCL 2.31+: + user tags, kernel variant, KernelPhase).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 7
#include "abi/adapter_template.h"
