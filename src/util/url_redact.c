/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: URLs without their credentials, for logs (see url_redact.h). */
#include "util/url_redact.h"

#include <string.h>

typedef struct {
  char* out;
  size_t cap, len; /* len < cap always: out[len] is the NUL */
} text_out;

static void put(text_out* t, const char* s, size_t n) {
  size_t room = t->cap - 1 - t->len;
  if (n > room) n = room;
  memcpy(t->out + t->len, s, n);
  t->len += n;
  t->out[t->len] = 0;
}

static void put_str(text_out* t, const char* s) { put(t, s, strlen(s)); }

/* The query [q, end): each parameter's key kept, its value starred. */
static void put_query(text_out* t, const char* q, const char* end) {
  while (q < end) {
    size_t n = strcspn(q, "&;#");
    if (q + n > end) n = (size_t)(end - q);
    const char* eq = memchr(q, '=', n);
    if (eq) {
      put(t, q, (size_t)(eq - q) + 1);
      put_str(t, "***");
    } else if (n) {
      put_str(t, "***");
    }
    q += n;
    if (q < end) put(t, q++, 1); /* the separator */
  }
}

void ns_url_redact(const char* url, char* out, size_t cap) {
  if (!cap) return;
  text_out t = {out, cap, 0};
  out[0] = 0;
  const char* scheme_end = strstr(url, "://");
  const char* host = scheme_end ? scheme_end + 3 : url;
  size_t authority = strcspn(host, "/?#");
  const char* at = NULL;
  for (const char* p = host; p < host + authority; p++)
    if (*p == '@') at = p;
  if (at) {
    put(&t, url, (size_t)(host - url));
    put_str(&t, "***");
    host = at;
  } else {
    host = url;
  }
  size_t before_query = strcspn(host, "?#");
  put(&t, host, before_query);
  const char* rest = host + before_query;
  const char* fragment = strchr(rest, '#');
  if (*rest == '?') {
    const char* query_end = fragment ? fragment : rest + strlen(rest);
    put(&t, rest, 1);
    put_query(&t, rest + 1, query_end);
  }
  if (fragment) put_str(&t, fragment[1] ? "#***" : "#");
}
