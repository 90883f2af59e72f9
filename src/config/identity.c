/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the job identity (identity.h). Cold: read once per session. */
#include "config/identity.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), 0 if none starts there. */
static size_t utf8_len(const unsigned char* s) {
  if (s[0] < 0x80) return 1;
  size_t n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0; /* overlong, surrogate */
  if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0; /* overlong, > U+10FFFF */
  return n;
}

/* s as valid UTF-8 into out (cap bytes with the NUL), whole characters only. */
static void copy_utf8(char* out, size_t cap, const char* s) {
  size_t at = 0;
  const unsigned char* p = (const unsigned char*)s;
  while (*p) {
    size_t n = utf8_len(p);
    if (at + (n ? n : 1) >= cap) break;
    if (n) {
      memcpy(out + at, p, n);
      at += n;
      p += n;
    } else {
      out[at++] = '?';
      p++;
    }
  }
  out[at] = 0;
}

void ns_job_identity_read(ns_job_identity* out) {
  memset(out, 0, sizeof *out);
  out->source = "";
  const char* slurm = getenv("SLURM_JOB_ID");
  if (slurm && *slurm) copy_utf8(out->slurm_job, sizeof out->slurm_job, slurm);
  static const char* const vars[] = {"NCCLSCOPE_JOB_NAME", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_NAME"};
  const char* k8s = getenv("KUBERNETES_SERVICE_HOST");
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    if (i == 3 && !(k8s && *k8s)) break; /* JOB_NAME means a job only where a pod spec sets it */
    const char* v = getenv(vars[i]);
    if (!v || !*v) continue;
    copy_utf8(out->id, sizeof out->id, v);
    out->source = vars[i];
    return;
  }
}
