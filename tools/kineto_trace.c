/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: reading a Kineto Chrome-trace JSON (kineto_trace.h). The
 * text is checked by a scanner that finds the extent of every value (no
 * tree is built: traces run to hundreds of MB); of each event only the
 * fields alignment and linking use are read. Single-threaded. */
#include "kineto_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define KT_MAX_BYTES ((size_t)4 << 30) /* 4 GiB of JSON: far beyond what a viewer opens */
#define KT_MAX_DEPTH 256

typedef struct {
  const char* s;
  size_t n;
} kt_text;

static size_t ws(kt_text t, size_t p) {
  while (p < t.n && (t.s[p] == ' ' || t.s[p] == '\n' || t.s[p] == '\t' || t.s[p] == '\r')) p++;
  return p;
}

/* p at '"': the offset after the closing quote; 0 when unterminated. */
static size_t skip_string(kt_text t, size_t p) {
  for (p++; p < t.n; p++) {
    if (t.s[p] == '\\')
      p++;
    else if (t.s[p] == '"')
      return p + 1;
  }
  return 0;
}

/* The offset after the value at p (white space skipped before it); 0 on malformed input. */
static size_t skip_value(kt_text t, size_t p, int depth) {
  p = ws(t, p);
  if (p >= t.n || depth > KT_MAX_DEPTH) return 0;
  char c = t.s[p];
  if (c == '"') return skip_string(t, p);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    p = ws(t, p + 1);
    if (p < t.n && t.s[p] == close) return p + 1;
    for (;;) {
      if (c == '{') {
        p = ws(t, p);
        if (p >= t.n || t.s[p] != '"' || !(p = skip_string(t, p))) return 0;
        p = ws(t, p);
        if (p >= t.n || t.s[p] != ':') return 0;
        p++;
      }
      if (!(p = skip_value(t, p, depth + 1))) return 0;
      p = ws(t, p);
      if (p >= t.n) return 0;
      if (t.s[p] == close) return p + 1;
      if (t.s[p] != ',') return 0;
      p++;
    }
  }
  size_t a = p;
  while (p < t.n && t.s[p] && strchr("+-0123456789.eEtruefalsn", t.s[p])) p++;
  return p > a ? p : 0;
}

/* Calls fn for each member of the object at p ('{'); 0 when malformed. */
typedef void (*member_fn)(void* ctx, kt_text t, size_t key, size_t klen, size_t val, size_t vend);
static size_t each_member(kt_text t, size_t p, member_fn fn, void* ctx) {
  p = ws(t, p);
  if (p >= t.n || t.s[p] != '{') return 0;
  p = ws(t, p + 1);
  if (p < t.n && t.s[p] == '}') return p + 1;
  for (;;) {
    p = ws(t, p);
    size_t k = p;
    if (p >= t.n || t.s[p] != '"' || !(p = skip_string(t, p))) return 0;
    size_t kend = p;
    p = ws(t, p);
    if (p >= t.n || t.s[p] != ':') return 0;
    size_t v = ws(t, p + 1);
    if (!(p = skip_value(t, v, 1))) return 0;
    fn(ctx, t, k + 1, kend - k - 2, v, p);
    p = ws(t, p);
    if (p >= t.n) return 0;
    if (t.s[p] == '}') return p + 1;
    if (t.s[p] != ',') return 0;
    p++;
  }
}

static int key_is(kt_text t, size_t k, size_t klen, const char* name) {
  return strlen(name) == klen && memcmp(t.s + k, name, klen) == 0;
}

/* A JSON number in microseconds as integer nanoseconds: exact for the
 * decimal forms Kineto writes ("123.456", "1712195495520883.0"), rounded
 * to the ns beyond 3 decimals, through a double for exponent forms. */
static int us_to_ns(kt_text t, size_t v, size_t vend, int64_t* out) {
  if (v >= vend) return 0;
  size_t p = v;
  int neg = t.s[p] == '-';
  if (neg) p++;
  if (p >= vend || t.s[p] < '0' || t.s[p] > '9') return 0;
  for (size_t q = p; q < vend; q++)
    if (t.s[q] == 'e' || t.s[q] == 'E') {
      char num[64];
      size_t n = vend - v < sizeof num - 1 ? vend - v : sizeof num - 1;
      memcpy(num, t.s + v, n);
      num[n] = '\0';
      double d = strtod(num, NULL) * 1000.0;
      if (!(d > -9.2e18 && d < 9.2e18)) return 0;
      *out = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
      return 1;
    }
  int64_t whole = 0, frac = 0;
  int fd = 0, round = 0;
  for (; p < vend && t.s[p] >= '0' && t.s[p] <= '9'; p++) {
    if (whole > (INT64_MAX / 1000 - 9) / 10) return 0;
    whole = whole * 10 + (t.s[p] - '0');
  }
  if (p < vend && t.s[p] == '.')
    for (p++; p < vend && t.s[p] >= '0' && t.s[p] <= '9'; p++, fd++) {
      if (fd < 3)
        frac = frac * 10 + (t.s[p] - '0');
      else if (fd == 3)
        round = t.s[p] >= '5';
    }
  for (; fd < 3; fd++) frac *= 10;
  int64_t ns = whole * 1000 + frac + round;
  *out = neg ? -ns : ns;
  return 1;
}

