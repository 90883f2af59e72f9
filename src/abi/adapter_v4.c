/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: ncclProfiler_v4 (NCCL 2.27: init with comm info and logger, nChannels, pTimer).
 * The adapter's body is adapter_template.h; this file says what v4 has. */
#define NS_V 4
#define NS_V_NUMERIC_STRS 0
#define NS_V_KCH_NET 1
#define NS_V_CHANNELS 1
#define NS_V_API 0
#define NS_V_CE 0
#define NS_V_V7 0
#define NS_V_INIT 4
#include "abi/adapter_template.h"
