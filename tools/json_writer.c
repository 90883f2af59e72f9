/* ncclscope CLI: streaming JSON writer (see json_writer.h). Single-threaded. */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void nsj_init(ns_json* j, FILE* out) {
  memset(j, 0, sizeof *j);
  j->out = out;
}

/* Separator before a value or key at the current depth. */
static void before_value(ns_json* j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->need_comma[j->depth]) putc(',', j->out);
  j->need_comma[j->depth] = 1;
}

static void open_scope(ns_json* j, char c) {
  before_value(j);
  putc(c, j->out);
  if (j->depth < NSJ_MAX_DEPTH) j->depth++;
  j->need_comma[j->depth] = 0;
}

static void close_scope(ns_json* j, char c) {
  putc(c, j->out);
  if (j->depth > 0) j->depth--;
}

void nsj_obj_begin(ns_json* j) { open_scope(j, '{'); }
void nsj_obj_end(ns_json* j) { close_scope(j, '}'); }
void nsj_arr_begin(ns_json* j) { open_scope(j, '['); }
void nsj_arr_end(ns_json* j) { close_scope(j, ']'); }

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if ill-formed
 * (overlong forms, surrogates and code points above U+10FFFF are ill-formed). */
static size_t utf8_seq_len(const unsigned char* s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return 0;
  if (n < len) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

void nsj_escape(FILE* out, const char* str, size_t n) {
  const unsigned char* s = (const unsigned char*)str;
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
          if (c < 0x20 || c == 0x7F) fprintf(out, "\\u%04x", c);
          else putc(c, out);
      }
      i++;
      continue;
    }
    size_t len = utf8_seq_len(s + i, n - i);
    if (len == 0) {
      fputs("\\ufffd", out); /* one replacement per ill-formed byte */
      i++;
    } else {
      fwrite(s + i, 1, len, out);
      i += len;
    }
  }
}

void nsj_key(ns_json* j, const char* key) {
  before_value(j);
  putc('"', j->out);
  nsj_escape(j->out, key, strlen(key));
  fputs("\":", j->out);
  j->after_key = 1;
}

void nsj_strn(ns_json* j, const char* s, size_t n) {
  before_value(j);
  putc('"', j->out);
  nsj_escape(j->out, s, n);
  putc('"', j->out);
}

void nsj_str(ns_json* j, const char* s) {
  if (!s) nsj_null(j);
  else nsj_strn(j, s, strlen(s));
}

void nsj_u64(ns_json* j, uint64_t v) {
  before_value(j);
  fprintf(j->out, "%" PRIu64, v);
}

void nsj_i64(ns_json* j, int64_t v) {
  before_value(j);
  fprintf(j->out, "%" PRId64, v);
}

void nsj_bool(ns_json* j, int v) {
  before_value(j);
  fputs(v ? "true" : "false", j->out);
}

void nsj_null(ns_json* j) {
  before_value(j);
  fputs("null", j->out);
}

void nsj_f64(ns_json* j, double v) {
  if (!isfinite(v)) {
    nsj_null(j);
    return;
  }
  before_value(j);
  fprintf(j->out, "%.17g", v);
}

void nsj_us(ns_json* j, int64_t ns) {
  before_value(j);
  uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  fprintf(j->out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

void nsj_hex(ns_json* j, uint64_t v) {
  before_value(j);
  fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

void nsj_raw(ns_json* j, const char* text) {
  before_value(j);
  fputs(text, j->out);
}

void nsj_ws(ns_json* j, const char* ws) { fputs(ws, j->out); }

void nsj_line_end(ns_json* j) {
  putc('\n', j->out);
  j->depth = 0;
  j->after_key = 0;
  j->need_comma[0] = 0;
}

void nsj_kstr(ns_json* j, const char* key, const char* s) {
  nsj_key(j, key);
  nsj_str(j, s);
}
void nsj_ku64(ns_json* j, const char* key, uint64_t v) {
  nsj_key(j, key);
  nsj_u64(j, v);
}
void nsj_ki64(ns_json* j, const char* key, int64_t v) {
  nsj_key(j, key);
  nsj_i64(j, v);
}
void nsj_kbool(ns_json* j, const char* key, int v) {
  nsj_key(j, key);
  nsj_bool(j, v);
}
void nsj_kus(ns_json* j, const char* key, int64_t ns) {
  nsj_key(j, key);
  nsj_us(j, ns);
}
void nsj_khex(ns_json* j, const char* key, uint64_t v) {
  nsj_key(j, key);
  nsj_hex(j, v);
}
void nsj_kf64(ns_json* j, const char* key, double v) {
  nsj_key(j, key);
  nsj_f64(j, v);
}
