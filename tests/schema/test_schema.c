/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope schema test: the tables of include/ncclscope/schema.h against
 * what the trace format fixed (docs/trace-format.md, version 1.0): the
 * number of num[]/str[] words each type's START carries, the type and
 * state names, and that no two fields of a type share a slot unless they
 * are written for different NetPlugin descriptor kinds. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ncclscope/record.h"

/* Version 1.0 of the format: changing one of these breaks every trace on disk. */
static const ns_type_layout v1_layouts[NS_EV_COUNT] = {
    [NS_EV_GROUP] = {0, 0},        [NS_EV_COLL] = {8, 4},       [NS_EV_P2P] = {5, 2},
    [NS_EV_PROXY_OP] = {6, 0},     [NS_EV_PROXY_STEP] = {1, 0}, [NS_EV_PROXY_CTRL] = {0, 0},
    [NS_EV_KERNEL_CH] = {2, 0},    [NS_EV_NET_PLUGIN] = {8, 0}, [NS_EV_GROUP_API] = {2, 0},
    [NS_EV_COLL_API] = {4, 2},     [NS_EV_P2P_API] = {3, 2},    [NS_EV_KERNEL_LAUNCH] = {1, 0},
    [NS_EV_CE_COLL] = {10, 3},     [NS_EV_CE_SYNC] = {2, 0},    [NS_EV_CE_BATCH] = {3, 0},
    [NS_EV_KERNEL_PHASE] = {0, 0},
};

static void test_layouts(void) {
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    /* a 1.2 EVENTS block keeps the layouts of format 1.0 .. 1.2 (KernelPhase: none) */
    CHECK_U64(ns_type_layouts12[t].nums, v1_layouts[t].nums);
    CHECK_U64(ns_type_layouts12[t].strs, v1_layouts[t].strs);
  }
}

static void test_names(void) {
  CHECK_STR(ns_event_type_name(NS_EV_COLL), "ncclProfileColl");
  CHECK_STR(ns_event_type_name(NS_EV_CE_BATCH), "ncclProfileCeBatch");
  CHECK_STR(ns_event_short_name(NS_EV_KERNEL_LAUNCH), "KernelLaunch");
  CHECK_TRUE(ns_event_type_name(NS_EV_COUNT) == NULL);
  CHECK_STR(ns_state_name(NS_ST_PROXY_STEP_SEND_WAIT), "ProxyStepSendWait");
  CHECK_STR(ns_state_name(NS_ST_KERNEL_CH_STOP), "KernelChStop");
  CHECK_STR(ns_state_name(NS_ST_CE_BATCH_COMPLETE), "CeBatchComplete");
  CHECK_STR(ns_state_name(NS_ST_KERNEL_PHASE_STOP), "KernelPhaseStop");
  CHECK_TRUE(ns_state_name(NS_ST_KERNEL_PHASE_STOP + 1) == NULL);
  CHECK_TRUE(ns_state_name(NS_ST_OWN_FIRST - 1) == NULL);
  CHECK_STR(ns_state_name(NS_ST_CLOSED), "ncclscopeClosed");
  CHECK_STR(ns_close_reason_name(NS_CLOSE_RESTARTED), "restarted");
  CHECK_TRUE(ns_close_reason_name(0) == NULL && ns_close_reason_name(NS_CLOSE_REASONS) == NULL);
  CHECK_TRUE(ns_state_name(256) == NULL);
  CHECK_TRUE(ns_state_name(-1) == NULL);
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    const ns_type_desc* d = ns_type_desc_of(t);
    CHECK_TRUE(d != NULL);
    if (d) CHECK_STR(d->contract + strlen("ncclProfile"), d->short_name);
  }
}

/* Every field inside its type's layout; (slot, index) used once per NETKIND value. */
static void test_fields(void) {
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    const ns_type_desc* d = ns_type_desc_of(t);
    unsigned used[2][16] = {{0}};
    for (unsigned i = 0; i < d->nfields; i++) {
      const ns_field_desc* f = &d->fields[i];
      unsigned limit = f->slot == NS_SLOT_num ? ns_type_layouts[t].nums : ns_type_layouts[t].strs;
      if (f->index >= limit) fprintf(stderr, "%s.%s: index %u >= %u\n", d->short_name, f->name, f->index, limit);
      CHECK_TRUE(f->index < limit);
      /* a field written only when set still owns its word: as one written always */
      unsigned bit = f->when == NS_WHEN_NZ ? 1u : 1u << f->when;
      if (used[f->slot][f->index & 15] & bit)
        fprintf(stderr, "%s.%s: %s[%u] used twice\n", d->short_name, f->name, f->slot ? "str" : "num", f->index);
      CHECK_TRUE(!(used[f->slot][f->index & 15] & bit));
      used[f->slot][f->index & 15] |= bit;
    }
    /* every word of the layout has a field (else the codec stores words nobody names) */
    for (unsigned k = 0; k < ns_type_layouts[t].nums; k++) CHECK_TRUE(used[NS_SLOT_num][k] != 0);
    for (unsigned k = 0; k < ns_type_layouts[t].strs; k++) CHECK_TRUE(used[NS_SLOT_str][k] != 0);
  }
  CHECK_U64(ns_type_desc_of(NS_EV_COLL)->func_str, NS_COLL_FUNC);
  CHECK_U64((uint64_t)(int64_t)ns_type_desc_of(NS_EV_PROXY_OP)->func_str, (uint64_t)(int64_t)-1);
  CHECK_STR(ns_type_desc_of(NS_EV_PROXY_STEP)->state_arg, "transSize");
}

/* The setters widen as the ctype column says. */
static void test_setters(void) {
  uint64_t num[NS_REC_NUMS] = {0};
  const char* str[NS_REC_STRS] = {0};
  ns_set_COLL_ROOT(num, str, -3);
  CHECK_U64(num[NS_COLL_ROOT], (uint64_t)(int64_t)-3);
  ns_set_COLL_API_GRAPH_CAPTURED(num, str, 7);
  CHECK_U64(num[NS_COLL_API_GRAPH_CAPTURED], 1);
  int x;
  ns_set_COLL_SEND_BUFF(num, str, &x);
  CHECK_U64(num[NS_COLL_SEND_BUFF], (uint64_t)(uintptr_t)&x);
  ns_set_COLL_PROTO(num, str, "SIMPLE");
  CHECK_STR(str[NS_COLL_PROTO], "SIMPLE");
}

int main(void) {
  test_layouts();
  test_names();
  test_fields();
  test_setters();
  CHECK_DONE();
}
