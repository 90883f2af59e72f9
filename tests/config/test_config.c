/* SPDX-License-Identifier: Apache-2.0 */
/* src/config: every NCCLSCOPE_* number and switch of the table at its
 * bounds and just past them (a warning naming the value and the default,
 * which is then used), the variables with a syntax of their own and
 * unknown names. */
#include <signal.h>
#include <stddef.h>

#include "check.h"
#include "config/config.h"
#include "ncclscope/config_vars.h"

extern char** environ;

static char lines[64][700];
static int nlines;

static void capture(const char* line) {
  if (nlines < 64) snprintf(lines[nlines], sizeof lines[0], "%s", line);
  nlines++;
}

/* The warnings about one variable (lines starting with name + '='). */
static int warned(const char* name, const char** line) {
  int n = 0;
  size_t len = strlen(name);
  for (int i = 0; i < nlines && i < 64; i++)
    if (!strncmp(lines[i], name, len) && lines[i][len] == '=') n++, *line = lines[i];
  return n;
}

/* Unsets every NCCLSCOPE_* variable and NCCL's mask. */
static void clear_env(void) {
  for (int again = 1; again;) {
    again = 0;
    for (char** e = environ; *e; e++)
      if (!strncmp(*e, "NCCLSCOPE_", 10) || !strncmp(*e, "NCCL_PROFILE_EVENT_MASK=", 24)) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(*e, '=') - *e), *e);
        unsetenv(name);
        again = 1;
        break;
      }
  }
}

/* Only v set (and, for NCCLSCOPE_MAX_AGE_MS, a hold time of 0 that any age passes). */
static void set_only(const ns_config_var* v, const char* value) {
  clear_env();
  if (!strcmp(v->name, "NCCLSCOPE_MAX_AGE_MS")) setenv("NCCLSCOPE_HOLD_MS", "0", 1);
  setenv(v->name, value, 1);
}

static void load(ns_config* c) {
  nlines = 0;
  ns_config_load(c, capture);
}

/* Where each number of the table lands in ns_config. */
static const size_t field_at[NS_CFG_COUNT] = {
#define NS_CONFIG_NUM(name, kind, field, def, lo, hi, doc) [NS_CFG_##name] = offsetof(ns_config, field),
#define NS_CONFIG_OWN(name, type, field, def, doc)
#define NS_CONFIG_CLI(name, kind, def, lo, hi, doc)
#include "ncclscope/config_vars.def"
#undef NS_CONFIG_NUM
#undef NS_CONFIG_OWN
#undef NS_CONFIG_CLI
};

static double field_value(const ns_config* c, int i) {
  const char* p = (const char*)c + field_at[i];
  switch (ns_config_vars()[i].kind) {
  case NS_VAR_U32: return *(const uint32_t*)p;
  case NS_VAR_U64: return (double)*(const uint64_t*)p;
  case NS_VAR_SECONDS:
  case NS_VAR_SECONDS_OFF: return *(const double*)p;
  case NS_VAR_BOOL: return *(const int*)p;
  default: return -1;
  }
}

/* name=value is taken as `want` with no warning about it. */
static void expect_taken(int i, const char* value, double want) {
  const ns_config_var* v = &ns_config_vars()[i];
  ns_config c;
  set_only(v, value);
  load(&c);
  const char* line = NULL;
  if (warned(v->name, &line)) fprintf(stderr, "%s=%s: unexpected warning: %s\n", v->name, value, line);
  CHECK_U64(warned(v->name, &line), 0);
  CHECK_NEAR(field_value(&c, i), want, 0);
}

/* name=value gives exactly `want_line` and the default. */
static void expect_refused(int i, const char* value, const char* want_line) {
  const ns_config_var* v = &ns_config_vars()[i];
  ns_config c;
  set_only(v, value);
  load(&c);
  const char* line = NULL;
  CHECK_U64(warned(v->name, &line), 1);
  if (line) CHECK_STR(line, want_line);
  CHECK_NEAR(field_value(&c, i), v->def, 0);
}

#define SECONDS_WHY "%s=\"%s\" is not a decimal number of seconds in [%g, %g]%s; using the default %g"

