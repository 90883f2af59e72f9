/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: storage of the context table, the detail flag and the rare-path counters. */
#include "capture/context.h"

ns_context ns_ctx_table[NS_MAX_CONTEXTS] __attribute__((aligned(64)));
ns_counters ns_cnt;
_Atomic int ns_detail_full;
