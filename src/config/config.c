/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: environment variables (cold: the first init of a session). */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ncclscope/record.h"
#include "util/numtext.h"
#include "util/safefile.h"

/* What the NS_CONFIG_OWN rows' loaders (load_<field> below) read and set. */
typedef struct {
  ns_config* c;
  ns_config_warn_fn warn;
  int mask_set; /* NCCLSCOPE_EVENT_MASK (or NCCL's) chose the mask */
} load_state;

int ns_config_parse_mask(const char* s, uint32_t* out) {
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return -1;
  if (isdigit((unsigned char)*s)) {
    char* end;
    errno = 0;
    unsigned long long v = ns_parse_uint(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || v > 0xFFFFFFFFull) return -1;
    *out = (uint32_t)v & NS_EV_ALL_MASK;
    return v > NS_EV_ALL_MASK ? -2 : 0;
  }
  uint32_t m = 0;
  char buf[256];
  if (strlen(s) >= sizeof buf) return -1;
  strcpy(buf, s);
  char* save = NULL;
  for (char* tok = strtok_r(buf, ",|+ ", &save); tok; tok = strtok_r(NULL, ",|+ ", &save)) {
    if (strncasecmp(tok, "ncclProfile", 11) == 0) tok += 11;
    static const struct {
      const char* name;
      uint32_t mask;
    } sets[] = {{"all", NS_EV_ALL_MASK}, {"default", NS_DEFAULT_EVENT_MASK}, {"none", 0}};
    int found = 0;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0] && !found; k++)
      if (!strcasecmp(tok, sets[k].name)) m |= sets[k].mask, found = 1;
    for (unsigned t = 0; t < NS_EV_COUNT && !found; t++)
      if (!strcasecmp(tok, ns_event_short_name(t))) m |= 1u << t, found = 1;
    if (!found) return -1;
  }
  *out = m;
  return 0;
}

/* The NS_CONFIG_NUM kinds, each into its field. */
static void load_number(ns_config_warn_fn warn, const ns_config_var* v, void* field) {
  const char* s = getenv(v->name);
  if (!s || !*s) return;
  switch (v->kind) {
  case NS_VAR_U32:
  case NS_VAR_U64: {
    unsigned long long lo = (unsigned long long)v->lo, hi = (unsigned long long)v->hi, n;
    if (ns_parse_count(s, lo, hi, &n) != 0) {
      char why[96];
      snprintf(why, sizeof why, "is not a number in [%llu, %llu] (decimal, or hex with 0x)", lo, hi);
      ns_config_bad_value(warn, v->name, s, why, "the default %llu", (unsigned long long)v->def);
    } else if (v->kind == NS_VAR_U32) {
      *(uint32_t*)field = (uint32_t)n;
    } else {
      *(uint64_t*)field = n;
    }
    return;
  }
  case NS_VAR_SECONDS:
  case NS_VAR_SECONDS_OFF: {
    int zero_off = v->kind == NS_VAR_SECONDS_OFF;
    if (ns_parse_seconds(s, v->lo, v->hi, zero_off, (double*)field) != 0) {
      char why[128];
      snprintf(why, sizeof why, "is not a decimal number of seconds in [%g, %g]%s", v->lo, v->hi,
               zero_off ? " or 0 (off)" : "");
      ns_config_bad_value(warn, v->name, s, why, "the default %g", v->def);
    }
    return;
  }
  case NS_VAR_BOOL:
    if (ns_parse_switch(s, (int*)field) != 0)
      ns_config_bad_value(warn, v->name, s, "is not 1/0, true/false, yes/no or on/off", "the default %d", (int)v->def);
    return;
  case NS_VAR_OWN: return;
  }
}

/* Each NS_CONFIG_NUM row's field, its default stored before the variable is read. */
static void set_default(const ns_config_var* v, void* field) {
  switch (v->kind) {
  case NS_VAR_U32: *(uint32_t*)field = (uint32_t)v->def; return;
  case NS_VAR_U64: *(uint64_t*)field = (uint64_t)v->def; return;
  case NS_VAR_SECONDS:
  case NS_VAR_SECONDS_OFF: *(double*)field = v->def; return;
  case NS_VAR_BOOL: *(int*)field = (int)v->def; return;
  case NS_VAR_OWN: return;
  }
}

/* Signals a flight-record dump may be asked with: never one that ends or
 * stops the process by design, reports a fault, or that ncclscope already
 * chains for the end of the trace (SIGTERM, SIGINT). */
static const struct {
  const char* name;
  int sig;
} dump_signals[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"WINCH", SIGWINCH},
                    {"PWR", SIGPWR},   {"URG", SIGURG},   {"QUIT", SIGQUIT}};

