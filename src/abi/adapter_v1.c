/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v1 (NCCL 2.23: numeric func/dtype/algo/proto, uint8_t type).
 * The adapter's body is adapter_template.h; this file says what v1 has. */
#define NS_V 1
#define NS_V_NUMERIC_STRS 1
#define NS_V_KCH_NET 0
#define NS_V_CHANNELS 0
#define NS_V_API 0
#define NS_V_CE 0
#define NS_V_V7 0
#define NS_V_INIT 1
#include "abi/adapter_template.h"
