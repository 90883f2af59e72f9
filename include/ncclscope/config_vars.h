/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the NCCLSCOPE_* variables as data (config_vars.def): name,
 * kind, default, range and a doc line. The plugin's configuration
 * (src/config), its list of known names and the analysis the CLI runs
 * (NCCLSCOPE_WINDOW_SEC, _OPS) all read this one table. */
#ifndef NCCLSCOPE_CONFIG_VARS_H
#define NCCLSCOPE_CONFIG_VARS_H

typedef enum {
  NS_VAR_U32,         /* a count in [lo, hi]: decimal, or hex with 0x */
  NS_VAR_U64,         /* the same, into a 64-bit field */
  NS_VAR_SECONDS,     /* decimal seconds in [lo, hi] */
  NS_VAR_SECONDS_OFF, /* the same, or 0: off */
  NS_VAR_BOOL,        /* 1/0, true/false, yes/no, on/off */
  NS_VAR_OWN,         /* a syntax of its own (its loader in src/config/config.c) */
} ns_config_var_kind;

typedef struct {
  const char* name;
  ns_config_var_kind kind;
  double def, lo, hi;   /* numbers and switches only */
  const char* def_text; /* the default as the documentation writes it */
  const char* doc;
  int cli; /* read by the ncclscope command (tools/cli_vars.c), not by the plugin */
} ns_config_var;

/* NS_CFG_<NAME>: a variable's index in ns_config_vars(). */
enum {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc) NS_CFG_##name,
#define NS_CONFIG_OWN(name, type, field, def, doc) NS_CFG_##name,
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc) NS_CFG_##name,
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
  NS_CFG_COUNT
};

/* The table, NS_CFG_COUNT rows, in config_vars.def's order. A number's
 * def_text is its default as the table spells it. */
static inline const ns_config_var* ns_config_vars(void) {
  static const ns_config_var vars[NS_CFG_COUNT] = {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc) {#name, NS_VAR_##kind, def, lo, hi, #def, doc, 0},
#define NS_CONFIG_OWN(name, type, field, def, doc) {#name, NS_VAR_OWN, 0, 0, 0, def, doc, 0},
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc) {#name, NS_VAR_##kind, def, lo, hi, #def, doc, 1},
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
  };
  return vars;
}

#endif
