/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: OTEL_* environment variables (cold: the first init of a
 * session). See otel.h; the defaults are the OTLP exporter specification's:
 * http://localhost:4318/v1/metrics, http/protobuf, 10 s, no compression. */
#include "config/otel.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/warn.h"
#include "util/url_redact.h"

static void warn_value(ns_otel_warn_fn warn, const char* name, const char* value, const char* why, const char* used) {
  if (!warn) return;
  char esc[400], msg[700];
  ns_config_escape(value, esc, sizeof esc);
  snprintf(msg, sizeof msg, "%s=\"%s\" %s; using %s", name, esc, why, used);
  warn(msg);
}

/* An endpoint is quoted without its user-info and query values (a password or token may be there). */
static void warn_endpoint(ns_otel_warn_fn warn, const char* name, const char* value, const char* used) {
  char shown[NS_OTEL_URL_MAX];
  ns_url_redact(value, shown, sizeof shown);
  warn_value(warn, name, shown, "is not an http:// or https:// URL", used);
}

/* The metrics variable if set, else the general one; *name says which. */
static const char* pick(const char* metrics, const char* general, const char** name) {
  const char* s = getenv(metrics);
  if (s && *s) {
    *name = metrics;
    return s;
  }
  s = getenv(general);
  *name = general;
  return s && *s ? s : NULL;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes [s, s + n) into out (trimmed of spaces); -1 on a bad
 * escape, a control byte or overflow. */
static int decode(const char* s, size_t n, char* out, size_t cap) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if (c == '%') {
      if (i + 2 >= n) return -1;
      int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
      if (hi < 0 || lo < 0) return -1;
      c = hi * 16 + lo;
      i += 2;
    }
    if (c < 0x20 || c == 0x7f || o + 1 >= cap) return -1;
    out[o++] = (char)c;
  }
  out[o] = '\0';
  return 0;
}

/* "k1=v1,k2=v2" (W3C baggage style, percent-encoded values) into pairs;
 * the number of pairs, or -1 when any pair is bad (then none is used). */
static int parse_pairs(const char* s, char (*keys)[64], char (*vals)[128], unsigned cap, size_t valcap) {
  unsigned n = 0;
  const char* p = s;
  while (*p) {
    const char* end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char* eq = memchr(p, '=', (size_t)(end - p));
    if (!eq || n >= cap) return -1;
    char k[64], v[256];
    if (decode(p, (size_t)(eq - p), k, sizeof k) != 0 || !k[0]) return -1;
    if (decode(eq + 1, (size_t)(end - eq - 1), v, sizeof v) != 0 || strlen(v) >= valcap) return -1;
    snprintf(keys[n], 64, "%s", k);
    snprintf(vals[n], valcap, "%s", v);
    n++;
    p = *end ? end + 1 : end;
  }
  return (int)n;
}

static int is_token(const char* k) {
  for (; *k; k++)
    if (!isalnum((unsigned char)*k) && !strchr("!#$%&'*+-.^_`|~", *k)) return 0;
  return 1;
}

/* What is wrong with the first bad pair of a headers value, naming its key
 * at most: a header value (or a pair without '=', which may be one) is a
 * credential as often as not. */
static void bad_header(const char* s, char* what, size_t cap) {
  unsigned i = 0;
  for (const char* p = s; *p; i++) {
    const char* end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char* eq = memchr(p, '=', (size_t)(end - p));
    char k[64], v[256], esc[100];
    if (i >= NS_OTEL_HEADERS_MAX) {
      snprintf(what, cap, "more than %d pairs", NS_OTEL_HEADERS_MAX);
      return;
    }
    if (!eq) {
      snprintf(what, cap, "pair %u has no '=' (not shown)", i + 1);
      return;
    }
    if (decode(p, (size_t)(eq - p), k, sizeof k) != 0 || !k[0]) {
      snprintf(what, cap, "pair %u: its key is empty, too long or badly percent-encoded", i + 1);
      return;
    }
    ns_config_escape(k, esc, sizeof esc);
    if (!is_token(k)) {
      snprintf(what, cap, "pair %u: key \"%s\" is not a token", i + 1, esc);
      return;
    }
    if (decode(eq + 1, (size_t)(end - eq - 1), v, sizeof v) != 0 || strlen(v) >= 128) {
      snprintf(what, cap, "pair %u: the value of key \"%s\" is badly percent-encoded or longer than 127 bytes",
               i + 1, esc);
      return;
    }
    p = *end ? end + 1 : end;
  }
  snprintf(what, cap, "no pair");
}

static int is_http_url(const char* s) { return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8); }

