/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v1 (NCCL 2.23: numeric func/dtype/algo/proto, uint8_t type).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 1
#include "abi/adapter_template.h"