int ns_config_parse_signal(const char* s, int* out) {
  while (isspace((unsigned char)*s)) s++;
  if (isdigit((unsigned char)*s)) {
    char* end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end) return -1;
    if (v == 0) return *out = 0, 0;
    if (v >= SIGRTMIN && v <= SIGRTMAX) return *out = (int)v, 0;
    for (size_t i = 0; i < sizeof dump_signals / sizeof dump_signals[0]; i++)
      if (dump_signals[i].sig == v) return *out = (int)v, 0;
    return -1;
  }
  if (strncasecmp(s, "SIG", 3) == 0) s += 3;
  for (size_t i = 0; i < sizeof dump_signals / sizeof dump_signals[0]; i++)
    if (!strcasecmp(s, dump_signals[i].name)) return *out = dump_signals[i].sig, 0;
  return -1;
}

static void load_dump_signal(load_state* st, const ns_config_var* v) {
  st->c->dump_signal = SIGUSR1;
  const char* s = getenv(v->name);
  if (!s || !*s) return;
  if (ns_config_parse_signal(s, &st->c->dump_signal) != 0) {
    st->c->dump_signal = SIGUSR1;
    ns_config_bad_value(st->warn, v->name, s,
                        "is not 0 (off), a real-time signal or one of SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH, SIGPWR, "
                        "SIGURG, SIGQUIT",
                        "the default %d (SIGUSR1)", SIGUSR1);
  }
}

/* The process start time, so every load of the plugin in one process (NCCL
 * reloads it after the last communicator) picks the same default directory. */
static time_t process_start_time(void) {
  time_t now = time(NULL);
  FILE* f = fopen("/proc/self/stat", "re");
  if (!f) return now;
  char line[1024];
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  char* p = strrchr(line, ')'); /* the command name may contain spaces */
  if (!p) return now;
  unsigned long long start_ticks = 0;
  int field = 2;
  char* save = NULL;
  for (char* tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (++field == 22) {
      start_ticks = strtoull(tok, NULL, 10);
      break;
    }
  }
  f = fopen("/proc/stat", "re");
  if (!f) return now;
  unsigned long long btime = 0;
  char buf[256];
  while (fgets(buf, sizeof buf, f))
    if (sscanf(buf, "btime %llu", &btime) == 1) break;
  fclose(f);
  long hz = sysconf(_SC_CLK_TCK);
  if (!btime || hz <= 0 || !start_ticks) return now;
  return (time_t)(btime + start_ticks / (unsigned long long)hz);
}

_Static_assert(NS_DETAIL_EVENT_BITS == ((1u << NS_EV_PROXY_STEP) | (1u << NS_EV_PROXY_CTRL) | (1u << NS_EV_KERNEL_CH) |
                                        (1u << NS_EV_NET_PLUGIN) | (1u << NS_EV_KERNEL_PHASE)),
               "the detail bits are ProxyStep, ProxyCtrl, KernelCh, NetPlugin and KernelPhase");

const char* ns_detail_name(int level) {
  return level == NS_DETAIL_OPS ? "ops" : level == NS_DETAIL_SAMPLED ? "sampled" : "full";
}

uint32_t ns_detail_mask(uint32_t full_mask, int full) { return full ? full_mask : full_mask & ~NS_DETAIL_EVENT_BITS; }

/* NCCLSCOPE_DETAIL. Unset: `full` when NCCLSCOPE_EVENT_MASK (or NCCL's)
 * chose the mask, so that a mask asked for is recorded whole; else the default. */
static void load_detail(load_state* st, const ns_config_var* v) {
  ns_config* c = st->c;
  c->detail = st->mask_set ? NS_DETAIL_FULL : NS_DETAIL_DEFAULT;
  const char* s = getenv(v->name);
  if (!s || !*s) return;
  for (int l = NS_DETAIL_OPS; l <= NS_DETAIL_FULL; l++)
    if (!strcasecmp(s, ns_detail_name(l))) {
      c->detail = l;
      return;
    }
  ns_config_bad_value(st->warn, v->name, s, "is not one of ops, sampled, full", "%s", ns_detail_name(c->detail));
}

/* ./ncclscope-<job id>, each '/' and control character of the id made '_'
 * (the id is one file name; every process of the job makes the same one), or
 * ./ncclscope-<process start> with no id or one of 64 bytes or more. A job id
 * that is not used as it is gets a warning naming its variable and what is
 * used; the job_id label keeps the id as given. */
static void default_dump_dir(char* out, size_t len, const ns_job_identity* job, ns_config_warn_fn warn) {
  const char* id = job->id;
  if (*id && strlen(id) < 64) {
    snprintf(out, len, "./ncclscope-%s", id);
    int replaced = 0;
    for (char* p = out + strlen("./ncclscope-"); *p; p++)
      if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7F) *p = '_', replaced = 1;
    if (replaced)
      ns_config_bad_value(warn, job->source, id, "has a '/' or a control character, which a directory name cannot hold",
                          "the dump directory %s ('_' for each; the job_id label keeps the name as given)", out);
    return;
  }
  time_t t = process_start_time();
  struct tm tm;
  localtime_r(&t, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  snprintf(out, len, "./ncclscope-%s", stamp);
  if (*id)
    ns_config_bad_value(warn, job->source, id, "is 64 bytes or longer, too long for the dump directory's name",
                        "the dump directory %s (the process start; the job_id label keeps the name as given)", out);
}