static void test_numbers(void) {
  const ns_config_var* vars = ns_config_vars();
  int numbers = 0;
  for (int i = 0; i < NS_CFG_COUNT; i++) {
    const ns_config_var* v = &vars[i];
    char val[64], want[512];
    if (v->cli) continue; /* the ncclscope command's (tests/tools/test_cli_vars.c) */
    switch (v->kind) {
    case NS_VAR_U32:
    case NS_VAR_U64: {
      unsigned long long lo = (unsigned long long)v->lo, hi = (unsigned long long)v->hi;
      snprintf(val, sizeof val, "%llu", lo);
      expect_taken(i, val, (double)lo);
      snprintf(val, sizeof val, " %llu ", hi);
      expect_taken(i, val, (double)hi);
      snprintf(val, sizeof val, "0x%llx", hi);
      expect_taken(i, val, (double)hi);
      snprintf(val, sizeof val, "%llu", hi + 1);
      snprintf(want, sizeof want,
               "%s=\"%s\" is not a number in [%llu, %llu] (decimal, or hex with 0x); using the default %llu", v->name,
               val, lo, hi, (unsigned long long)v->def);
      expect_refused(i, val, want);
      if (lo > 0) {
        snprintf(val, sizeof val, "%llu", lo - 1);
        snprintf(want, sizeof want,
                 "%s=\"%s\" is not a number in [%llu, %llu] (decimal, or hex with 0x); using the default %llu", v->name,
                 val, lo, hi, (unsigned long long)v->def);
        expect_refused(i, val, want);
      }
      snprintf(want, sizeof want,
               "%s=\"-1\" is not a number in [%llu, %llu] (decimal, or hex with 0x); using the default %llu", v->name,
               lo, hi, (unsigned long long)v->def);
      expect_refused(i, "-1", want);
      snprintf(want, sizeof want,
               "%s=\"12k\" is not a number in [%llu, %llu] (decimal, or hex with 0x); using the default %llu", v->name,
               lo, hi, (unsigned long long)v->def);
      expect_refused(i, "12k", want);
      /* blanks alone are no number (not a zero), nor is a sign after them */
      static const char* const blank_or_signed[][2] = {
          {" ", " "}, {"\t \n", "\\x09 \\x0a"}, {" -1", " -1"}, {"+", "+"}};
      for (size_t b = 0; b < sizeof blank_or_signed / sizeof blank_or_signed[0]; b++) {
        snprintf(want, sizeof want,
                 "%s=\"%s\" is not a number in [%llu, %llu] (decimal, or hex with 0x); using the default %llu", v->name,
                 blank_or_signed[b][1], lo, hi, (unsigned long long)v->def);
        expect_refused(i, blank_or_signed[b][0], want);
      }
      numbers++;
      break;
    }
    case NS_VAR_SECONDS:
    case NS_VAR_SECONDS_OFF: {
      int off = v->kind == NS_VAR_SECONDS_OFF;
      snprintf(val, sizeof val, "%.17g", v->lo);
      expect_taken(i, val, v->lo);
      snprintf(val, sizeof val, "%.17g", v->hi);
      expect_taken(i, val, v->hi);
      snprintf(val, sizeof val, "%.17g", v->lo / 2);
      snprintf(want, sizeof want, SECONDS_WHY, v->name, val, v->lo, v->hi, off ? " or 0 (off)" : "", v->def);
      expect_refused(i, val, want);
      snprintf(val, sizeof val, "%.17g", v->hi * 2);
      snprintf(want, sizeof want, SECONDS_WHY, v->name, val, v->lo, v->hi, off ? " or 0 (off)" : "", v->def);
      expect_refused(i, val, want);
      snprintf(want, sizeof want, SECONDS_WHY, v->name, "0x1p-3", v->lo, v->hi, off ? " or 0 (off)" : "", v->def);
      expect_refused(i, "0x1p-3", want);
      snprintf(want, sizeof want, SECONDS_WHY, v->name, "inf", v->lo, v->hi, off ? " or 0 (off)" : "", v->def);
      expect_refused(i, "inf", want);
      if (off) {
        expect_taken(i, "0", 0);
      } else {
        snprintf(want, sizeof want, SECONDS_WHY, v->name, "0", v->lo, v->hi, "", v->def);
        expect_refused(i, "0", want);
      }
      numbers++;
      break;
    }
    case NS_VAR_BOOL: {
      expect_taken(i, "yes", 1);
      expect_taken(i, "ON", 1);
      expect_taken(i, "false", 0);
      expect_taken(i, "0", 0);
      snprintf(want, sizeof want, "%s=\"maybe\" is not 1/0, true/false, yes/no or on/off; using the default %d",
               v->name, (int)v->def);
      expect_refused(i, "maybe", want);
      numbers++;
      break;
    }
    case NS_VAR_OWN: break;
    }
  }
  CHECK_TRUE(numbers >= 19);
}

