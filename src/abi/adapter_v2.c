/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v2 (NCCL 2.24: strings for func/dtype/algo/proto).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 2
#include "abi/adapter_template.h"