static void load_job(load_state* st, const ns_config_var* v) {
  (void)v;
  ns_job_identity_read(&st->c->job);
}

/* NCCLSCOPE_EVENT_MASK, else NCCL's own NCCL_PROFILE_EVENT_MASK. */
static void load_event_mask(load_state* st, const ns_config_var* v) {
  ns_config* c = st->c;
  c->event_mask = NS_DEFAULT_EVENT_MASK;
  const char* name = v->name;
  const char* s = getenv(name);
  if (!s || !*s) {
    name = "NCCL_PROFILE_EVENT_MASK";
    s = getenv(name);
  }
  st->mask_set = s && *s;
  if (!st->mask_set) return;
  int rc = ns_config_parse_mask(s, &c->event_mask);
  if (rc == -2) {
    ns_config_bad_value(st->warn, name, s, "sets bits above 0xFFFF, which name no event type", "0x%x", c->event_mask);
  } else if (rc != 0) {
    c->event_mask = NS_DEFAULT_EVENT_MASK;
    ns_config_bad_value(st->warn, name, s, "is neither a number nor a list of event names", "the default 0x%x",
                        NS_DEFAULT_EVENT_MASK);
  }
}

/* Needs the job identity (NCCLSCOPE_JOB_NAME's row comes first). */
static void load_dump_dir(load_state* st, const ns_config_var* v) {
  ns_config* c = st->c;
  const char* s = getenv(v->name);
  if (s && *s && strlen(s) < sizeof c->dump_dir) {
    memcpy(c->dump_dir, s, strlen(s) + 1);
  } else {
    default_dump_dir(c->dump_dir, sizeof c->dump_dir, &c->job, st->warn);
    if (s && *s) ns_config_bad_value(st->warn, v->name, s, "is longer than PATH_MAX", "the default %s", c->dump_dir);
  }
}

static void load_force_mono(load_state* st, const ns_config_var* v) {
  const char* s = getenv(v->name);
  if (s && *s) {
    if (!strcasecmp(s, "monotonic"))
      st->c->force_mono = 1;
    else if (strcasecmp(s, "tsc") != 0 && strcasecmp(s, "auto") != 0)
      ns_config_bad_value(st->warn, v->name, s, "is not auto, tsc or monotonic", "the default auto");
  }
}

static void load_prom_dir(load_state* st, const ns_config_var* v) {
  ns_config* c = st->c;
  const char* s = getenv(v->name);
  if (s && *s) {
    if (strlen(s) < sizeof c->prom_dir) memcpy(c->prom_dir, s, strlen(s) + 1);
    else
      ns_config_bad_value(st->warn, v->name, s, "is longer than PATH_MAX", "no Prometheus file");
  }
}

/* NCCLSCOPE_OTLP with the OTEL_* variables and the launcher's local rank (otel.c). */
static void load_otel(load_state* st, const ns_config_var* v) {
  (void)v;
  ns_otel_config_load(&st->c->otel, st->warn);
}

static void load_file_mode(load_state* st, const ns_config_var* v) {
  ns_config* c = st->c;
  c->file_mode = NS_FILE_MODE_DEFAULT;
  const char* s = getenv(v->name);
  if (s && *s && ns_file_mode_parse(s, &c->file_mode) != 0)
    ns_config_bad_value(st->warn, v->name, s, "is not an octal mode <= 0777 with owner read and write",
                        "the default 0%o", NS_FILE_MODE_DEFAULT);
}

static const size_t field_offset[NS_CFG_COUNT] = {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc) [NS_CFG_##name] = offsetof(ns_config, field),
#define NS_CONFIG_OWN(name, type, field, def, doc)
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc)
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
};

static void (*const own_loader[NS_CFG_COUNT])(load_state*, const ns_config_var*) = {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc)
#define NS_CONFIG_OWN(name, type, field, def, doc) [NS_CFG_##name] = load_##field,
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc)
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
};

void ns_config_read_number(ns_config_warn_fn warn, const ns_config_var* v, void* field) {
  set_default(v, field);
  load_number(warn, v, field);
}

void ns_config_load(ns_config* c, ns_config_warn_fn warn) {
  memset(c, 0, sizeof *c);
  load_state st = {c, warn, 0};
  const ns_config_var* vars = ns_config_vars();
  for (int i = 0; i < NS_CFG_COUNT; i++) {
    if (vars[i].cli) continue; /* the ncclscope command's */
    if (vars[i].kind == NS_VAR_OWN) {
      own_loader[i](&st, &vars[i]);
      continue;
    }
    ns_config_read_number(warn, &vars[i], (char*)c + field_offset[i]);
    if (i == NS_CFG_NCCLSCOPE_MAX_AGE_MS && c->max_age_ms < c->hold_ms) {
      ns_config_warnf(warn, "NCCLSCOPE_MAX_AGE_MS=%u is below NCCLSCOPE_HOLD_MS=%u; using %u", c->max_age_ms,
                      c->hold_ms, c->hold_ms);
      c->max_age_ms = c->hold_ms;
    }
  }
  ns_config_warn_unknown(warn);
}
