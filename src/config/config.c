/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: environment variables (cold: the first init of a session). */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>

#include "ncclscope/record.h"
#include "util/safefile.h"

/* One warning line to the caller's sink (the runtime logs it). */
static void warnf(ns_config_warn_fn warn, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(ns_config_warn_fn warn, const char* fmt, ...) {
  if (!warn) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  warn(msg);
}

/* strtoull, decimal unless the digits start with 0x: a leading zero is not
 * octal (NCCLSCOPE_RING_KB=0100 is 100). */
static unsigned long long parse_uint(const char* s, char** end) {
  const char* p = s;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '+') p++;
  int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  return strtoull(s, end, hex ? 16 : 10);
}

int ns_config_parse_mask(const char* s, uint32_t* out) {
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return -1;
  if (isdigit((unsigned char)*s)) {
    char* end;
    errno = 0;
    unsigned long long v = parse_uint(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || v > 0xFFFFFFFFull) return -1;
    *out = (uint32_t)v & 0x7FFFu;
    return v > 0x7FFFu ? -2 : 0;
  }
  uint32_t m = 0;
  char buf[256];
  if (strlen(s) >= sizeof buf) return -1;
  strcpy(buf, s);
  char* save = NULL;
  for (char* tok = strtok_r(buf, ",|+ ", &save); tok; tok = strtok_r(NULL, ",|+ ", &save)) {
    if (strncasecmp(tok, "ncclProfile", 11) == 0) tok += 11;
    int found = 0;
    if (!strcasecmp(tok, "all")) m |= 0x7FFFu, found = 1;
    else if (!strcasecmp(tok, "default")) m |= NS_DEFAULT_EVENT_MASK, found = 1;
    else if (!strcasecmp(tok, "none")) found = 1;
    for (unsigned t = 0; t < NS_EV_COUNT && !found; t++)
      if (!strcasecmp(tok, ns_event_short_name(t))) m |= 1u << t, found = 1;
    if (!found) return -1;
  }
  *out = m;
  return 0;
}

void ns_config_escape(const char* s, char* out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t at = 0, i = 0;
  if (!cap) return;
  for (; s[i] && i < 80; i++) {
    unsigned char c = (unsigned char)s[i];
    char e[5];
    size_t n = 0;
    if (c == '"' || c == '\\') e[n++] = '\\', e[n++] = (char)c;
    else if (c >= 0x20 && c < 0x7f) e[n++] = (char)c;
    else e[n++] = '\\', e[n++] = 'x', e[n++] = hex[c >> 4], e[n++] = hex[c & 15];
    if (at + n + 4 >= cap) break;
    memcpy(out + at, e, n);
    at += n;
  }
  if (s[i] && at + 3 < cap) memcpy(out + at, "...", 3), at += 3;
  out[at] = '\0';
}

/* One line: `NAME="value" why; using what`. */
static void bad_value(ns_config_warn_fn warn, const char* name, const char* value, const char* why,
                      const char* used_fmt, ...) __attribute__((format(printf, 5, 6)));
static void bad_value(ns_config_warn_fn warn, const char* name, const char* value, const char* why,
                      const char* used_fmt, ...) {
  char esc[400], used[PATH_MAX + 64];
  ns_config_escape(value, esc, sizeof esc);
  va_list ap;
  va_start(ap, used_fmt);
  vsnprintf(used, sizeof used, used_fmt, ap);
  va_end(ap);
  warnf(warn, "%s=\"%s\" %s; using %s", name, esc, why, used);
}

static void load_u32(ns_config_warn_fn warn, const char* name, uint32_t* out, uint32_t def, uint32_t lo, uint32_t hi) {
  *out = def;
  const char* s = getenv(name);
  if (!s || !*s) return;
  char* end;
  errno = 0;
  unsigned long long v = parse_uint(s, &end);
  while (isspace((unsigned char)*end)) end++;
  if (errno || *end || end == s || *s == '-' || v < lo || v > hi) {
    char why[96];
    snprintf(why, sizeof why, "is not a number in [%u, %u] (decimal, or hex with 0x)", lo, hi);
    bad_value(warn, name, s, why, "the default %u", def);
    return;
  }
  *out = (uint32_t)v;
}

