/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v3 (NCCL 2.26: + KernelCh, NetPlugin).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 3
#include "abi/adapter_template.h"
