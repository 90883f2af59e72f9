/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the NCCLSCOPE_* numbers the command reads (the NS_CONFIG_CLI
 * rows of ncclscope/config_vars.def, and the plugin's rows the CLI's
 * analysis shares), by the plugin's rules: a value the row's kind or range
 * refuses gets one warning on stderr, naming it and the default used. */
#ifndef NCCLSCOPE_TOOLS_CLI_VARS_H
#define NCCLSCOPE_TOOLS_CLI_VARS_H

/* The value of row `index` (NS_CFG_<NAME>) as a double: the environment's
 * when taken, else the row's default (and a warning). Reads the environment
 * at each call: call it once per use. */
double ns_cli_var(int index);

#endif
