/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the JSON reader (json_reader.h). A recursive-descent parser
 * over the whole text; nodes and unescaped strings come from an arena of
 * chunks, freed at once with the document. */
#include "util/json_reader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/safefile.h"

typedef struct chunk {
  struct chunk* next;
  size_t used, cap;
  max_align_t data[];
} chunk;

struct nsjr_doc {
  chunk* chunks;
  nsjr_val* root;
};

typedef struct {
  nsjr_doc* d;
  const char* p;
  const char* end;
  const char* start;
  char* err;
  size_t errlen;
  int failed;
} parser;

static void* arena(nsjr_doc* d, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  chunk* c = d->chunks;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > (1u << 16) ? n : (1u << 16);
    c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = d->chunks;
    c->used = 0;
    c->cap = cap;
    d->chunks = c;
  }
  void* p = (char*)c->data + c->used;
  c->used += n;
  return p;
}

static void fail(parser* ps, const char* what) {
  if (!ps->failed) snprintf(ps->err, ps->errlen, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
  ps->failed = 1;
}

static void ws(parser* ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

static nsjr_val* node(parser* ps, nsjr_kind k) {
  nsjr_val* v = arena(ps->d, sizeof *v);
  if (!v) {
    fail(ps, "out of memory");
    return NULL;
  }
  memset(v, 0, sizeof *v);
  v->kind = k;
  return v;
}

static int hex4(const char* p, unsigned* out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

static size_t utf8(char* o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000)
    return o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F)), 3;
  o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

ptrdiff_t nsjr_unescape(const char* s, size_t len, char* out, const char** bad, const char** why) {
  const char* p = s;
  const char* q = s + len;
  size_t n = 0;
  while (p < q) {
    char c = *p++;
    if ((unsigned char)c < 0x20) {
      *bad = p, *why = "control character in a string";
      return -1;
    }
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    if (p >= q) {
      *bad = p, *why = "bad escape";
      return -1;
    }
    char e = *p++;
    switch (e) {
      case '"': out[n++] = '"'; break;
      case '\\': out[n++] = '\\'; break;
      case '/': out[n++] = '/'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'n': out[n++] = '\n'; break;
      case 'r': out[n++] = '\r'; break;
      case 't': out[n++] = '\t'; break;
      case 'u': {
        unsigned cp, lo;
        if (q - p < 4 || hex4(p, &cp) != 0) {
          *bad = p, *why = "bad \\u escape";
          return -1;
        }
        p += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && q - p >= 6 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
            lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          p += 6;
        } else if (cp >= 0xD800 && cp < 0xE000) {
          cp = 0xFFFD; /* a lone surrogate */
        }
        n += utf8(out + n, cp);
        break;
      }
      default: *bad = p, *why = "bad escape"; return -1;
    }
  }
  return (ptrdiff_t)n;
}

size_t nsjr_unescape_or_copy(const char* s, size_t len, char* out) {
  const char *bad, *why;
  ptrdiff_t n = nsjr_unescape(s, len, out, &bad, &why);
  if (n >= 0) return (size_t)n;
  memcpy(out, s, len);
  return len;
}

/* A string at ps->p (the opening quote); its unescaped bytes in the arena. */
static const char* string(parser* ps, size_t* len) {
  const char* s = ++ps->p;
  const char* q = s;
  while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= ps->end) {
    fail(ps, "unterminated string");
    return NULL;
  }
  char* out = arena(ps->d, (size_t)(q - s) + 1); /* unescaping never grows */
  if (!out) {
    fail(ps, "out of memory");
    return NULL;
  }
  const char *bad, *why;
  ptrdiff_t n = nsjr_unescape(s, (size_t)(q - s), out, &bad, &why);
  if (n < 0) {
    ps->p = bad;
    fail(ps, why);
    return NULL;
  }
  ps->p = q + 1;
  out[n] = 0;
  *len = (size_t)n;
  return out;
}

static nsjr_val* value(parser* ps, int depth);

static nsjr_val* number(parser* ps) {
  const char* s = ps->p;
  const char* q = s;
  if (q < ps->end && *q == '-') q++;
  const char* digits = q;
  while (q < ps->end && *q >= '0' && *q <= '9') q++;
  if (q == digits || (*digits == '0' && q - digits > 1)) { /* no digits, or a leading zero */
    fail(ps, "bad number");
    return NULL;
  }
  int frac = 0;
  if (q < ps->end && *q == '.') {
    frac = 1;
    const char* f = ++q;
    while (q < ps->end && *q >= '0' && *q <= '9') q++;
    if (q == f) {
      fail(ps, "bad number");
      return NULL;
    }
  }
  if (q < ps->end && (*q == 'e' || *q == 'E')) {
    frac = 1;
    q++;
    if (q < ps->end && (*q == '+' || *q == '-')) q++;
    const char* e = q;
    while (q < ps->end && *q >= '0' && *q <= '9') q++;
    if (q == e) {
      fail(ps, "bad number");
      return NULL;
    }
  }
  char buf[64];
  size_t n = (size_t)(q - s);
  if (n >= sizeof buf) {
    fail(ps, "number too long");
    return NULL;
  }
  memcpy(buf, s, n);
  buf[n] = 0;
  nsjr_val* v = node(ps, NSJR_NUM);
  if (!v) return NULL;
  v->num = strtod(buf, NULL);
  v->negative = *s == '-';
  if (!frac) {
    errno = 0;
    unsigned long long u = strtoull(buf + v->negative, NULL, 10);
    if (errno == 0) v->is_int = 1, v->u = u;
  }
  ps->p = q;
  return v;
}

