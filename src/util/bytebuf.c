/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the growable byte buffer (bytebuf.h). */
#include "util/bytebuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_buf_grow(ns_buf* b, size_t n) {
  if (b->failed) return -1;
  if (n <= b->cap - b->len) return 0;
  size_t limit = b->limit ? b->limit : SIZE_MAX / 2;
  if (n > limit || b->len > limit - n) {
    b->failed = 1;
    return -1;
  }
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + n) cap *= 2;
  uint8_t* d = realloc(b->data, cap);
  if (!d) {
    b->failed = 1;
    return -1;
  }
  b->data = d;
  b->cap = cap;
  return 0;
}

void ns_buf_put(ns_buf* b, const void* bytes, size_t n) {
  if (n == 0 || ns_buf_reserve(b, n) != 0) return;
  memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

void ns_buf_str(ns_buf* b, const char* s) { ns_buf_put(b, s, strlen(s)); }

void ns_buf_printf(ns_buf* b, const char* fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    ns_buf_put(b, tmp, (size_t)n);
    return;
  }
  if (ns_buf_reserve(b, (size_t)n + 1) != 0) return;
  va_start(ap, fmt);
  vsnprintf((char*)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void ns_buf_put_varint(ns_buf* b, uint64_t v) {
  if (ns_buf_reserve(b, 10) != 0) return;
  b->len = (size_t)(ns_varint_at(b->data + b->len, v) - b->data);
}

void ns_buf_reset(ns_buf* b) {
  b->len = 0;
  b->failed = 0;
}

void ns_buf_free(ns_buf* b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}
