/* ncclscope: environment variables (cold: the first init of a session). */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>

#include "ncclscope/record.h"

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

int ns_config_parse_mask(const char* s, uint32_t* out) {
  while (isspace((unsigned char)*s)) s++;
  if (!*s) return -1;
  if (isdigit((unsigned char)*s)) {
    char* end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || v > 0xFFFFFFFFull) return -1;
    *out = (uint32_t)v & 0x7FFFu;
    return 0;
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

static void load_u32(ns_config_warn_fn warn, const char* name, uint32_t* out, uint32_t def, uint32_t lo, uint32_t hi) {
  *out = def;
  const char* s = getenv(name);
  if (!s || !*s) return;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  while (isspace((unsigned char)*end)) end++;
  if (errno || *end || end == s || *s == '-' || v < lo || v > hi) {
    warnf(warn, "%s=\"%s\" is not a number in [%u, %u]; using the default %u", name, s, lo, hi, def);
    return;
  }
  *out = (uint32_t)v;
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

static void default_dump_dir(char* out, size_t len) {
  const char* job = getenv("SLURM_JOB_ID");
  if (job && *job && strlen(job) < 64 && !strchr(job, '/')) {
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
  c->event_mask = NS_DEFAULT_EVENT_MASK;
  const char* name = "NCCLSCOPE_EVENT_MASK";
  const char* s = getenv(name);
  if (!s || !*s) {
    name = "NCCL_PROFILE_EVENT_MASK";
    s = getenv(name);
  }
  if (s && *s && ns_config_parse_mask(s, &c->event_mask) != 0) {
    c->event_mask = NS_DEFAULT_EVENT_MASK;
    warnf(warn, "%s=\"%s\" is neither a number nor a list of event names; using the default 0x%x", name, s,
                NS_DEFAULT_EVENT_MASK);
  }
  s = getenv("NCCLSCOPE_DUMP_DIR");
  if (s && *s && strlen(s) < sizeof c->dump_dir - 64) {
    snprintf(c->dump_dir, sizeof c->dump_dir, "%s", s);
  } else {
    default_dump_dir(c->dump_dir, sizeof c->dump_dir);
    if (s && *s) warnf(warn, "NCCLSCOPE_DUMP_DIR is too long; using the default %s", c->dump_dir);
  }
  load_u32(warn, "NCCLSCOPE_RING_KB", &c->ring_kb, 1024, 4, 1u << 20);
  load_u32(warn, "NCCLSCOPE_MAX_THREADS", &c->max_threads, 128, 1, 4096);
  load_u32(warn, "NCCLSCOPE_SLAB_EVENTS", &c->slab_events, 65536, 64, 1u << 24);
  load_u32(warn, "NCCLSCOPE_FLUSH_MS", &c->flush_ms, 1000, 1, 60000);
  load_u32(warn, "NCCLSCOPE_POLL_MS", &c->poll_ms, 2, 1, 1000);
  load_u32(warn, "NCCLSCOPE_HOLD_MS", &c->hold_ms, 100, 0, 600000);
  load_u32(warn, "NCCLSCOPE_MAX_AGE_MS", &c->max_age_ms, 10000, 1, 3600000);
  if (c->max_age_ms < c->hold_ms) {
    warnf(warn, "NCCLSCOPE_MAX_AGE_MS=%u is below NCCLSCOPE_HOLD_MS=%u; using %u", c->max_age_ms, c->hold_ms,
                c->hold_ms);
    c->max_age_ms = c->hold_ms;
  }
  s = getenv("NCCLSCOPE_NO_CUDA");
  c->no_cuda = s && *s && strcmp(s, "0") != 0;
  s = getenv("NCCLSCOPE_CLOCK");
  if (s && *s) {
    if (!strcasecmp(s, "monotonic")) c->force_mono = 1;
    else if (strcasecmp(s, "tsc") != 0 && strcasecmp(s, "auto") != 0)
      warnf(warn, "NCCLSCOPE_CLOCK=\"%s\" is not auto, tsc or monotonic; using the default auto", s);
  }
}
