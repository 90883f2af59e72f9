/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: which job the process belongs to, read from the environment in
 * this one place (the metrics' job_id label, the OTLP resource, the trace's
 * PROCESS block, the default dump directory). */
#ifndef NCCLSCOPE_CONFIG_IDENTITY_H
#define NCCLSCOPE_CONFIG_IDENTITY_H

#define NS_JOB_ID_MAX 128

typedef struct {
  /* The first set of: NCCLSCOPE_JOB_NAME, SLURM_JOB_ID, TORCHELASTIC_RUN_ID,
   * and under Kubernetes (KUBERNETES_SERVICE_HOST set) JOB_NAME; "" none.
   * Valid UTF-8 (an invalid byte becomes '?'), at most NS_JOB_ID_MAX - 1
   * bytes; other characters are kept: each output escapes them its way. */
  char id[NS_JOB_ID_MAX];
  const char* source; /* the variable id came from, "" none */
  char slurm_job[64]; /* SLURM_JOB_ID on its own (the trace records it), "" none */
} ns_job_identity;

void ns_job_identity_read(ns_job_identity* out);

#endif
