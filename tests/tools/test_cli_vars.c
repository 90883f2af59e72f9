/* SPDX-License-Identifier: Apache-2.0 */
/* tools/cli_vars.c: the command's NCCLSCOPE_* numbers (the table's
 * NS_CONFIG_CLI rows) at their bounds and past them (one warning on stderr
 * naming the value and the default, which is then used), and the plugin's
 * rows the command's analysis shares read exactly as the plugin reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli_vars.h"
#include "config/config.h"
#include "ncclscope/config_vars.h"

static char said[4096]; /* what ns_cli_var wrote on stderr */

/* ns_cli_var(i) with only `name`=value set (NULL: unset), stderr captured. */
static double read_var(int i, const char* value) {
  const ns_config_var* v = &ns_config_vars()[i];
  if (value)
    setenv(v->name, value, 1);
  else
    unsetenv(v->name);
  fflush(stderr);
  FILE* tmp = tmpfile();
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  double got = ns_cli_var(i);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(said, 1, sizeof said - 1, tmp);
  said[n] = '\0';
  fclose(tmp);
  unsetenv(v->name);
  return got;
}

static void expect_taken(int i, const char* value, double want) {
  CHECK_NEAR(read_var(i, value), want, 0);
  if (said[0]) fprintf(stderr, "%s=%s: unexpected: %s", ns_config_vars()[i].name, value, said);
  CHECK_U64(strlen(said), 0);
}

static void expect_refused(int i, const char* value, const char* shown) {
  const ns_config_var* v = &ns_config_vars()[i];
  char want[512];
  snprintf(want, sizeof want,
           "ncclscope: warning: %s=\"%s\" is not a number in [%.0f, %.0f] (decimal, or hex with 0x); using the "
           "default %.0f\n",
           v->name, shown, v->lo, v->hi, v->def);
  CHECK_NEAR(read_var(i, value), v->def, 0);
  CHECK_STR(said, want);
}

static void test_cli_rows(void) {
  int rows = 0;
  for (int i = 0; i < NS_CFG_COUNT; i++) {
    const ns_config_var* v = &ns_config_vars()[i];
    if (!v->cli) continue;
    CHECK_TRUE(v->kind == NS_VAR_U32); /* the kinds the cases below are written for */
    char val[64];
    expect_taken(i, NULL, v->def);
    expect_taken(i, "", v->def);
    snprintf(val, sizeof val, "%.0f", v->lo);
    expect_taken(i, val, v->lo);
    snprintf(val, sizeof val, " %.0f ", v->hi);
    expect_taken(i, val, v->hi);
    snprintf(val, sizeof val, "%.0f", v->hi + 1);
    expect_refused(i, val, val);
    if (v->lo > 0) {
      snprintf(val, sizeof val, "%.0f", v->lo - 1);
      expect_refused(i, val, val);
    }
    expect_refused(i, "-1", "-1");
    expect_refused(i, "12k", "12k");
    expect_refused(i, " ", " ");
    rows++;
  }
  CHECK_U64(rows, 3); /* PROGRESS_MS, CHROME_WARN_MB, MERGE_MAX_MB */
}

/* NCCLSCOPE_WINDOW_SEC/_OPS: what `report` reads is what the plugin reads. */
static void test_shared_rows(void) {
  static const char* const secs[] = {"2.5", "0.001", "0.0005", "86400", "86401", "0x1p-3", "1e-2", " 3 ", "nan", "-1"};
  static const char* const ops[] = {"100", "0x10", "0100", "1073741824", "1073741825", "-5", "7x", "+8", " "};
  for (size_t k = 0; k < sizeof secs / sizeof secs[0]; k++) {
    ns_config c;
    setenv("NCCLSCOPE_WINDOW_SEC", secs[k], 1);
    ns_config_load(&c, NULL);
    CHECK_NEAR(read_var(NS_CFG_NCCLSCOPE_WINDOW_SEC, secs[k]), c.window_sec, 0);
  }
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    ns_config c;
    setenv("NCCLSCOPE_WINDOW_OPS", ops[k], 1);
    ns_config_load(&c, NULL);
    CHECK_NEAR(read_var(NS_CFG_NCCLSCOPE_WINDOW_OPS, ops[k]), (double)c.window_ops, 0);
  }
  read_var(NS_CFG_NCCLSCOPE_WINDOW_OPS, "7x");
  CHECK_TRUE(strstr(said, "NCCLSCOPE_WINDOW_OPS=\"7x\" is not a number") != NULL);
}

int main(void) {
  test_cli_rows();
  test_shared_rows();
  CHECK_DONE();
}
