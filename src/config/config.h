/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: configuration from the environment, read once per session by
 * the first init. Every variable is validated; a bad value gives one warning
 * line (to the caller's sink) naming the variable, the value as found
 * (escaped: no control character reaches a log) and the value used. */
#ifndef NCCLSCOPE_CONFIG_H
#define NCCLSCOPE_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "config/identity.h"
#include "config/otel.h"
#include "config/warn.h"
#include "ncclscope/config_vars.h"
#include "ncclscope/record.h"

/* Default mask: every type except ProxyCtrl (proxy-thread sleep/wake
 * bookkeeping: frequent and rarely useful) and NetPlugin (one event per
 * network work request: the most voluminous type). */
#define NS_DEFAULT_EVENT_MASK (NS_EV_ALL_MASK & ~((1u << NS_EV_PROXY_CTRL) | (1u << NS_EV_NET_PLUGIN)))
/* Detail levels (NCCLSCOPE_DETAIL). The event types NCCL pays for per
 * operation, beyond our own calls: KernelCh (the kernel writes timestamps and
 * every operation, NVLink-only ones too, gets profiler proxy ops), ProxyStep
 * (calls per network step), ProxyCtrl (per proxy loop), NetPlugin (per
 * network request) and KernelPhase (v7: the kernel writes phase timestamps
 * behind a system fence; NCCL 2.31.2 already does so for KernelCh alone, so
 * there KernelCh costs what KernelPhase does). `ops` leaves them out of NCCL's mask, `full` keeps the
 * whole configured mask, `sampled` is `ops` with `full` for NCCLSCOPE_SAMPLE_MS
 * of every second. */
#define NS_DETAIL_EVENT_BITS                                                                                  \
  ((1u << NS_EV_PROXY_STEP) | (1u << NS_EV_PROXY_CTRL) | (1u << NS_EV_KERNEL_CH) | (1u << NS_EV_NET_PLUGIN) | \
   (1u << NS_EV_KERNEL_PHASE))
typedef enum { NS_DETAIL_OPS = 0, NS_DETAIL_SAMPLED = 1, NS_DETAIL_FULL = 2 } ns_detail_level;
/* full by default: the watchdog sees an operation hang only through its
 * KernelCh (and ProxySteps), and only KernelCh gives GPU times (README,
 * "What it costs your job"). */
#define NS_DETAIL_DEFAULT NS_DETAIL_FULL
/* The defaults of NCCLSCOPE_WINDOW_SEC and NCCLSCOPE_MAX_SERIES, for the
 * writer's fallbacks (the table: ncclscope/config_vars.def). */
#define NS_WINDOW_SEC_DEFAULT (ns_config_vars()[NS_CFG_NCCLSCOPE_WINDOW_SEC].def)
#define NS_MAX_SERIES_DEFAULT ((uint32_t)ns_config_vars()[NS_CFG_NCCLSCOPE_MAX_SERIES].def)

/* The field types of the table's kinds (ncclscope/config_vars.def). */
#define NS_CONFIG_TYPE_U32 uint32_t
#define NS_CONFIG_TYPE_U64 uint64_t
#define NS_CONFIG_TYPE_SECONDS double     /* seconds */
#define NS_CONFIG_TYPE_SECONDS_OFF double /* seconds; 0 = off */
#define NS_CONFIG_TYPE_BOOL int
typedef char ns_config_path[PATH_MAX];

/* One field per plugin row of ncclscope/config_vars.def, in its order, named
 * and typed there (what each means: the row's doc string). The fields of
 * NS_CONFIG_OWN rows, set by config.c's loaders, besides the variable itself:
 * event_mask, the mask of full detail (NCCLSCOPE_EVENT_MASK, else NCCL's
 * NCCL_PROFILE_EVENT_MASK, else the default); force_mono, 1 when
 * NCCLSCOPE_CLOCK=monotonic (never the TSC); otel, the OTEL_* variables too
 * (otel.c); job, the launcher's job id variables too (identity.c). */
typedef struct {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc) NS_CONFIG_TYPE_##kind field;
#define NS_CONFIG_OWN(name, type, field, def, doc) type field;
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc)
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
} ns_config;

void ns_config_load(ns_config* c, ns_config_warn_fn warn);
/* One number or switch of the table (an NS_CONFIG_NUM or NS_CONFIG_CLI row)
 * into *field, of its kind's type (uint32_t, uint64_t, double, int): the
 * default, then the environment's value where the row's rules take it; a
 * value they refuse gets one warning through warn and leaves the default. */
void ns_config_read_number(ns_config_warn_fn warn, const ns_config_var* v, void* field);
/* Parses a mask: a number (decimal, 0x hex; a leading 0 is not octal) or names ("Coll,ProxyOp", "all",
 * "default", "none"). 0 on success. */
int ns_config_parse_mask(const char* s, uint32_t* out);
/* 1 when name[0..len) is an NCCLSCOPE_* variable that ncclscope reads (a
 * row of ncclscope/config_vars.def). */
int ns_config_known(const char* name, size_t len);
/* The known variable nearest to name[0..len) (edit distance, any case). */
const char* ns_config_closest(const char* name, size_t len);
/* One warning for every NCCLSCOPE_* variable of the environment that no
 * part of ncclscope reads, naming the closest known one. */
void ns_config_warn_unknown(ns_config_warn_fn warn);
/* "ops", "sampled", "full". */
const char* ns_detail_name(int level);
/* The mask NCCL gets at a level: full = mask; ops = mask less NS_DETAIL_EVENT_BITS. */
uint32_t ns_detail_mask(uint32_t full_mask, int full);
/* Parses a dump signal: 0 (none), a number or a name ("SIGUSR1", "usr2")
 * among those allowed (config.c). 0 on success. */
int ns_config_parse_signal(const char* s, int* out);

#endif
