/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v4 (NCCL 2.27: init with comm info and logger, nChannels, pTimer).
 * The adapter's body is adapter_template.h; this file names its version. */
#define NS_V 4
#include "abi/adapter_template.h"