static void test_defaults(void) {
  ns_config c;
  clear_env();
  load(&c);
  CHECK_U64(nlines, 0);
  CHECK_U64(c.ring_kb, 4096);
  CHECK_U64(c.max_threads, 128);
  CHECK_U64(c.slab_events, 65536);
  CHECK_U64(c.flush_ms, 1000);
  CHECK_U64(c.poll_ms, 2);
  CHECK_U64(c.shed_fill, 50);
  CHECK_U64(c.hold_ms, 100);
  CHECK_U64(c.max_age_ms, 10000);
  CHECK_U64(c.sample_ms, 30);
  CHECK_NEAR(c.escalate_sec, 30, 0);
  CHECK_NEAR(c.window_sec, 10, 0);
  CHECK_U64(c.window_ops, 0);
  CHECK_U64(c.fr_entries, 2000);
  CHECK_NEAR(c.hang_timeout_sec, 60, 0);
  CHECK_U64(c.top_links, 16);
  CHECK_U64(c.max_series, 4000);
  CHECK_U64(c.analysis, 1);
  CHECK_U64(c.no_cuda, 0);
  CHECK_U64(c.prom_keep, 0);
  CHECK_U64(c.event_mask, NS_DEFAULT_EVENT_MASK);
  CHECK_U64(c.event_mask, 0xFF5F);
  CHECK_U64(c.detail, NS_DETAIL_FULL);
  CHECK_U64(c.dump_signal, SIGUSR1);
  CHECK_U64(c.file_mode, 0640);
  CHECK_U64(c.force_mono, 0);
  CHECK_STR(c.prom_dir, "");
  CHECK_TRUE(!strncmp(c.dump_dir, "./ncclscope-", 12));
  CHECK_U64(NS_MAX_SERIES_DEFAULT, 4000);
  CHECK_NEAR(NS_WINDOW_SEC_DEFAULT, 10, 0);
}

/* One variable set, the warnings it gives (in order, joined by '\n'). */
static void expect_lines(const char* name, const char* value, const char* want) {
  ns_config c;
  clear_env();
  setenv(name, value, 1);
  load(&c);
  static char got[sizeof lines + 64];
  size_t at = 0;
  for (int i = 0; i < nlines && i < 64; i++) {
    if (i) got[at++] = '\n';
    size_t n = strlen(lines[i]);
    memcpy(got + at, lines[i], n);
    at += n;
  }
  got[at] = '\0';
  CHECK_STR(got, want);
}

