/* SPDX-License-Identifier: Apache-2.0 */
/* The table of NCCLSCOPE_* variables as the build sees it, one row a line
 * (name, kind, default, low, high, default as documented, 1 when the
 * ncclscope command reads it and not the plugin; tab-separated),
 * for check_config_docs.py. */
#include <stdio.h>

#include "ncclscope/config_vars.h"

int main(void) {
  static const char* const kind[] = {"u32", "u64", "seconds", "seconds_off", "bool", "own"};
  const ns_config_var* v = ns_config_vars();
  for (int i = 0; i < NS_CFG_COUNT; i++)
    printf("%s\t%s\t%.17g\t%.17g\t%.17g\t%s\t%d\n", v[i].name, kind[v[i].kind], v[i].def, v[i].lo, v[i].hi,
           v[i].def_text, v[i].cli);
  return 0;
}