static int lit(parser* ps, const char* word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return 0;
  ps->p += n;
  return 1;
}

static nsjr_val* container(parser* ps, int depth, int obj) {
  nsjr_val* v = node(ps, obj ? NSJR_OBJ : NSJR_ARR);
  if (!v) return NULL;
  ps->p++;
  nsjr_val** tail = &v->first;
  ws(ps);
  if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
    ps->p++;
    return v;
  }
  for (;;) {
    ws(ps);
    const char* key = NULL;
    if (obj) {
      size_t klen;
      if (ps->p >= ps->end || *ps->p != '"' || !(key = string(ps, &klen))) {
        fail(ps, "expected a key");
        return NULL;
      }
      ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        fail(ps, "expected ':'");
        return NULL;
      }
      ps->p++;
    }
    nsjr_val* m = value(ps, depth + 1);
    if (!m) return NULL;
    m->key = key;
    *tail = m;
    tail = &m->next;
    v->len++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
      ps->p++;
      return v;
    }
    fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    return NULL;
  }
}

static nsjr_val* value(parser* ps, int depth) {
  if (depth > NSJR_MAX_DEPTH) {
    fail(ps, "nested too deep");
    return NULL;
  }
  ws(ps);
  if (ps->p >= ps->end) {
    fail(ps, "unexpected end");
    return NULL;
  }
  char c = *ps->p;
  if (c == '{' || c == '[') return container(ps, depth, c == '{');
  if (c == '"') {
    nsjr_val* v = node(ps, NSJR_STR);
    if (v && !(v->str = string(ps, &v->len))) return NULL;
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return number(ps);
  nsjr_val* v = NULL;
  if (lit(ps, "true")) v = node(ps, NSJR_BOOL), v ? v->num = 1 : 0;
  else if (lit(ps, "false")) v = node(ps, NSJR_BOOL);
  else if (lit(ps, "null")) v = node(ps, NSJR_NULL);
  else fail(ps, "unexpected character");
  return v;
}

nsjr_doc* nsjr_parse(const char* text, size_t len, char* err, size_t errlen) {
  nsjr_doc* d = calloc(1, sizeof *d);
  if (!d) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  parser ps = {.d = d, .p = text, .end = text + len, .start = text, .err = err, .errlen = errlen};
  d->root = value(&ps, 1); /* depth: the containers this value is in, itself included */
  ws(&ps);
  if (!ps.failed && ps.p != ps.end) fail(&ps, "trailing data");
  if (ps.failed || !d->root) {
    nsjr_free(d);
    return NULL;
  }
  return d;
}

nsjr_doc* nsjr_parse_file(const char* path, size_t max_bytes, char* err, size_t errlen) {
  FILE* f = ns_fopen_read(path); /* a path of any length (a dump directory near PATH_MAX) */
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char* buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      if (cap >= max_bytes) break;
      char* nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0) break;
  }
  int toobig = buf && n == cap && !feof(f);
  fclose(f);
  if (!buf || toobig) {
    snprintf(err, errlen, "%s: %s", path, buf ? "too large" : "out of memory");
    free(buf);
    return NULL;
  }
  char msg[256];
  nsjr_doc* d = nsjr_parse(buf, n, msg, sizeof msg);
  if (!d) snprintf(err, errlen, "%s: %s", path, msg);
  free(buf);
  return d;
}

void nsjr_free(nsjr_doc* d) {
  if (!d) return;
  for (chunk* c = d->chunks; c;) {
    chunk* n = c->next;
    free(c);
    c = n;
  }
  free(d);
}

const nsjr_val* nsjr_root(const nsjr_doc* d) { return d ? d->root : NULL; }

const nsjr_val* nsjr_get(const nsjr_val* obj, const char* key) {
  if (!obj || obj->kind != NSJR_OBJ) return NULL;
  for (const nsjr_val* m = obj->first; m; m = m->next)
    if (strcmp(m->key, key) == 0) return m;
  return NULL;
}

const char* nsjr_str(const nsjr_val* v, const char* def) { return v && v->kind == NSJR_STR ? v->str : def; }

int64_t nsjr_i64(const nsjr_val* v, int64_t def) {
  if (!v || v->kind != NSJR_NUM) return def;
  if (v->is_int && v->u <= (uint64_t)INT64_MAX) return v->negative ? -(int64_t)v->u : (int64_t)v->u;
  if (v->is_int && v->negative && v->u == (uint64_t)INT64_MAX + 1) return INT64_MIN;
  return isfinite(v->num) && fabs(v->num) < 9.2e18 ? (int64_t)v->num : def;
}

uint64_t nsjr_u64(const nsjr_val* v, uint64_t def) {
  if (!v || v->kind != NSJR_NUM || v->negative) return def;
  if (v->is_int) return v->u;
  return isfinite(v->num) && v->num < 1.8e19 ? (uint64_t)v->num : def;
}

double nsjr_num(const nsjr_val* v, double def) { return v && v->kind == NSJR_NUM ? v->num : def; }

int nsjr_bool(const nsjr_val* v, int def) { return v && v->kind == NSJR_BOOL ? v->num != 0 : def; }
