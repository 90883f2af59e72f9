/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the detail section of `ncclscope report` (report_detail.h). */
#include "report/report_detail.h"

static const char* const level_names[3] = {"ops", "sampled", "full"};
static const char* const why_names[NS_DETAIL_WHY_COUNT] = NS_DETAIL_WHY_NAMES;

static int seen_in_trace; /* the current trace has had a DETAIL block */

void ns_detail_trace(ns_report_detail* d) {
  d->traces++;
  seen_in_trace = 0;
}

void ns_detail_item(ns_report_detail* d, const ns_item* it) {
  const ns_props_info* p = it->props;
  if (it->kind == NS_ITEM_DETAIL) {
    if (!seen_in_trace) d->traces_with_detail++;
    seen_in_trace = 1;
    if (p->has[NS_P_DETAIL_LEVEL] && p->u[NS_P_DETAIL_LEVEL] < 3) d->levels |= 1u << p->u[NS_P_DETAIL_LEVEL];
    if (p->has[NS_P_DETAIL_REASON] && p->u[NS_P_DETAIL_REASON] < NS_DETAIL_WHY_COUNT) d->changes[p->u[NS_P_DETAIL_REASON]]++;
  } else if (it->kind == NS_ITEM_COUNTERS && p->has[NS_P_DETAIL_SWITCHES]) {
    d->switches += p->u[NS_P_DETAIL_SWITCHES];
    d->escalations += p->u[NS_P_DETAIL_ESCALATIONS];
    d->full_ns += p->u[NS_P_DETAIL_FULL_NS];
    d->counted++;
  }
}

void ns_detail_op(ns_report_detail* d, const ns_op_result* op) {
  d->ops++;
  d->ops_gpu += ns_basis_is_gpu(op->basis);
}

static void levels_text(const ns_report_detail* d, FILE* out) {
  int first = 1;
  for (int l = 0; l < 3; l++)
    if (d->levels & (1u << l)) fprintf(out, "%s%s", first ? "" : ", ", level_names[l]), first = 0;
  if (first) fputs("full (no DETAIL block: traces before format 1.2, or written by another tool)", out);
}

void ns_detail_text(const ns_report_detail* d, FILE* out) {
  fputs("# detail: ", out);
  levels_text(d, out);
  if (d->traces_with_detail < d->traces && d->levels)
    fprintf(out, " (%llu of %llu traces say)", (unsigned long long)d->traces_with_detail,
            (unsigned long long)d->traces);
  fprintf(out, "; GPU times for %llu of %llu operations (%.1f %%)", (unsigned long long)d->ops_gpu,
          (unsigned long long)d->ops, d->ops ? 100.0 * (double)d->ops_gpu / (double)d->ops : 0.0);
  if (d->escalations || d->changes[NS_DETAIL_WHY_SAMPLE]) {
    fprintf(out, "; %llu escalation(s) to full detail", (unsigned long long)d->escalations);
    const char* sep = " (";
    for (int w = NS_DETAIL_WHY_INFLIGHT; w <= NS_DETAIL_WHY_SIGNAL; w++)
      if (d->changes[w]) fprintf(out, "%s%s %llu", sep, why_names[w], (unsigned long long)d->changes[w]), sep = ", ";
    if (*sep == ',') fputc(')', out);
    fprintf(out, ", %llu mask change(s), %.1f s of full detail over %llu process(es)", (unsigned long long)d->switches,
            (double)d->full_ns / 1e9, (unsigned long long)d->counted);
  }
  fputs("\n\n", out);
}

void ns_detail_json(const ns_report_detail* d, ns_json* j) {
  nsj_obj_begin(j);
  nsj_key(j, "levels");
  nsj_arr_begin(j);
  for (int l = 0; l < 3; l++)
    if (d->levels & (1u << l)) nsj_str(j, level_names[l]);
  nsj_arr_end(j);
  nsj_ku64(j, "traces", d->traces);
  nsj_ku64(j, "tracesWithDetailBlocks", d->traces_with_detail);
  nsj_key(j, "changes");
  nsj_obj_begin(j);
  for (int w = 0; w < NS_DETAIL_WHY_COUNT; w++) nsj_ku64(j, why_names[w], d->changes[w]);
  nsj_obj_end(j);
  nsj_ku64(j, "maskChanges", d->switches);
  nsj_ku64(j, "escalations", d->escalations);
  nsj_ku64(j, "fullDetailNs", d->full_ns);
  nsj_ku64(j, "ops", d->ops);
  nsj_ku64(j, "opsGpuTimed", d->ops_gpu);
  nsj_obj_end(j);
}