static void test_own_syntax(void) {
  ns_config c;
  clear_env();
  setenv("NCCLSCOPE_EVENT_MASK", "Coll,ProxyOp", 1);
  load(&c);
  CHECK_U64(c.event_mask, (1u << NS_EV_COLL) | (1u << NS_EV_PROXY_OP));
  CHECK_U64(c.detail, NS_DETAIL_FULL);
  setenv("NCCLSCOPE_DETAIL", "ops", 1);
  load(&c);
  CHECK_U64(c.detail, NS_DETAIL_OPS);
  clear_env();
  setenv("NCCL_PROFILE_EVENT_MASK", "0100", 1); /* decimal, not octal */
  load(&c);
  CHECK_U64(c.event_mask, 100);
  expect_lines("NCCLSCOPE_EVENT_MASK", "0x18001",
               "NCCLSCOPE_EVENT_MASK=\"0x18001\" sets bits above 0xFFFF, which name no event type; using 0x8001");
  expect_lines("NCCLSCOPE_EVENT_MASK", "Coll,Bogus",
               "NCCLSCOPE_EVENT_MASK=\"Coll,Bogus\" is neither a number nor a list of event names; using the default "
               "0xff5f");
  expect_lines("NCCLSCOPE_DETAIL", "most", "NCCLSCOPE_DETAIL=\"most\" is not one of ops, sampled, full; using full");
  expect_lines("NCCLSCOPE_CLOCK", "rdtsc",
               "NCCLSCOPE_CLOCK=\"rdtsc\" is not auto, tsc or monotonic; using the default auto");
  clear_env();
  setenv("NCCLSCOPE_CLOCK", "Monotonic", 1);
  load(&c);
  CHECK_U64(c.force_mono, 1);
  expect_lines("NCCLSCOPE_DUMP_SIGNAL", "SIGKILL",
               "NCCLSCOPE_DUMP_SIGNAL=\"SIGKILL\" is not 0 (off), a real-time signal or one of SIGUSR1, SIGUSR2, "
               "SIGHUP, SIGWINCH, SIGPWR, SIGURG, SIGQUIT; using the default 10 (SIGUSR1)");
  clear_env();
  setenv("NCCLSCOPE_DUMP_SIGNAL", "usr2", 1);
  load(&c);
  CHECK_U64(c.dump_signal, SIGUSR2);
  setenv("NCCLSCOPE_DUMP_SIGNAL", "0", 1);
  load(&c);
  CHECK_U64(c.dump_signal, 0);
  expect_lines("NCCLSCOPE_FILE_MODE", "0200",
               "NCCLSCOPE_FILE_MODE=\"0200\" is not an octal mode <= 0777 with owner read and write; using the "
               "default 0640");
  clear_env();
  setenv("NCCLSCOPE_FILE_MODE", "600", 1);
  load(&c);
  CHECK_U64(c.file_mode, 0600);
  setenv("NCCLSCOPE_PROM_DIR", "/var/lib/x", 1);
  setenv("NCCLSCOPE_DUMP_DIR", "/tmp/d", 1);
  load(&c);
  CHECK_STR(c.prom_dir, "/var/lib/x");
  CHECK_STR(c.dump_dir, "/tmp/d");
  /* Control characters never reach a log line. */
  expect_lines("NCCLSCOPE_RING_KB", "8\n\x1b[2J\"",
               "NCCLSCOPE_RING_KB=\"8\\x0a\\x1b[2J\\\"\" is not a number in [4, 1048576] (decimal, or hex with 0x); "
               "using the default 4096");
  /* A handle's maximum age is at least its hold time. */
  clear_env();
  setenv("NCCLSCOPE_HOLD_MS", "5000", 1);
  setenv("NCCLSCOPE_MAX_AGE_MS", "2000", 1);
  load(&c);
  CHECK_U64(nlines, 1);
  CHECK_STR(lines[0], "NCCLSCOPE_MAX_AGE_MS=2000 is below NCCLSCOPE_HOLD_MS=5000; using 5000");
  CHECK_U64(c.max_age_ms, 5000);
}

static void test_unknown_names(void) {
  expect_lines("NCCLSCOPE_RING_K", "8",
               "NCCLSCOPE_RING_K is not a variable ncclscope knows, ignored; the closest one is NCCLSCOPE_RING_KB");
  expect_lines("NCCLSCOPE_HANG_TIMEOUT", "5",
               "NCCLSCOPE_HANG_TIMEOUT is not a variable ncclscope knows, ignored; the closest one is "
               "NCCLSCOPE_HANG_TIMEOUT_SEC");
  /* Every row is known, the CLI's too; lower case is not. */
  const ns_config_var* vars = ns_config_vars();
  for (int i = 0; i < NS_CFG_COUNT; i++) CHECK_TRUE(ns_config_known(vars[i].name, strlen(vars[i].name)));
  CHECK_TRUE(ns_config_known("NCCLSCOPE_PROGRESS_MS", 21));
  CHECK_TRUE(!ns_config_known("NCCLSCOPE_RING_KBX", 18));
  CHECK_TRUE(!ns_config_known("ncclscope_ring_kb", 17));
  CHECK_STR(ns_config_closest("NCCLSCOPE_windowsec", 19), "NCCLSCOPE_WINDOW_SEC");
  /* ties (4 edits from _WINDOW_OPS and _WINDOW_SEC; from _CLOCK, _OTLP and _PROM_DIR): the first name alphabetically */
  CHECK_STR(ns_config_closest("NCCLSCOPE_WINDOW", 16), "NCCLSCOPE_WINDOW_OPS");
  CHECK_STR(ns_config_closest("NCCLSCOPE_PROM", 14), "NCCLSCOPE_CLOCK");
  ns_config c;
  clear_env();
  for (int i = 0; i < NS_CFG_COUNT; i++) setenv(vars[i].name, "", 1);
  load(&c);
  CHECK_U64(nlines, 0);
}

int main(void) {
  test_defaults();
  test_numbers();
  test_own_syntax();
  test_unknown_names();
  CHECK_DONE();
}