static int int_value(kt_text t, size_t v, size_t vend, int64_t* out) {
  if (v >= vend || !(t.s[v] == '-' || (t.s[v] >= '0' && t.s[v] <= '9'))) return 0;
  char num[32];
  size_t n = vend - v;
  if (n >= sizeof num) return 0;
  memcpy(num, t.s + v, n);
  num[n] = '\0';
  char* end;
  errno = 0;
  long long x = strtoll(num, &end, 10);
  if (errno || *end) return 0;
  *out = x;
  return 1;
}

static int str_is(kt_text t, size_t v, size_t vend, const char* s) {
  size_t n = strlen(s);
  return vend - v == n + 2 && t.s[v] == '"' && memcmp(t.s + v + 1, s, n) == 0;
}

static int str_prefix(kt_text t, size_t v, size_t vend, const char* s) {
  size_t n = strlen(s);
  return vend - v >= n + 2 && t.s[v] == '"' && memcmp(t.s + v + 1, s, n) == 0;
}

static void arg_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  ns_kt_event* e = ctx;
  if (key_is(t, k, klen, "device"))
    int_value(t, v, vend, &e->device);
  else if (key_is(t, k, klen, "stream"))
    int_value(t, v, vend, &e->stream);
}

/* The categories Kineto gives events on the host (their pid is the process's). */
static const char* const host_cats[] = {"cpu_op",      "user_annotation", "cuda_runtime",
                                        "cuda_driver", "python_function", "cpu_instant_event"};

typedef struct {
  ns_kt_event* e;
  size_t cat, cat_end, name, name_end;
} event_ctx;

static void event_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  event_ctx* x = ctx;
  ns_kt_event* e = x->e;
  if (key_is(t, k, klen, "ph") && vend - v >= 3 && t.s[v] == '"')
    e->ph = t.s[v + 1];
  else if (key_is(t, k, klen, "ts"))
    e->has_ts = us_to_ns(t, v, vend, &e->ts_ns);
  else if (key_is(t, k, klen, "dur"))
    e->has_dur = us_to_ns(t, v, vend, &e->dur_ns);
  else if (key_is(t, k, klen, "pid"))
    e->num_pid = int_value(t, v, vend, &e->pid), e->pid_off = v, e->pid_len = vend - v;
  else if (key_is(t, k, klen, "tid"))
    e->num_tid = int_value(t, v, vend, &e->tid), e->tid_off = v, e->tid_len = vend - v;
  else if (key_is(t, k, klen, "cat"))
    x->cat = v, x->cat_end = vend;
  else if (key_is(t, k, klen, "name"))
    x->name = v, x->name_end = vend;
  else if (key_is(t, k, klen, "id"))
    e->id_off = v, e->id_len = vend - v;
  else if (key_is(t, k, klen, "s") && vend - v == 3 && t.s[v] == '"')
    e->scope = t.s[v + 1];
  else if (key_is(t, k, klen, "args") && vend > v && t.s[v] == '{')
    e->args_off = v, e->args_len = vend - v, each_member(t, v, arg_member, e);
}

static void read_event(kt_text t, ns_kt_event* e) {
  e->device = e->stream = -1;
  event_ctx x = {e, 0, 0, 0, 0};
  if (t.s[e->off] == '{') each_member(t, e->off, event_member, &x);
  if (x.name_end > x.name + 1 && t.s[x.name] == '"') {
    e->name_off = x.name + 1;
    e->name_len = x.name_end - x.name - 2;
  }
  if (x.cat_end > x.cat + 1 && t.s[x.cat] == '"') {
    e->cat_off = x.cat + 1;
    e->cat_len = x.cat_end - x.cat - 2;
  }
  if (x.cat_end) {
    e->is_nccl_kernel =
        str_is(t, x.cat, x.cat_end, "kernel") && x.name_end &&
        (str_prefix(t, x.name, x.name_end, "ncclDevKernel") || str_prefix(t, x.name, x.name_end, "ncclKernel"));
    for (size_t i = 0; i < sizeof host_cats / sizeof host_cats[0]; i++)
      if (str_is(t, x.cat, x.cat_end, host_cats[i])) e->is_host = 1;
  }
}

typedef struct {
  ns_kineto_trace* tr;
  int failed;
} top_ctx;

static void dist_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  ns_kineto_trace* tr = ctx;
  if (key_is(t, k, klen, "rank")) tr->has_rank = int_value(t, v, vend, &tr->rank);
}

