/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope analysis: the communicators an analysis knows, by serial; the
 * GPUs their kernels run on, each with one clock fit; and the clock queries.
 * Runs on the thread that owns the ns_analysis. */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/array.h"

ns_comm_state* ns_an_comm(ns_analysis* a, uint32_t comm, int create) {
  if (comm < a->ncomms && a->comms[comm]) return a->comms[comm];
  if (!create || comm > (1u << 24)) return NULL;
  ns_comm_state** grown = ns_array_reach(a->comms, &a->ncomms, comm, sizeof *grown, 8);
  if (!grown) return NULL;
  a->comms = grown;
  ns_comm_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->comm = comm;
  s->rank = -1;
  s->gpu = -1;
  a->comms[comm] = s;
  return s;
}

/* After ns_pt_comms_free, which releases what the judgments keep in each comm state. */
void ns_an_comms_free(ns_analysis* a) {
  for (size_t i = 0; i < a->ncomms; i++) free(a->comms[i]);
  free(a->comms);
  for (size_t i = 0; i < a->ngpus; i++) {
    ns_cf_free(&a->gpus[i]->clock);
    free(a->gpus[i]);
  }
  free(a->gpus);
  a->comms = NULL;
  a->gpus = NULL;
  a->ncomms = a->ngpus = 0;
}

void ns_analysis_comm(ns_analysis* a, const ns_comm_info* ci) {
  ns_comm_state* s = ns_an_comm(a, ci->comm, 1);
  if (!s) return;
  s->known = 1;
  s->comm_id = ci->comm_id;
  s->rank = ci->rank;
  s->nranks = ci->nranks;
  if (ci->has_name) {
    size_t len = strnlen(ci->comm_name, sizeof s->name - 1);
    memcpy(s->name, ci->comm_name, len);
    s->name[len] = '\0';
  }
  size_t len = strnlen(ci->gpu_uuid, sizeof s->uuid - 1);
  memcpy(s->uuid, ci->gpu_uuid, len);
  s->uuid[len] = '\0';
  if (!a->owns_as) return; /* the assembler's owner tells it (ns_analysis_create_on) */
  ns_asm_comm(a->as, ci->comm, ci->event_mask, ci->abi_version);
  ns_asm_comm_rank(a->as, ci->comm, ci->rank);
}

/* ---- GPUs ---- */

ns_clockfit* ns_an_clock(ns_analysis* a, const ns_comm_state* cs) {
  return cs && cs->gpu >= 0 && (size_t)cs->gpu < a->ngpus ? &a->gpus[cs->gpu]->clock : NULL;
}

ns_clockfit* ns_an_clock_at_kch(ns_analysis* a, ns_comm_state* cs, uint64_t ring, uint32_t tid) {
  if (cs->gpu >= 0) return ns_an_clock(a, cs);
  for (size_t i = 0; i < a->ngpus; i++) {
    const ns_gpu_state* g = a->gpus[i];
    if (cs->uuid[0] ? strcmp(g->uuid, cs->uuid) == 0 : !g->uuid[0] && g->ring == ring) {
      cs->gpu = (int)i;
      return &a->gpus[i]->clock;
    }
  }
  ns_gpu_state** ng = realloc(a->gpus, (a->ngpus + 1) * sizeof *ng);
  if (!ng) return NULL;
  a->gpus = ng;
  ns_gpu_state* g = calloc(1, sizeof *g);
  if (!g) return NULL;
  if (ns_cf_init(&g->clock, a->cfg.timer_quantum_ns, a->cfg.max_drift_ppm, a->cfg.clock_slack_ns,
                 a->cfg.clock_max_age_sec) != 0) {
    free(g);
    return NULL;
  }
  memcpy(g->uuid, cs->uuid, sizeof g->uuid);
  g->ring = ring;
  g->proxy_tid = tid;
  cs->gpu = (int)a->ngpus;
  a->gpus[a->ngpus++] = g;
  return &g->clock;
}

/* ---- clock queries ---- */
int ns_analysis_clock_fit(ns_analysis* a, uint32_t comm, ns_clock_fit* out) {
  memset(out, 0, sizeof *out);
  ns_comm_state* s = ns_an_comm(a, comm, 0);
  const ns_clockfit* cf = ns_an_clock(a, s);
  if (!cf) return 0;
  ns_cf_get(cf, out);
  for (int r = NS_PT_OWN + 1; r < NS_PT_REASONS; r++) out->ops_foreign += s->pt.verdicts[r];
  return out->valid;
}

int ns_analysis_gpu_to_cpu(ns_analysis* a, uint32_t comm, uint64_t ptimer, uint64_t* cpu_ns, double* err_ns) {
  const ns_clockfit* cf = ns_an_clock(a, ns_an_comm(a, comm, 0));
  return cf ? ns_cf_convert(cf, ptimer, cpu_ns, err_ns) : 0;
}
