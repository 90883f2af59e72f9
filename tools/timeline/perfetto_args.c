/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the layout's arguments (a JSON object written by the
 * ns_json writer) as Perfetto debug annotations of the TrackEvent being
 * built (perfetto_packets.h). Single-threaded. */
#include <stdlib.h>
#include <string.h>

#include "util/json_reader.h"
#include "timeline/perfetto_packets.h"

/* ---- arguments: the JSON object the layout writes, as debug annotations ---- */

typedef struct {
  const char* p;
  const char* end;
} cursor;

static void skip_ws(cursor* c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* A JSON string at c (after its opening quote), unescaped into out (at
 * least as long as the input) by the JSON reader's nsjr_unescape_or_copy; returns
 * its length. The writer's strings are valid JSON; anything else (never
 * from ncclscope) is taken as it stands, without unescaping. */
static size_t read_string(cursor* c, char* out) {
  const char* s = c->p;
  const char* q = s;
  while (q < c->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q > c->end) q = c->end;
  size_t n = nsjr_unescape_or_copy(s, (size_t)(q - s), out);
  c->p = q < c->end ? q + 1 : q; /* past the closing quote */
  return n;
}

/* "0x" and 1..20 hex digits: the low 64 bits (an eventAddr keeps its id). */
static int hex_value(const char* s, size_t n, uint64_t* v) {
  if (n < 3 || n > 22 || s[0] != '0' || s[1] != 'x') return 0;
  uint64_t x = 0;
  for (size_t i = 2; i < n; i++) {
    int h = hexval(s[i]);
    if (h < 0) return 0;
    x = x << 4 | (uint64_t)h;
  }
  *v = x;
  return 1;
}

static void read_value(pf_drawer* d, track* t, cursor* c, ns_pb* b, char* tmp);

/* Inside an object or an array whose closing character is `close`: skips
 * white space and commas. 1 at the next member or element, 0 at the close
 * (not consumed) or the end of the text. */
static int next_item(cursor* c, char close) {
  for (;;) {
    skip_ws(c);
    if (c->p >= c->end || *c->p == close) return 0;
    if (*c->p != ',') return 1;
    c->p++;
  }
}

/* The members of an object at c (after '{') as annotations in field `field` of b. */
static void read_members(pf_drawer* d, track* t, cursor* c, ns_pb* b, uint32_t field, char* tmp,
                         const char* skip) {
  while (next_item(c, '}')) {
    if (*c->p != '"') { /* not what the writer makes: stop */
      c->p = c->end;
      return;
    }
    c->p++;
    size_t kn = read_string(c, tmp);
    skip_ws(c);
    if (c->p < c->end && *c->p == ':') c->p++;
    skip_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) { /* nothing to show */
      c->p += 4;
      continue;
    }
    if (skip && strlen(skip) == kn && memcmp(skip, tmp, kn) == 0) { /* the drawing shows it */
      size_t keep = b->buf.len;
      read_value(d, t, c, b, tmp);
      b->buf.len = keep;
      continue;
    }
    ns_pb_begin(b, field);
    uint64_t iid = ns_pf_intern(d, t, ID_ANNOTATION_NAMES, tmp, kn);
    if (iid) ns_pb_uint(b, DA_NAME_IID, iid);
    else ns_pb_bytes(b, 10 /* name */, tmp, kn);
    read_value(d, t, c, b, tmp);
    ns_pb_end(b);
  }
  if (c->p < c->end) c->p++; /* '}' */
}

static void read_value(pf_drawer* d, track* t, cursor* c, ns_pb* b, char* tmp) {
  if (c->p >= c->end) return;
  char ch = *c->p;
  if (ch == '"') {
    c->p++;
    size_t n = read_string(c, tmp);
    uint64_t v;
    uint64_t iid = 0;
    if (hex_value(tmp, n, &v)) ns_pb_uint(b, DA_POINTER, v);
    else if (n <= INTERN_STRING_MAX && (iid = ns_pf_intern(d, t, ID_ANNOTATION_STRINGS, tmp, n)) != 0)
      ns_pb_uint(b, DA_STRING_IID, iid);
    else ns_pb_bytes(b, DA_STRING, tmp, n);
  } else if (ch == '{') {
    c->p++;
    read_members(d, t, c, b, DA_DICT_ENTRIES, tmp, NULL);
  } else if (ch == '[') {
    c->p++;
    while (next_item(c, ']')) {
      ns_pb_begin(b, DA_ARRAY_VALUES);
      read_value(d, t, c, b, tmp);
      ns_pb_end(b);
    }
    if (c->p < c->end) c->p++;
  } else if (ch == 't' || ch == 'f') {
    ns_pb_uint(b, DA_BOOL, ch == 't');
    c->p += ch == 't' ? 4 : 5;
  } else if (ch == 'n' && c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) { /* an element: no value */
    c->p += 4;
  } else {
    const char* s = c->p;
    int real = 0;
    while (c->p < c->end && strchr("+-0123456789.eE", *c->p)) {
      if (*c->p == '.' || *c->p == 'e' || *c->p == 'E') real = 1;
      c->p++;
    }
    size_t n = (size_t)(c->p - s);
    char num[64];
    if (n == 0 || n >= sizeof num) { /* not a number the writer makes */
      c->p = c->end;
      return;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    if (real) ns_pb_double(b, DA_DOUBLE, strtod(num, NULL));
    else if (num[0] == '-') ns_pb_int(b, DA_INT, strtoll(num, NULL, 10));
    else ns_pb_uint(b, DA_UINT, strtoull(num, NULL, 10));
  }
}

/* The arguments as debug annotations of the TrackEvent being built. */
void ns_pf_annotations(pf_drawer* d, track* t, const ns_draw_args* a) {
  if (!a->fn) return;
  ns_json* j = &d->scratch;
  nsj_init(j, NULL);
  nsj_obj_begin(j);
  a->fn(a->ctx, j);
  nsj_obj_end(j);
  if (j->failed) { /* larger than the scratch buffer: left out, and said so at the end */
    d->args_left_out++;
    return;
  }
  cursor c = {j->buf + 1, j->buf + j->len};
  read_members(d, t, &c, &d->te, TE_DEBUG_ANNOTATIONS, d->text, a->implied);
}