static void load_endpoint(ns_otel_config* c, ns_otel_warn_fn warn, int* set) {
  static const char def[] = "http://localhost:4318/v1/metrics";
  snprintf(c->url, sizeof c->url, "%s", def);
  *set = 0;
  const char* s = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
  if (s && *s) {
    if (!is_http_url(s) || strlen(s) >= sizeof c->url || strpbrk(s, " \t\r\n"))
      warn_endpoint(warn, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", s, def);
    else
      snprintf(c->url, sizeof c->url, "%s", s), *set = 1;
    ns_url_redact(c->url, c->url_shown, sizeof c->url_shown);
    return;
  }
  s = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (s && *s) {
    /* the signal's path goes after the base URL's path, before its query (a token may be there) */
    size_t query = strcspn(s, "?#");
    size_t n = query;
    while (n && s[n - 1] == '/') n--;
    if (!is_http_url(s) || strlen(s) + sizeof "/v1/metrics" > sizeof c->url || strpbrk(s, " \t\r\n"))
      warn_endpoint(warn, "OTEL_EXPORTER_OTLP_ENDPOINT", s, def);
    else
      snprintf(c->url, sizeof c->url, "%.*s/v1/metrics%s", (int)n, s, s + query), *set = 1;
  }
  ns_url_redact(c->url, c->url_shown, sizeof c->url_shown);
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
    if (*out >= 0)
      ns_config_bad_value(warn, vars[b], getenv(vars[b]), "is not a rank in [0, 999999]", "%s=%d", vars[i], *out);
    else
      ns_config_bad_value(warn, vars[b], getenv(vars[b]), "is not a rank in [0, 999999]", "no nccl.local_rank");
  }
}

void ns_otel_config_load(ns_otel_config* c, ns_otel_warn_fn warn) {
  memset(c, 0, sizeof *c);
  int endpoint_set = 0;
  load_endpoint(c, warn, &endpoint_set);

  const char* name;
  const char* s = pick("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", &name);
  c->protocol = NS_OTLP_PROTOBUF;
  if (s) {
    if (!strcmp(s, "http/json")) c->protocol = NS_OTLP_JSON;
    else if (strcmp(s, "http/protobuf") != 0)
      warn_value(warn, name, s, strcmp(s, "grpc") ? "is not http/protobuf or http/json"
                                                  : "is not supported (OTLP/HTTP only: http/protobuf or http/json)",
                 "http/protobuf");
  }

  s = pick("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION", &name);
  if (s) {
    if (!strcasecmp(s, "gzip")) c->gzip = 1;
    else if (strcasecmp(s, "none") != 0) warn_value(warn, name, s, "is not gzip or none", "none");
  }

  c->timeout_ms = 10000;
  s = pick("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT", &name);
  if (s) {
    char* end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || end == s || *s == '-' || v < 1 || v > 600000)
      warn_value(warn, name, s, "is not a number of milliseconds in [1, 600000]", "10000");
    else
      c->timeout_ms = (uint32_t)v;
  }

  s = pick("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS", &name);
  if (s) {
    char keys[NS_OTEL_HEADERS_MAX][64], vals[NS_OTEL_HEADERS_MAX][128];
    int n = parse_pairs(s, keys, vals, NS_OTEL_HEADERS_MAX, sizeof vals[0]);
    for (int i = 0; i < n; i++)
      if (!is_token(keys[i])) n = -1;
    if (n < 0) {
      if (warn) {
        char what[300], msg[512];
        bad_header(s, what, sizeof what);
        snprintf(msg, sizeof msg, "%s is not a list of key=value pairs (percent-encoded, at most %d) with token keys: "
                 "%s; using no extra headers (header values are never logged)", name, NS_OTEL_HEADERS_MAX, what);
        warn(msg);
      }
    } else {
      c->nheaders = (unsigned)n;
      for (int i = 0; i < n; i++) snprintf(c->header[i], sizeof c->header[i], "%.63s: %.127s", keys[i], vals[i]);
    }
  }

  s = getenv("OTEL_RESOURCE_ATTRIBUTES");
  if (s && *s) {
    int n = parse_pairs(s, c->attr_key, c->attr_val, NS_OTEL_ATTRS_MAX, sizeof c->attr_val[0]);
    if (n < 0) {
      warn_value(warn, "OTEL_RESOURCE_ATTRIBUTES", s, "is not a list of key=value pairs (percent-encoded, at most 16)",
                 "none of them");
      n = 0;
    }
    c->nattrs = (unsigned)n;
  }
  snprintf(c->service_name, sizeof c->service_name, "ncclscope");
  for (unsigned i = 0; i < c->nattrs; i++)
    if (!strcmp(c->attr_key[i], "service.name")) snprintf(c->service_name, sizeof c->service_name, "%s", c->attr_val[i]);
  s = getenv("OTEL_SERVICE_NAME");
  if (s && *s) {
    char v[128];
    if (decode(s, strlen(s), v, sizeof v) != 0 || strchr(s, '%'))
      warn_value(warn, "OTEL_SERVICE_NAME", s, "holds control characters or is longer than 127 bytes",
                 c->service_name);
    else
      snprintf(c->service_name, sizeof c->service_name, "%s", s);
  }

  /* On when asked, or when an endpoint says where to. */
  c->enabled = endpoint_set;
  s = getenv("NCCLSCOPE_OTLP");
  if (s && *s) {
    if (!strcasecmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on"))
      c->enabled = 1;
    else if (!strcasecmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off"))
      c->enabled = 0;
    else
      warn_value(warn, "NCCLSCOPE_OTLP", s, "is not 1/0, true/false, yes/no or on/off",
                 endpoint_set ? "1 (an endpoint is set)" : "0");
  }
  load_local_rank(warn, &c->local_rank);
}