/* 1/0, true/false, yes/no, on/off (any case). */
static void load_bool(ns_config_warn_fn warn, const char* name, int* out, int def) {
  static const char* const yes[] = {"1", "true", "yes", "on"};
  static const char* const no[] = {"0", "false", "no", "off"};
  *out = def;
  const char* s = getenv(name);
  if (!s || !*s) return;
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(s, yes[i])) return (void)(*out = 1);
    if (!strcasecmp(s, no[i])) return (void)(*out = 0);
  }
  bad_value(warn, name, s, "is not 1/0, true/false, yes/no or on/off", "the default %d", def);
}

/* A plain decimal number ("12", "0.5", "1e-3"): not hex ("0x1p-3"), inf or nan, which strtod takes too. */
static int is_decimal(const char* s) {
  while (isspace((unsigned char)*s)) s++;
  if (*s == '+' || *s == '-') s++;
  int digits = 0;
  while (isdigit((unsigned char)*s)) s++, digits++;
  if (*s == '.') {
    s++;
    while (isdigit((unsigned char)*s)) s++, digits++;
  }
  if (!digits) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
  }
  while (isspace((unsigned char)*s)) s++;
  return *s == '\0';
}

/* A number of seconds in [lo, hi] (fractions allowed); zero_off: 0 is taken too (off). */
static void load_seconds(ns_config_warn_fn warn, const char* name, double* out, double def, double lo, double hi,
                         int zero_off) {
  *out = def;
  const char* s = getenv(name);
  if (!s || !*s) return;
  char* end = NULL;
  errno = 0;
  double v = is_decimal(s) ? strtod(s, &end) : 0;
  while (end && isspace((unsigned char)*end)) end++;
  if (!end || errno || end == s || *end || !((v >= lo && v <= hi) || (zero_off && v == 0))) {
    char why[128];
    snprintf(why, sizeof why, "is not a decimal number of seconds in [%g, %g]%s", lo, hi,
             zero_off ? " or 0 (off)" : "");
    bad_value(warn, name, s, why, "the default %g", def);
    return;
  }
  *out = v;
}

/* The node-local rank the launcher gives (OTLP resource nccl.local_rank):
 * the first of these that is set and a number; one that is set but not a
 * number is warned about, naming what is used instead. */
