/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: JSON text into a byte buffer (json_text.h). */
#include "sinks/json_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ns_buf_json_str(ns_buf* b, const char* s) {
  static const char hex[] = "0123456789abcdef";
  ns_buf_put(b, "\"", 1);
  for (const unsigned char* p = (const unsigned char*)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      ns_buf_put(b, e, 2);
    } else if (*p < 0x20 || *p == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      ns_buf_put(b, e, 6);
    } else {
      ns_buf_put(b, p, 1);
    }
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
