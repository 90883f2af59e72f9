/* SPDX-License-Identifier: Apache-2.0 */
/* The job identity (src/config/identity.h), read in one place for the
 * metrics' job_id label, the OTLP resource, the trace's PROCESS block and the
 * default dump directory: which variable wins, when Kubernetes' JOB_NAME
 * counts, what becomes of bytes that are not UTF-8, and of a name the dump
 * directory cannot take as it is (a warning says what is used). */
#include "../check.h"

#include "config/config.h"
#include "config/identity.h"

static const char* const kVars[] = {"NCCLSCOPE_JOB_NAME", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_NAME",
                                    "KUBERNETES_SERVICE_HOST", "NCCLSCOPE_DUMP_DIR"};

static void clear(void) {
  for (size_t i = 0; i < sizeof kVars / sizeof kVars[0]; i++) unsetenv(kVars[i]);
}

static char warnings[4][700];
static int nwarnings;

static void capture(const char* line) {
  if (nwarnings < 4) snprintf(warnings[nwarnings], sizeof warnings[0], "%s", line);
  nwarnings++;
}

/* ns_config_load with NCCLSCOPE_JOB_NAME=name; its warnings in warnings[]. */
static void load_named(ns_config* c, const char* name) {
  setenv("NCCLSCOPE_JOB_NAME", name, 1);
  nwarnings = 0;
  ns_config_load(c, capture);
}

int main(void) {
  ns_job_identity j;
  clear();
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "");
  CHECK_STR(j.source, "");
  CHECK_STR(j.slurm_job, "");

  /* JOB_NAME alone is no job: only a pod spec under Kubernetes sets it for one */
  setenv("JOB_NAME", "k8s-train", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "");
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "k8s-train");
  CHECK_STR(j.source, "JOB_NAME");

  setenv("TORCHELASTIC_RUN_ID", "te-7", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "te-7");
  CHECK_STR(j.source, "TORCHELASTIC_RUN_ID");

  setenv("SLURM_JOB_ID", "4242", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "4242");
  CHECK_STR(j.source, "SLURM_JOB_ID");
  CHECK_STR(j.slurm_job, "4242");

  /* the name given wins; SLURM's job id is still known for the trace */
  setenv("NCCLSCOPE_JOB_NAME", "llama \"7b\"\\run", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "llama \"7b\"\\run");
  CHECK_STR(j.source, "NCCLSCOPE_JOB_NAME");
  CHECK_STR(j.slurm_job, "4242");

  /* an empty value is unset */
  setenv("NCCLSCOPE_JOB_NAME", "", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "4242");

  /* not UTF-8: a lone continuation byte, an overlong '/', a surrogate, a truncated sequence; valid ones stay */
  setenv("NCCLSCOPE_JOB_NAME", "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xc3\xa9" "e\xe2\x82", 1);
  ns_job_identity_read(&j);
  CHECK_STR(j.id, "a?b??c???d\xc3\xa9" "e??");

  /* at most NS_JOB_ID_MAX - 1 bytes, whole characters: 200 x "é" keeps 63 of them */
  char longname[401];
  for (int i = 0; i < 200; i++) memcpy(longname + 2 * i, "\xc3\xa9", 2);
  longname[400] = 0;
  setenv("NCCLSCOPE_JOB_NAME", longname, 1);
  ns_job_identity_read(&j);
  CHECK_U64(strlen(j.id), 126);
  CHECK_TRUE(memcmp(j.id, longname, 126) == 0);

  /* the default dump directory follows the job id where it makes a file name */
  ns_config c;
  load_named(&c, "run-12");
  CHECK_STR(c.dump_dir, "./ncclscope-run-12");
  CHECK_STR(c.job.id, "run-12");
  CHECK_U64(nwarnings, 0);
  /* '/' and control characters: '_' in the directory's name, said once; the label keeps the name */
  load_named(&c, "team/llama/run-3");
  CHECK_STR(c.dump_dir, "./ncclscope-team_llama_run-3");
  CHECK_STR(c.job.id, "team/llama/run-3");
  CHECK_U64(nwarnings, 1);
  CHECK_STR(warnings[0],
            "NCCLSCOPE_JOB_NAME=\"team/llama/run-3\" has a '/' or a control character, which a directory "
            "name cannot hold; using the dump directory ./ncclscope-team_llama_run-3 ('_' for each; the "
            "job_id label keeps the name as given)");
  load_named(&c, "two\nlines");
  CHECK_STR(c.dump_dir, "./ncclscope-two_lines");
  CHECK_U64(nwarnings, 1);
  CHECK_TRUE(strstr(warnings[0], "NCCLSCOPE_JOB_NAME=\"two\\x0alines\" has a '/'") == warnings[0]);
  /* too long for a name: the process start, said too */
  char name64[65];
  memset(name64, 'j', 64);
  name64[64] = 0;
  load_named(&c, name64);
  static const char stamped[] = "./ncclscope-YYYYmmdd-HHMMSS";
  CHECK_TRUE(strncmp(c.dump_dir, "./ncclscope-20", 14) == 0 && strlen(c.dump_dir) == strlen(stamped));
  CHECK_STR(c.job.id, name64);
  CHECK_U64(nwarnings, 1);
  CHECK_TRUE(strstr(warnings[0],
                    "is 64 bytes or longer, too long for the dump directory's name; using the dump "
                    "directory ./ncclscope-20") != NULL);
  /* the name from another variable is named as that variable */
  clear();
  setenv("TORCHELASTIC_RUN_ID", "te/8", 1);
  nwarnings = 0;
  ns_config_load(&c, capture);
  CHECK_STR(c.dump_dir, "./ncclscope-te_8");
  CHECK_U64(nwarnings, 1);
  CHECK_TRUE(strncmp(warnings[0], "TORCHELASTIC_RUN_ID=\"te/8\" has a '/'", 36) == 0);
  /* with NCCLSCOPE_DUMP_DIR set the name makes no directory: nothing to say */
  setenv("NCCLSCOPE_DUMP_DIR", "/tmp/d", 1);
  load_named(&c, "a/b");
  CHECK_STR(c.dump_dir, "/tmp/d");
  CHECK_U64(nwarnings, 0);
  clear();
  CHECK_DONE();
}