static void load_local_rank(ns_config_warn_fn warn, int* out) {
  static const char* const vars[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
  enum { N = sizeof vars / sizeof vars[0] };
  int bad[N] = {0};
  *out = -1;
  size_t i = 0;
  for (; i < N; i++) {
    const char* s = getenv(vars[i]);
    if (!s || !*s) continue;
    char* end;
    errno = 0;
    long v = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : -1;
    if (v >= 0 && !errno && *end == '\0' && v < 1000000) {
      *out = (int)v;
      break;
    }
    bad[i] = 1;
  }
  for (size_t b = 0; b < i && b < N; b++) {
    if (!bad[b]) continue;
    if (*out >= 0) bad_value(warn, vars[b], getenv(vars[b]), "is not a rank in [0, 999999]", "%s=%d", vars[i], *out);
    else bad_value(warn, vars[b], getenv(vars[b]), "is not a rank in [0, 999999]", "no nccl.local_rank");
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

static void load_signal(ns_config_warn_fn warn, const char* name, int* out, int def) {
  *out = def;
  const char* s = getenv(name);
  if (!s || !*s) return;
  if (ns_config_parse_signal(s, out) != 0) {
    *out = def;
    bad_value(warn, name, s,
              "is not 0 (off), a real-time signal or one of SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH, SIGPWR, SIGURG, SIGQUIT",
              "the default %d (SIGUSR1)", def);
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
                                        (1u << NS_EV_NET_PLUGIN)),
               "the detail bits are ProxyStep, ProxyCtrl, KernelCh and NetPlugin");

const char* ns_detail_name(int level) {
  return level == NS_DETAIL_OPS ? "ops" : level == NS_DETAIL_SAMPLED ? "sampled" : "full";
}

uint32_t ns_detail_mask(uint32_t full_mask, int full) { return full ? full_mask : full_mask & ~NS_DETAIL_EVENT_BITS; }

/* NCCLSCOPE_DETAIL. Unset: `full` when NCCLSCOPE_EVENT_MASK (or NCCL's)
 * chose the mask, so that a mask asked for is recorded whole; else the default. */
static void load_detail(ns_config_warn_fn warn, ns_config* c, int mask_set) {
  c->detail = mask_set ? NS_DETAIL_FULL : NS_DETAIL_DEFAULT;
  const char* s = getenv("NCCLSCOPE_DETAIL");
  if (!s || !*s) return;
  for (int l = NS_DETAIL_OPS; l <= NS_DETAIL_FULL; l++)
    if (!strcasecmp(s, ns_detail_name(l))) {
      c->detail = l;
      return;
    }
  bad_value(warn, "NCCLSCOPE_DETAIL", s, "is not one of ops, sampled, full", "%s", ns_detail_name(c->detail));
}

/* ./ncclscope-<job id> where the job id makes a plain file name, else the process start. */
static void default_dump_dir(char* out, size_t len, const char* job) {
  int plain = *job && strlen(job) < 64 && !strchr(job, '/');
  for (const char* p = job; plain && *p; p++) plain = (unsigned char)*p >= 0x20 && *p != 0x7F;
  if (plain) {
    snprintf(out, len, "./ncclscope-%s", job);
    return;
  }
  time_t t = process_start_time();
  struct tm tm;
  localtime_r(&t, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  snprintf(out, len, "./ncclscope-%s", stamp);
}

void ns_config_load(ns_config* c, ns_config_warn_fn warn) {
  memset(c, 0, sizeof *c);
  ns_job_identity_read(&c->job);
  c->event_mask = NS_DEFAULT_EVENT_MASK;
  const char* name = "NCCLSCOPE_EVENT_MASK";
  const char* s = getenv(name);
  if (!s || !*s) {
    name = "NCCL_PROFILE_EVENT_MASK";
    s = getenv(name);
  }
  if (s && *s) {
    int rc = ns_config_parse_mask(s, &c->event_mask);
    if (rc == -2) {
      bad_value(warn, name, s, "sets bits above 0x7FFF, which name no event type", "0x%x", c->event_mask);
    } else if (rc != 0) {
      c->event_mask = NS_DEFAULT_EVENT_MASK;
      bad_value(warn, name, s, "is neither a number nor a list of event names", "the default 0x%x",
                NS_DEFAULT_EVENT_MASK);
    }
  }
  load_detail(warn, c, s && *s);
  load_u32(warn, "NCCLSCOPE_SAMPLE_MS", &c->sample_ms, NS_SAMPLE_MS_DEFAULT, 1, 1000);
  load_seconds(warn, "NCCLSCOPE_ESCALATE_SEC", &c->escalate_sec, NS_ESCALATE_SEC_DEFAULT, 0.1, 86400, 1);
  s = getenv("NCCLSCOPE_DUMP_DIR");
  if (s && *s && strlen(s) < sizeof c->dump_dir) {
    memcpy(c->dump_dir, s, strlen(s) + 1);
  } else {
    default_dump_dir(c->dump_dir, sizeof c->dump_dir, c->job.id);
    if (s && *s) bad_value(warn, "NCCLSCOPE_DUMP_DIR", s, "is longer than PATH_MAX", "the default %s", c->dump_dir);
  }
  load_u32(warn, "NCCLSCOPE_RING_KB", &c->ring_kb, 4096, 4, 1u << 20);
  load_u32(warn, "NCCLSCOPE_MAX_THREADS", &c->max_threads, 128, 1, 4096);
  load_u32(warn, "NCCLSCOPE_SLAB_EVENTS", &c->slab_events, 65536, 64, 1u << 24);
  load_u32(warn, "NCCLSCOPE_FLUSH_MS", &c->flush_ms, 1000, 1, 60000);
  load_u32(warn, "NCCLSCOPE_POLL_MS", &c->poll_ms, 2, 1, 1000);
  load_u32(warn, "NCCLSCOPE_SHED_FILL", &c->shed_fill, 50, 0, 100);
  load_u32(warn, "NCCLSCOPE_HOLD_MS", &c->hold_ms, 100, 0, 600000);
  load_u32(warn, "NCCLSCOPE_MAX_AGE_MS", &c->max_age_ms, 10000, 1, 3600000);
  if (c->max_age_ms < c->hold_ms) {
    warnf(warn, "NCCLSCOPE_MAX_AGE_MS=%u is below NCCLSCOPE_HOLD_MS=%u; using %u", c->max_age_ms, c->hold_ms,
                c->hold_ms);
    c->max_age_ms = c->hold_ms;
  }
  load_bool(warn, "NCCLSCOPE_NO_CUDA", &c->no_cuda, 0);
  load_bool(warn, "NCCLSCOPE_ANALYSIS", &c->analysis, 1);
  s = getenv("NCCLSCOPE_CLOCK");
  if (s && *s) {
    if (!strcasecmp(s, "monotonic")) c->force_mono = 1;
    else if (strcasecmp(s, "tsc") != 0 && strcasecmp(s, "auto") != 0)
      bad_value(warn, "NCCLSCOPE_CLOCK", s, "is not auto, tsc or monotonic", "the default auto");
  }
  load_seconds(warn, "NCCLSCOPE_WINDOW_SEC", &c->window_sec, NS_WINDOW_SEC_DEFAULT, 0.001, 86400, 0);
  load_u32(warn, "NCCLSCOPE_FR_ENTRIES", &c->fr_entries, 2000, 0, 1000000);
  load_seconds(warn, "NCCLSCOPE_HANG_TIMEOUT_SEC", &c->hang_timeout_sec, 60.0, 0.01, 604800, 1);
  load_signal(warn, "NCCLSCOPE_DUMP_SIGNAL", &c->dump_signal, SIGUSR1);
  uint32_t ops;
  load_u32(warn, "NCCLSCOPE_WINDOW_OPS", &ops, 0, 0, 1u << 30);
  c->window_ops = ops;
  s = getenv("NCCLSCOPE_PROM_DIR");
  if (s && *s) {
    if (strlen(s) < sizeof c->prom_dir) memcpy(c->prom_dir, s, strlen(s) + 1);
    else bad_value(warn, "NCCLSCOPE_PROM_DIR", s, "is longer than PATH_MAX", "no Prometheus file");
  }
  load_u32(warn, "NCCLSCOPE_TOP_LINKS", &c->top_links, 16, 0, 1024);
  load_bool(warn, "NCCLSCOPE_PROM_KEEP", &c->prom_keep, 0);
  load_u32(warn, "NCCLSCOPE_MAX_SERIES", &c->max_series, NS_MAX_SERIES_DEFAULT, 20, 1000000);
  ns_otel_config_load(&c->otel, warn);
  load_local_rank(warn, &c->local_rank);
  c->file_mode = NS_FILE_MODE_DEFAULT;
  s = getenv("NCCLSCOPE_FILE_MODE");
  if (s && *s && ns_file_mode_parse(s, &c->file_mode) != 0)
    bad_value(warn, "NCCLSCOPE_FILE_MODE", s, "is not an octal mode <= 0777 with owner read and write",
              "the default 0%o", NS_FILE_MODE_DEFAULT);
  ns_config_warn_unknown(warn);
}
