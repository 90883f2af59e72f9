/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: reading a Kineto Chrome-trace JSON (kineto_trace.h). The
 * text is checked by a scanner that finds the extent of every value (no
 * tree is built: traces run to hundreds of MB); of each event only the
 * fields alignment and linking use are read. Single-threaded. */
#include "merge/kineto_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/utf8.h"

#define KT_MAX_DEPTH 256

/* The first place the text is not JSON, and what is wrong there. */
typedef struct {
  size_t at;
  const char* what; /* NULL: no fault found */
  int show_byte;    /* what names the byte at `at` */
} kt_fault;

typedef struct {
  const char* s;
  size_t n;
  kt_fault* fault;
} kt_text;

/* Notes the first fault; returns 0, the scanners' "malformed". */
static size_t fault_at(kt_text t, size_t at, const char* what, int show_byte) {
  if (t.fault && !t.fault->what) *t.fault = (kt_fault){at, what, show_byte};
  return 0;
}

static size_t ws(kt_text t, size_t p) {
  while (p < t.n && (t.s[p] == ' ' || t.s[p] == '\n' || t.s[p] == '\t' || t.s[p] == '\r')) p++;
  return p;
}

static int hex_digit(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

/* p at '"': the offset after the closing quote; 0 when the string is not
 * JSON: unterminated, a raw byte below 0x20 (NUL included), an escape JSON
 * does not have, or bytes that are not well-formed UTF-8 (util/utf8.h).
 * Such a string would be copied into the output as it stands. */
static size_t skip_string(kt_text t, size_t p) {
  size_t open = p;
  for (p++; p < t.n;) {
    unsigned char c = (unsigned char)t.s[p];
    if (c == '"') return p + 1;
    if (c == '\\') {
      char e = p + 1 < t.n ? t.s[p + 1] : '\0';
      if (e == 'u') {
        for (size_t k = 2; k < 6; k++)
          if (p + k >= t.n || !hex_digit(t.s[p + k])) return fault_at(t, p, "a \\u escape without 4 hex digits", 0);
        p += 6;
      } else if (e && strchr("\"\\/bfnrt", e)) {
        p += 2;
      } else {
        return fault_at(t, p, "an escape JSON does not have", 0);
      }
    } else if (c < 0x20) {
      return fault_at(t, p, c ? "a control character not escaped in a string" : "a NUL byte in a string", 1);
    } else if (c < 0x80) {
      p++;
    } else {
      size_t len = ns_utf8_len((const unsigned char*)t.s + p, t.n - p);
      if (!len) return fault_at(t, p, "bytes that are not UTF-8 in a string", 1);
      p += len;
    }
  }
  return fault_at(t, open, "a string that does not end", 0);
}

static int digits(kt_text t, size_t* p) {
  size_t a = *p;
  while (*p < t.n && t.s[*p] >= '0' && t.s[*p] <= '9') ++*p;
  return *p > a;
}

/* A number as JSON writes it, or true, false, null; also NaN, Infinity and
 * -Infinity, which Python's json module writes and reads. The offset after
 * it; 0 when there is none at p. */
static size_t skip_literal(kt_text t, size_t p) {
  static const char* const words[] = {"true", "false", "null", "NaN", "Infinity", "-Infinity"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t n = strlen(words[i]);
    if (t.n - p >= n && memcmp(t.s + p, words[i], n) == 0) return p + n;
  }
  size_t a = p;
  if (p < t.n && t.s[p] == '-') p++;
  if (p < t.n && t.s[p] == '0')
    p++;
  else if (!digits(t, &p))
    return fault_at(t, a, "no JSON value here", 1);
  if (p < t.n && t.s[p] == '.' && (++p, !digits(t, &p))) return fault_at(t, a, "a number without digits after '.'", 0);
  if (p < t.n && (t.s[p] == 'e' || t.s[p] == 'E')) {
    p++;
    if (p < t.n && (t.s[p] == '+' || t.s[p] == '-')) p++;
    if (!digits(t, &p)) return fault_at(t, a, "a number without exponent digits", 0);
  }
  return p;
}

/* The offset after the value at p (white space skipped before it); 0 on malformed input. */
static size_t skip_value(kt_text t, size_t p, int depth) {
  p = ws(t, p);
  if (p >= t.n) return fault_at(t, p, "the text ends where a value should be", 0);
  if (depth > KT_MAX_DEPTH) return fault_at(t, p, "values nested more than 256 deep", 0);
  char c = t.s[p];
  if (c == '"') return skip_string(t, p);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    p = ws(t, p + 1);
    if (p < t.n && t.s[p] == close) return p + 1;
    for (;;) {
      if (c == '{') {
        p = ws(t, p);
        if (p >= t.n || t.s[p] != '"') return fault_at(t, p, "no '\"' where a member's name should start", 1);
        if (!(p = skip_string(t, p))) return 0;
        p = ws(t, p);
        if (p >= t.n || t.s[p] != ':') return fault_at(t, p, "no ':' after a member's name", 1);
        p++;
      }
      if (!(p = skip_value(t, p, depth + 1))) return 0;
      p = ws(t, p);
      if (p >= t.n) return fault_at(t, p, "the text ends inside an object or array", 0);
      if (t.s[p] == close) return p + 1;
      if (t.s[p] != ',')
        return fault_at(t, p, c == '{' ? "no ',' or '}' after a member" : "no ',' or ']' after an element", 1);
      p++;
    }
  }
  return skip_literal(t, p);
}

