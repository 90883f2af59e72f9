/* ncclscope sinks: the growable byte buffer (sbuf.h). */
#include "sinks/sbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_sbuf_reserve(ns_sbuf* b, size_t n) {
  if (b->failed) return -1;
  size_t limit = b->limit ? b->limit : NS_SBUF_LIMIT;
  if (n > limit || b->len > limit - n) {
    b->failed = 1;
    return -1;
  }
  if (b->len + n <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : 1024;
  while (nc < b->len + n) nc *= 2;
  uint8_t* d = realloc(b->data, nc);
  if (!d) {
    b->failed = 1;
    return -1;
  }
  b->data = d;
  b->cap = nc;
  return 0;
}

void ns_sbuf_put(ns_sbuf* b, const void* p, size_t n) {
  if (!n || ns_sbuf_reserve(b, n) != 0) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

void ns_sbuf_str(ns_sbuf* b, const char* s) { ns_sbuf_put(b, s, strlen(s)); }

void ns_sbuf_printf(ns_sbuf* b, const char* fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    ns_sbuf_put(b, tmp, (size_t)n);
    return;
  }
  if (ns_sbuf_reserve(b, (size_t)n + 1) != 0) return;
  va_start(ap, fmt);
  vsnprintf((char*)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void ns_sbuf_json_str(ns_sbuf* b, const char* s) {
  static const char hex[] = "0123456789abcdef";
  ns_sbuf_put(b, "\"", 1);
  for (const unsigned char* p = (const unsigned char*)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      ns_sbuf_put(b, e, 2);
    } else if (*p < 0x20 || *p == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      ns_sbuf_put(b, e, 6);
    } else {
      ns_sbuf_put(b, p, 1);
    }
  }
  ns_sbuf_put(b, "\"", 1);
}

void ns_fmt_double(char* out, size_t cap, double v) {
  if (!isfinite(v)) v = 0;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) break;
  }
}

void ns_sbuf_json_double(ns_sbuf* b, double v) {
  char tmp[40];
  ns_fmt_double(tmp, sizeof tmp, v);
  ns_sbuf_str(b, tmp);
}

void ns_sbuf_reset(ns_sbuf* b) {
  b->len = 0;
  b->failed = 0;
}

void ns_sbuf_free(ns_sbuf* b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}
