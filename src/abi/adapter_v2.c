/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v2 (NCCL 2.24: strings for func/dtype/algo/proto).
 * The adapter's body is adapter_template.h; this file says what v2 has. */
#define NS_V 2
#define NS_V_NUMERIC_STRS 0
#define NS_V_KCH_NET 0
#define NS_V_CHANNELS 0
#define NS_V_API 0
#define NS_V_CE 0
#define NS_V_V7 0
#define NS_V_INIT 1
#include "abi/adapter_template.h"