/* Calls fn for each member of the object at p ('{'); 0 when malformed. */
typedef void (*member_fn)(void* ctx, kt_text t, size_t key, size_t klen, size_t val, size_t vend);
static size_t each_member(kt_text t, size_t p, member_fn fn, void* ctx) {
  p = ws(t, p);
  if (p >= t.n || t.s[p] != '{') return fault_at(t, p, "no '{' where an object should start", 1);
  p = ws(t, p + 1);
  if (p < t.n && t.s[p] == '}') return p + 1;
  for (;;) {
    p = ws(t, p);
    size_t k = p;
    if (p >= t.n || t.s[p] != '"') return fault_at(t, p, "no '\"' where a member's name should start", 1);
    if (!(p = skip_string(t, p))) return 0;
    size_t kend = p;
    p = ws(t, p);
    if (p >= t.n || t.s[p] != ':') return fault_at(t, p, "no ':' after a member's name", 1);
    size_t v = ws(t, p + 1);
    if (!(p = skip_value(t, v, 1))) return 0;
    fn(ctx, t, k + 1, kend - k - 2, v, p);
    p = ws(t, p);
    if (p >= t.n) return fault_at(t, p, "the text ends inside an object", 0);
    if (t.s[p] == '}') return p + 1;
    if (t.s[p] != ',') return fault_at(t, p, "no ',' or '}' after a member", 1);
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
  size_t index_room; /* bytes the member and event tables may take (the limit less the text) */
  size_t members_cap, events_cap;
  int failed;  /* out of memory */
  int too_big; /* the tables would pass index_room */
} top_ctx;

/* Grows *table (of `size`-byte rows, *cap of them) for one more row past
 * `used`, doubling, within what index_room leaves beside `other_bytes`. */
static int grow(top_ctx* x, void** table, size_t* cap, size_t used, size_t size, size_t other_bytes) {
  if (used < *cap) return 0;
  size_t want = *cap ? *cap * 2 : 64;
  size_t room = x->index_room > other_bytes ? (x->index_room - other_bytes) / size : 0;
  if (want > room) want = room;
  if (want <= used) {
    x->too_big = 1;
    return -1;
  }
  void* nt = realloc(*table, want * size);
  if (!nt) {
    x->failed = 1;
    return -1;
  }
  *table = nt;
  *cap = want;
  return 0;
}

static void dist_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  ns_kineto_trace* tr = ctx;
  if (key_is(t, k, klen, "rank")) tr->has_rank = int_value(t, v, vend, &tr->rank);
}

