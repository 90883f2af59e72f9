/* ncclscope analysis: the communicators an analysis knows, by serial, with
 * their GPU clock fit, and the clock queries on them. Runs on the thread
 * that owns the ns_analysis. */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

ns_comm_state* ns_an_comm(ns_analysis* a, uint32_t comm, int create) {
  if (comm < a->ncomms && a->comms[comm]) return a->comms[comm];
  if (!create || comm > (1u << 24)) return NULL;
  if (comm >= a->ncomms) {
    size_t n = a->ncomms ? a->ncomms : 8;
    while (n <= comm) n *= 2;
    ns_comm_state** c = realloc(a->comms, n * sizeof *c);
    if (!c) return NULL;
    memset(c + a->ncomms, 0, (n - a->ncomms) * sizeof *c);
    a->comms = c;
    a->ncomms = n;
  }
  ns_comm_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->comm = comm;
  s->rank = -1;
  if (ns_cf_init(&s->clock, a->cfg.timer_quantum_ns, a->cfg.max_drift_ppm, a->cfg.clock_slack_ns,
                 a->cfg.clock_max_age_sec) != 0) {
    free(s);
    return NULL;
  }
  a->comms[comm] = s;
  return s;
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
  ns_asm_comm(a->as, ci->comm, ci->event_mask, ci->abi_version);
  ns_asm_comm_rank(a->as, ci->comm, ci->rank);
}

/* ---- clock queries ---- */
int ns_analysis_clock_fit(ns_analysis* a, uint32_t comm, ns_clock_fit* out) {
  memset(out, 0, sizeof *out);
  ns_comm_state* s = ns_an_comm(a, comm, 0);
  if (!s) return 0;
  ns_cf_get(&s->clock, out);
  return out->valid;
}

int ns_analysis_gpu_to_cpu(ns_analysis* a, uint32_t comm, uint64_t ptimer, uint64_t* cpu_ns, double* err_ns) {
  ns_comm_state* s = ns_an_comm(a, comm, 0);
  if (!s) return 0;
  return ns_cf_convert(&s->clock, ptimer, cpu_ns, err_ns);
}
