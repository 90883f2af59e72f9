/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v5 (NCCL 2.28: uint64_t type, API events, parentGroup, new init argument order).
 * The adapter's body is adapter_template.h; this file says what v5 has. */
#define NS_V 5
#define NS_V_NUMERIC_STRS 0
#define NS_V_KCH_NET 1
#define NS_V_CHANNELS 1
#define NS_V_API 1
#define NS_V_CE 0
#define NS_V_V7 0
#define NS_V_INIT 5
#include "abi/adapter_template.h"
