/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the NCCLSCOPE_* variables that exist, so a misspelt one is
 * named rather than ignored (cold: the first init of a session). The names
 * are ncclscope/config_vars.def's rows: every NCCLSCOPE_* variable read
 * anywhere (the plugin, the CLI, the analysis the CLI shares). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/warn.h"
#include "ncclscope/config_vars.h"

extern char** environ;

int ns_config_known(const char* name, size_t len) {
  const ns_config_var* vars = ns_config_vars();
  for (int i = 0; i < NS_CFG_COUNT; i++)
    if (strlen(vars[i].name) == len && memcmp(vars[i].name, name, len) == 0) return 1;
  return 0;
}

/* Levenshtein distance between a[0..n) and b (case-insensitive), capped
 * at 99; names are short, so a row of 64 is enough (longer ones: cap). */
static unsigned distance(const char* a, size_t n, const char* b) {
  enum { MAX = 64 };
  size_t m = strlen(b);
  if (n >= MAX || m >= MAX) return 99;
  unsigned row[MAX + 1];
  for (size_t j = 0; j <= m; j++) row[j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++) {
    unsigned diag = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= m; j++) {
      unsigned up = row[j];
      unsigned same = toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 1]);
      unsigned best = diag + !same;
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

/* Ties go to the name first in alphabetical order, whatever the table's order. */
const char* ns_config_closest(const char* name, size_t len) {
  const ns_config_var* vars = ns_config_vars();
  const char* best = vars[0].name;
  unsigned best_d = distance(name, len, best);
  for (int i = 1; i < NS_CFG_COUNT; i++) {
    unsigned d = distance(name, len, vars[i].name);
    if (d < best_d || (d == best_d && strcmp(vars[i].name, best) < 0)) best = vars[i].name, best_d = d;
  }
  return best;
}

void ns_config_warn_unknown(ns_config_warn_fn warn) {
  static const char prefix[] = "NCCLSCOPE_";
  if (!warn || !environ) return;
  for (char** e = environ; *e; e++) {
    if (strncmp(*e, prefix, sizeof prefix - 1) != 0) continue;
    const char* eq = strchr(*e, '=');
    size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
    if (ns_config_known(*e, len)) continue;
    char name[128], esc[400], line[600];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name - 1 ? len : sizeof name - 1), *e);
    ns_config_escape(name, esc, sizeof esc);
    snprintf(line, sizeof line, "%s is not a variable ncclscope knows, ignored; the closest one is %s", esc,
             ns_config_closest(*e, len));
    warn(line);
  }
}
