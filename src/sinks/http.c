/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: HTTP POST through libcurl, loaded at run time (dl.h).
 * Runs on the OTLP sender thread only. The ABI used is libcurl's stable one:
 * curl_easy_* and curl_slist_*, and option numbers that never change
 * (curl.h: CURLOPTTYPE_LONG + n, OBJECTPOINT 10000 + n, FUNCTIONPOINT
 * 20000 + n). */
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/dl.h"

enum {
  OPT_WRITEDATA = 10001, OPT_URL = 10002, OPT_ERRORBUFFER = 10010, OPT_POSTFIELDS = 10015, OPT_USERAGENT = 10018,
  OPT_HTTPHEADER = 10023, OPT_XFERINFODATA = 10057, OPT_POSTFIELDSIZE = 60, OPT_NOPROGRESS = 43, OPT_POST = 47,
  OPT_NOSIGNAL = 99, OPT_TIMEOUT_MS = 155, OPT_CONNECTTIMEOUT_MS = 156, OPT_PROTOCOLS = 181,
  OPT_WRITEFUNCTION = 20011, OPT_XFERINFOFUNCTION = 20219,
  INFO_RESPONSE_CODE = 0x200002, PROTO_HTTP_HTTPS = 3, ERROR_SIZE = 256
};

struct curl_slist;
struct ns_http {
  void* lib; /* first: ns_dl_load */
  void* (*easy_init)(void);
  int (*easy_setopt)(void*, int, ...);
  int (*easy_perform)(void*);
  int (*easy_getinfo)(void*, int, ...);
  void (*easy_cleanup)(void*);
  const char* (*easy_strerror)(int);
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*);
  void (*slist_free_all)(struct curl_slist*);
  void* easy; /* kept between requests: its connection is reused */
};

ns_http* ns_http_open(char* why, size_t whylen) {
  static const ns_dl_sym syms[] = {
      {"curl_easy_init", offsetof(ns_http, easy_init)},         {"curl_easy_setopt", offsetof(ns_http, easy_setopt)},
      {"curl_easy_perform", offsetof(ns_http, easy_perform)},   {"curl_easy_getinfo", offsetof(ns_http, easy_getinfo)},
      {"curl_easy_cleanup", offsetof(ns_http, easy_cleanup)},   {"curl_easy_strerror", offsetof(ns_http, easy_strerror)},
      {"curl_slist_append", offsetof(ns_http, slist_append)},   {"curl_slist_free_all", offsetof(ns_http, slist_free_all)}};
  ns_http* h = ns_dl_load("libcurl.so.4", sizeof(ns_http), syms, sizeof syms / sizeof syms[0], why, whylen);
  if (h && !(h->easy = h->easy_init())) {
    snprintf(why, whylen, "curl_easy_init failed");
    ns_http_close(h);
    return NULL;
  }
  return h;
}

void ns_http_close(ns_http* h) {
  if (h && h->easy) h->easy_cleanup(h->easy);
  ns_dl_unload(h);
}

static size_t discard(char* p, size_t size, size_t n, void* user) {
  (void)p;
  (void)user;
  return size * n;
}

/* libcurl's progress callback: non-zero aborts the transfer. */
static int progress(void* user, int64_t dlt, int64_t dln, int64_t ult, int64_t uln) {
  (void)dlt, (void)dln, (void)ult, (void)uln;
  _Atomic int* abort = user;
  return abort && atomic_load_explicit(abort, memory_order_relaxed);
}

long ns_http_post(ns_http* h, const char* url, const char* const* headers, unsigned nheaders, const uint8_t* body,
                  size_t len, uint32_t timeout_ms, _Atomic int* abort, char* why, size_t whylen) {
  struct curl_slist* hl = NULL;
  for (unsigned i = 0; i < nheaders; i++) {
    struct curl_slist* n = h->slist_append(hl, headers[i]);
    if (!n) break;
    hl = n;
  }
  char err[ERROR_SIZE];
  err[0] = '\0';
  void* e = h->easy;
  h->easy_setopt(e, OPT_URL, url);
  h->easy_setopt(e, OPT_PROTOCOLS, (long)PROTO_HTTP_HTTPS);
  h->easy_setopt(e, OPT_NOSIGNAL, 1L); /* threads: no SIGALRM for timeouts */
  h->easy_setopt(e, OPT_POST, 1L);
  h->easy_setopt(e, OPT_POSTFIELDS, (const void*)body);
  h->easy_setopt(e, OPT_POSTFIELDSIZE, (long)len);
  h->easy_setopt(e, OPT_HTTPHEADER, hl);
  h->easy_setopt(e, OPT_TIMEOUT_MS, (long)timeout_ms);
  h->easy_setopt(e, OPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
  h->easy_setopt(e, OPT_USERAGENT, "ncclscope");
  h->easy_setopt(e, OPT_ERRORBUFFER, err);
  h->easy_setopt(e, OPT_WRITEFUNCTION, discard);
  h->easy_setopt(e, OPT_WRITEDATA, (void*)NULL);
  h->easy_setopt(e, OPT_NOPROGRESS, 0L);
  h->easy_setopt(e, OPT_XFERINFOFUNCTION, progress);
  h->easy_setopt(e, OPT_XFERINFODATA, (void*)abort);
  int rc = h->easy_perform(e);
  long status = -1;
  if (rc == 0) {
    h->easy_getinfo(e, INFO_RESPONSE_CODE, &status);
  } else {
    snprintf(why, whylen, "%s", err[0] ? err : h->easy_strerror(rc));
  }
  h->easy_setopt(e, OPT_HTTPHEADER, (void*)NULL);
  h->easy_setopt(e, OPT_ERRORBUFFER, (void*)NULL);
  h->slist_free_all(hl);
  return status;
}
