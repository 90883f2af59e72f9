/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: JSON text into a byte buffer (json_text.h). */
#include "sinks/json_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_escape.h"

void ns_buf_json_str(ns_buf* b, const char* s) {
  char chunk[256]; /* escaped through the stack: the buffer grows only by what is written */
  size_t n = strlen(s);
  ns_buf_put(b, "\"", 1);
  while (n) {
    size_t used, w = ns_json_escape(chunk, sizeof chunk, s, n, 0, &used);
    ns_buf_put(b, chunk, w);
    s += used;
    n -= used;
  }
  ns_buf_put(b, "\"", 1);
}

void ns_fmt_double(char* out, size_t cap, double v) {
  if (!isfinite(v)) v = 0;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) break;
  }
}

void ns_buf_json_double(ns_buf* b, double v) {
  char tmp[40];
  ns_fmt_double(tmp, sizeof tmp, v);
  ns_buf_str(b, tmp);
}