static void top_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  top_ctx* x = ctx;
  ns_kineto_trace* tr = x->tr;
  ns_kt_member* nm = realloc(tr->members, (tr->nmembers + 1) * sizeof *nm);
  if (!nm) {
    x->failed = 1;
    return;
  }
  tr->members = nm;
  ns_kt_member* m = &tr->members[tr->nmembers++];
  *m = (ns_kt_member){.key_off = k - 1, .member_off = k - 1, .member_len = vend - (k - 1)};
  if (key_is(t, k, klen, "traceEvents") && t.s[v] == '[') {
    m->is_events = 1;
    size_t p = ws(t, v + 1), cap = 0;
    if (p < t.n && t.s[p] == ']') return;
    while (p < vend) {
      size_t end = skip_value(t, p, 1);
      if (!end) break;
      if (tr->nevents == cap) {
        cap = cap ? cap * 2 : 4096;
        ns_kt_event* ne = realloc(tr->events, cap * sizeof *ne);
        if (!ne) {
          x->failed = 1;
          return;
        }
        tr->events = ne;
      }
      ns_kt_event* e = &tr->events[tr->nevents++];
      memset(e, 0, sizeof *e);
      e->off = ws(t, p);
      e->len = end - e->off;
      read_event(t, e);
      p = ws(t, end);
      if (p < vend && t.s[p] == ',')
        p = ws(t, p + 1);
      else
        break;
    }
  } else if (key_is(t, k, klen, "baseTimeNanoseconds")) {
    tr->has_base = int_value(t, v, vend, &tr->base_ns);
  } else if (key_is(t, k, klen, "distributedInfo") && t.s[v] == '{') {
    each_member(t, v, dist_member, tr);
  } else if ((key_is(t, k, klen, "host_name") || key_is(t, k, klen, "hostname") || key_is(t, k, klen, "hostName")) &&
             t.s[v] == '"') {
    size_t n = vend - v - 2 < sizeof tr->host - 1 ? vend - v - 2 : sizeof tr->host - 1;
    memcpy(tr->host, t.s + v + 1, n);
    tr->host[n] = '\0';
  }
}

/* The whole file, inflated when it is gzip (zlib reads plain files as they are). */
static int read_all(const char* path, ns_kineto_trace* t, char* err, size_t errlen) {
  gzFile g = gzopen(path, "rb");
  if (!g) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOENT));
    return -1;
  }
  size_t cap = 1 << 20;
  t->text = malloc(cap);
  t->len = 0;
  for (;;) {
    if (!t->text) break;
    if (t->len == cap) {
      if (cap >= KT_MAX_BYTES) {
        snprintf(err, errlen, "%s: larger than %zu bytes of JSON", path, KT_MAX_BYTES);
        gzclose(g);
        return -1;
      }
      char* nt = realloc(t->text, cap * 2);
      if (!nt) break;
      t->text = nt;
      cap *= 2;
    }
    unsigned want = cap - t->len > (1u << 30) ? (1u << 30) : (unsigned)(cap - t->len);
    int n = gzread(g, t->text + t->len, want);
    if (n < 0) {
      int code;
      const char* why = gzerror(g, &code);
      snprintf(err, errlen, "%s: %s (a truncated or damaged gzip file?)", path, why);
      gzclose(g);
      return -1;
    }
    if (n == 0) {
      int code;
      const char* why = gzerror(g, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        snprintf(err, errlen, "%s: %s (a truncated or damaged gzip file?)", path, why);
        gzclose(g);
        return -1;
      }
      break;
    }
    t->len += (size_t)n;
  }
  int rc = gzclose(g);
  if (!t->text) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  if (rc == Z_BUF_ERROR) { /* gzclose: the gzip stream ended early */
    snprintf(err, errlen, "%s: the gzip stream is truncated (unexpected end of file)", path);
    return -1;
  }
  return 0;
}

int ns_kineto_load(const char* path, ns_kineto_trace* t, char* err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (read_all(path, t, err, errlen) != 0) {
    ns_kineto_free(t);
    return -1;
  }
  kt_text x = {t->text, t->len};
  size_t p = ws(x, 0);
  if (p >= x.n || x.s[p] != '{') {
    snprintf(err, errlen, "%s: not a Kineto trace (a JSON object with \"traceEvents\" was expected)", path);
    ns_kineto_free(t);
    return -1;
  }
  top_ctx tc = {t, 0};
  size_t end = each_member(x, p, top_member, &tc);
  if (!end || ws(x, end) != x.n || tc.failed) {
    size_t last = x.n; /* a text that does not end with the object's '}' was cut */
    while (last > 0 && (x.s[last - 1] == ' ' || x.s[last - 1] == '\n' || x.s[last - 1] == '\r' || x.s[last - 1] == '\t'))
      last--;
    snprintf(err, errlen, "%s: %s%s", path, tc.failed ? "out of memory" : "malformed JSON",
             !tc.failed && (last == 0 || x.s[last - 1] != '}') ? " (it ends early: a truncated file?)" : "");
    ns_kineto_free(t);
    return -1;
  }
  int has_events = 0;
  for (size_t i = 0; i < t->nmembers; i++) has_events |= t->members[i].is_events;
  if (!has_events) {
    snprintf(err, errlen, "%s: no \"traceEvents\" array: not a Kineto/Chrome trace", path);
    ns_kineto_free(t);
    return -1;
  }
  return 0;
}

void ns_kineto_free(ns_kineto_trace* t) {
  free(t->text);
  free(t->members);
  free(t->events);
  memset(t, 0, sizeof *t);
}
