/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the job identity (identity.h). Cold: read once per session. */
#include "config/identity.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

/* s as valid UTF-8 into out (cap bytes with the NUL), whole characters
 * only; each byte outside a well-formed sequence becomes '?'. */
static void copy_utf8(char* out, size_t cap, const char* s) {
  size_t at = 0, left = strlen(s);
  const unsigned char* p = (const unsigned char*)s;
  while (left) {
    size_t n = ns_utf8_len(p, left);
    if (at + (n ? n : 1) >= cap) break;
    if (n) {
      memcpy(out + at, p, n);
      at += n;
    } else {
      out[at++] = '?';
      n = 1;
    }
    p += n;
    left -= n;
  }
  out[at] = 0;
}

void ns_job_identity_read(ns_job_identity* out) {
  static const char* const vars[] = {"NCCLSCOPE_JOB_NAME", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_NAME"};
  enum { SLURM = 1, K8S_JOB = 3 };
  memset(out, 0, sizeof *out);
  out->source = "";
  const char* slurm = getenv(vars[SLURM]);
  if (slurm && *slurm) copy_utf8(out->slurm_job, sizeof out->slurm_job, slurm);
  const char* k8s = getenv("KUBERNETES_SERVICE_HOST");
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    if (i == K8S_JOB && !(k8s && *k8s)) break; /* JOB_NAME means a job only where a pod spec sets it */
    const char* v = i == SLURM ? slurm : getenv(vars[i]);
    if (!v || !*v) continue;
    copy_utf8(out->id, sizeof out->id, v);
    out->source = vars[i];
    return;
  }
}