static void top_member(void* ctx, kt_text t, size_t k, size_t klen, size_t v, size_t vend) {
  top_ctx* x = ctx;
  ns_kineto_trace* tr = x->tr;
  if (x->failed || x->too_big) return;
  if (grow(x, (void**)&tr->members, &x->members_cap, tr->nmembers, sizeof *tr->members,
           x->events_cap * sizeof *tr->events) != 0)
    return;
  ns_kt_member* m = &tr->members[tr->nmembers++];
  *m = (ns_kt_member){.key_off = k - 1, .member_off = k - 1, .member_len = vend - (k - 1)};
  if (key_is(t, k, klen, "traceEvents") && t.s[v] == '[') {
    m->is_events = 1;
    size_t p = ws(t, v + 1);
    if (p < t.n && t.s[p] == ']') return;
    while (p < vend) {
      size_t end = skip_value(t, p, 1);
      if (!end) break;
      if (grow(x, (void**)&tr->events, &x->events_cap, tr->nevents, sizeof *tr->events,
               x->members_cap * sizeof *tr->members) != 0)
        return;
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

#define KT_RAISE "raise it with --merge-max-mb N or NCCLSCOPE_MERGE_MAX_MB=N"

static double mib(size_t bytes) { return (double)bytes / (1 << 20); }

/* A plain file: its size is known, so one that is over the limit is refused
 * before a byte is read, and the text takes exactly its size. */
static int read_plain(int fd, const char* path, size_t size, size_t limit, ns_kineto_trace* t, char* err,
                      size_t errlen) {
  if (size > limit) {
    snprintf(err, errlen, "%s: %.1f MiB of JSON is over the merge's memory limit of %zu MiB; " KT_RAISE, path,
             mib(size), limit >> 20);
    return -1;
  }
  t->text = malloc(size ? size : 1);
  if (!t->text) {
    snprintf(err, errlen, "%s: out of memory for its %.1f MiB", path, mib(size));
    return -1;
  }
  while (t->len < size) { /* what was there when it was opened; a file still growing is cut there */
    ssize_t n = read(fd, t->text + t->len, size - t->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      snprintf(err, errlen, "%s: %s", path, strerror(errno));
      return -1;
    }
    if (n == 0) break;
    t->len += (size_t)n;
  }
  return 0;
}

/* A gzip file, or a stream of unknown size: inflated (plain text is read
 * as it is) into a buffer that doubles up to the limit; a stream that
 * passes it is refused as soon as it does (a small gzip can inflate to any
 * size). */
static int read_gzip(int fd, const char* path, size_t limit, ns_kineto_trace* t, char* err, size_t errlen) {
  gzFile g = gzdopen(fd, "rb");
  if (!g) {
    close(fd);
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  size_t cap = 0;
  int rc = 0;
  for (;;) {
    if (t->len == cap) {
      if (cap == limit + 1) { /* one byte past the limit was read */
        snprintf(err, errlen, "%s: inflates (or reads) to more than the merge's memory limit of %zu MiB; " KT_RAISE,
                 path, limit >> 20);
        rc = -1;
        break;
      }
      size_t want = cap ? cap * 2 : 1 << 20;
      if (want > limit + 1) want = limit + 1;
      char* nt = realloc(t->text, want);
      if (!nt) {
        snprintf(err, errlen, "%s: out of memory after %.1f MiB inflated", path, mib(t->len));
        rc = -1;
        break;
      }
      t->text = nt;
      cap = want;
    }
    unsigned want = cap - t->len > (1u << 30) ? (1u << 30) : (unsigned)(cap - t->len);
    int n = gzread(g, t->text + t->len, want);
    int code = Z_OK;
    const char* why = n <= 0 ? gzerror(g, &code) : NULL;
    if (n < 0 || (n == 0 && code != Z_OK && code != Z_STREAM_END)) {
      snprintf(err, errlen, "%s: %s (a truncated or damaged gzip file?)", path, why);
      rc = -1;
      break;
    }
    if (n == 0) break;
    t->len += (size_t)n;
  }
  int closed = gzclose(g);
  if (rc == 0 && closed == Z_BUF_ERROR) { /* gzclose: the gzip stream ended early */
    snprintf(err, errlen, "%s: the gzip stream is truncated (unexpected end of file)", path);
    rc = -1;
  }
  if (rc == 0 && t->len < cap) { /* give back what doubling left unused */
    char* nt = realloc(t->text, t->len ? t->len : 1);
    if (nt) t->text = nt;
  }
  return rc;
}

/* The whole file, inflated when it is gzip (its first two bytes say so). */
static int read_all(const char* path, size_t limit, ns_kineto_trace* t, char* err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  /* a pipe (`<(zcat trace.json.gz)`): read as a stream, zlib taking plain text as it is, within the limit */
  if (!S_ISREG(st.st_mode)) return read_gzip(fd, path, limit, t, err, errlen);
  unsigned char magic[2] = {0, 0};
  ssize_t got = pread(fd, magic, 2, 0);
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return read_gzip(fd, path, limit, t, err, errlen);
  int rc = read_plain(fd, path, (size_t)st.st_size, limit, t, err, errlen);
  close(fd);
  return rc;
}

/* Line and column (from 1) of byte `at`. */
static void line_of(kt_text x, size_t at, size_t* line, size_t* col) {
  *line = 1;
  size_t start = 0;
  for (const char* p = x.s; (p = memchr(p, '\n', x.s + at - p)) != NULL; p++) ++*line, start = (size_t)(p - x.s) + 1;
  *col = at - start + 1;
}

static void say_fault(kt_text x, const kt_fault* f, const char* path, char* err, size_t errlen) {
  size_t line, col;
  line_of(x, f->at, &line, &col);
  char byte[32] = "";
  if (f->show_byte && f->at < x.n) snprintf(byte, sizeof byte, " (byte 0x%02x)", (unsigned char)x.s[f->at]);
  snprintf(err, errlen, "%s: malformed JSON at line %zu, column %zu (offset %zu): %s%s", path, line, col, f->at,
           f->what, byte);
}

int ns_kineto_load(const char* path, size_t max_bytes, ns_kineto_trace* t, char* err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (read_all(path, max_bytes, t, err, errlen) != 0) {
    ns_kineto_free(t);
    return -1;
  }
  kt_fault fault = {0, NULL, 0};
  kt_text x = {t->text, t->len, &fault};
  size_t p = ws(x, 0);
  if (p >= x.n || x.s[p] != '{') {
    snprintf(err, errlen, "%s: not a Kineto trace (a JSON object with \"traceEvents\" was expected)", path);
    ns_kineto_free(t);
    return -1;
  }
  top_ctx tc = {.tr = t, .index_room = max_bytes > t->len ? max_bytes - t->len : 0};
  size_t end = each_member(x, p, top_member, &tc);
  if (tc.failed || tc.too_big) {
    if (tc.failed)
      snprintf(err, errlen, "%s: out of memory for the index of its %zu events", path, t->nevents);
    else
      snprintf(err, errlen,
               "%s: its %.1f MiB of JSON and the index of its events (%zu bytes each) pass the merge's memory limit "
               "of %zu MiB at event %zu; " KT_RAISE,
               path, mib(t->len), sizeof(ns_kt_event), max_bytes >> 20, t->nevents + 1);
    ns_kineto_free(t);
    return -1;
  }
  if (end && ws(x, end) != x.n) fault_at(x, ws(x, end), "more text after the top-level object", 1);
  if (!end || fault.what) {
    if (!fault.what) fault_at(x, x.n, "the text ends early", 0);
    say_fault(x, &fault, path, err, errlen);
    if (fault.at >= x.n) snprintf(err + strlen(err), errlen - strlen(err), " (a truncated file?)");
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
