/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v6 (NCCL 2.29+: + copy-engine events).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 6
#include "abi/adapter_template.h"
