/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP resource of each exported resource (the
 * process, or one communicator rank): who measured, shared by the JSON and
 * protobuf encoders, named by OpenTelemetry's semantic conventions where
 * they have a name (service.*, host.name, process.*). Writer thread.
 * Attributes set here win over OTEL_RESOURCE_ATTRIBUTES pairs of the same
 * key, which are added after. */
#include <stdio.h>
#include <string.h>

#include "sinks/outputs.h"

static ns_mattr* next(ns_mattr* out, size_t* n, size_t cap, const char* key) {
  if (*n >= cap) return NULL;
  for (size_t i = 0; i < *n; i++)
    if (strcmp(out[i].key, key) == 0) return NULL; /* ours came first */
  ns_mattr* a = &out[(*n)++];
  memset(a, 0, sizeof *a);
  a->key = key;
  return a;
}

static void str(ns_mattr* out, size_t* n, size_t cap, const char* key, const char* v) {
  ns_mattr* a = next(out, n, cap, key);
  if (a) snprintf(a->s, sizeof a->s, "%s", v);
}

static void num(ns_mattr* out, size_t* n, size_t cap, const char* key, int64_t v) {
  ns_mattr* a = next(out, n, cap, key);
  if (a) a->is_int = 1, a->i = v;
}

size_t ns_otlp_resource(const ns_metrics* m, const ns_mprocess* p, size_t res, ns_mattr* out, size_t cap) {
  size_t n = 0;
  const ns_mres* r = ns_metrics_res(m, res);
  str(out, &n, cap, "service.name", p->service_name ? p->service_name : "ncclscope");
  str(out, &n, cap, "service.version", p->version ? p->version : "");
  str(out, &n, cap, "host.name", p->host ? p->host : "");
  num(out, &n, cap, "process.pid", p->pid);
  if (p->executable && *p->executable) str(out, &n, cap, "process.executable.name", p->executable);
  if (p->slurm_job && *p->slurm_job) str(out, &n, cap, "slurm.job.id", p->slurm_job);
  if (p->local_rank >= 0) num(out, &n, cap, "nccl.local_rank", p->local_rank);
  if (r && res > 0) {
    str(out, &n, cap, "nccl.comm.hash", r->comm_hex);
    num(out, &n, cap, "nccl.rank", r->rank);
    num(out, &n, cap, "nccl.comm.nranks", r->nranks);
    if (r->uuid[0]) str(out, &n, cap, "gpu.uuid", r->uuid);
  }
  for (unsigned i = 0; i < p->nattrs; i++) str(out, &n, cap, p->attr_key[i], p->attr_val[i]);
  return n;
}

const char* ns_otlp_attr_key(const char* label, int* is_int) {
  static const struct {
    const char *label, *key;
    int is_int;
  } map[] = {{"type", "nccl.op.type", 0}, {"func", "nccl.func", 0},   {"size", "nccl.size.bucket", 1},
             {"peer", "nccl.peer", 1},    {"channel", "nccl.channel", 1}, {"reason", "reason", 0},
             {"result", "result", 0}, {"seq", "nccl.seq", 1}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(map[i].label, label) == 0) {
      *is_int = map[i].is_int;
      return map[i].key;
    }
  *is_int = 0;
  return label;
}

int ns_otlp_has_points(const ns_mfamily* fam, uint32_t res) {
  for (size_t i = 0; i < fam->n; i++)
    if (fam->p[i].res == res) return 1;
  return 0;
}
