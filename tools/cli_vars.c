/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: NCCLSCOPE_* numbers read with the plugin's rules (cli_vars.h).
 * Single-threaded. */
#include "cli_vars.h"

#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "ncclscope/config_vars.h"

static void warn_stderr(const char* line) { fprintf(stderr, "ncclscope: warning: %s\n", line); }

double ns_cli_var(int index) {
  if (index < 0 || index >= NS_CFG_COUNT) return 0;
  const ns_config_var* v = &ns_config_vars()[index];
  union {
    uint32_t u32;
    uint64_t u64;
    double seconds;
    int on;
  } field;
  ns_config_read_number(warn_stderr, v, &field);
  switch (v->kind) {
  case NS_VAR_U32: return field.u32;
  case NS_VAR_U64: return (double)field.u64;
  case NS_VAR_SECONDS:
  case NS_VAR_SECONDS_OFF: return field.seconds;
  case NS_VAR_BOOL: return field.on;
  case NS_VAR_OWN: break; /* a syntax of its own: not a number */
  }
  return 0;
}
