/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the OTLP sender thread (sender.h).
 *
 * Shared state, under `lock`: `next` (the payload waiting, owned by whoever
 * holds the lock), `stop`. The sender thread alone touches `cur` (in
 * flight), the HTTP and gzip handles and the episode state. The counters
 * are atomics written by the sender thread and read by the writer thread
 * (relaxed: they are statistics, nothing is published through them).
 * `abort` is set by ns_sender_stop once the final deadline passed and read by
 * libcurl's progress callback (relaxed: it only ends the request early). */
#include "sinks/sender.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log/log.h"
#include "sinks/dl.h"
#include "util/url_redact.h"

#define NS_OTLP_HEADERS_MAX 20

struct ns_sender {
  ns_sender_config cfg;
  char url[1024];
  char url_shown[1024]; /* url for logs: no user-info or query values (util/url_redact.h) */
  char header_buf[NS_OTLP_HEADERS_MAX][300];
  const char* headers[NS_OTLP_HEADERS_MAX];
  unsigned nheaders;
  ns_http* http;
  ns_gzip* gz;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  ns_buf next; /* lock */
  int has_next; /* lock */
  int stop;     /* lock */
  ns_buf cur, zbuf;
  _Atomic int abort;
  _Atomic uint64_t ok, failed, dropped;
  int failing;            /* sender thread: in an episode of failures */
  uint64_t episode_fails; /* its failed attempts */
};

static void bump(_Atomic uint64_t* c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }

static int retryable(long status) {
  return status < 0 || status == 408 || status == 429 || status == 502 || status == 503 || status == 504;
}

/* Waits up to ms for stop or a new payload; 1 if either came. Called with the lock held. */
static int wait_ms(ns_sender* s, uint32_t ms) {
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)ms * 1000000u;
  dl.tv_sec += (time_t)(ns / 1000000000u);
  dl.tv_nsec = (long)(ns % 1000000000u);
  while (!s->stop && !s->has_next)
    if (pthread_cond_timedwait(&s->cond, &s->lock, &dl) != 0) break;
  return s->stop || s->has_next;
}

/* One attempt; 1 on a 2xx. */
static int attempt(ns_sender* s, const uint8_t* body, size_t len, uint32_t timeout_ms) {
  char why[300];
  why[0] = 0;
  long st = ns_http_post(s->http, s->url, s->headers, s->nheaders, body, len, timeout_ms, &s->abort, why, sizeof why);
  if (st >= 200 && st < 300) {
    bump(&s->ok);
    if (s->failing)
      ns_log_warn("OTLP export to %s works again (%llu failed attempts meanwhile)", s->url_shown,
                  (unsigned long long)s->episode_fails);
    s->failing = 0;
    s->episode_fails = 0;
    return 1;
  }
  bump(&s->failed);
  s->episode_fails++;
  if (!s->failing) {
    char what[340];
    if (st > 0) snprintf(what, sizeof what, "HTTP status %ld", st);
    else snprintf(what, sizeof what, "%s", why[0] ? why : "transport error");
    ns_log_warn("OTLP export to %s failed (%s); retrying up to %d times with backoff, a newer window replaces a "
                "waiting one; counted in ncclscope_otlp_requests_total{result=\"failed\"}, one warning until it works",
                s->url_shown, what, NS_OTLP_RETRIES);
  }
  s->failing = 1;
  return retryable(st) ? 0 : -1;
}

/* Sends s->cur: retries with backoff unless stopped or superseded. */
static void send_cur(ns_sender* s) {
  const uint8_t* body = s->cur.data;
  size_t len = s->cur.len;
  if (s->gz && ns_gzip_compress(s->gz, s->cur.data, s->cur.len, &s->zbuf) == 0) {
    body = s->zbuf.data;
    len = s->zbuf.len;
  }
  uint32_t backoff = 500;
  for (int tries = 0;; tries++) {
    pthread_mutex_lock(&s->lock);
    int final = s->stop;
    pthread_mutex_unlock(&s->lock);
    uint32_t t = s->cfg.timeout_ms;
    if (final && t > NS_OTLP_FINAL_MS) t = NS_OTLP_FINAL_MS;
    int rc = attempt(s, body, len, t);
    if (rc == 1) return;
    if (rc < 0 || final || tries >= NS_OTLP_RETRIES) break;
    pthread_mutex_lock(&s->lock);
    int interrupted = wait_ms(s, backoff);
    pthread_mutex_unlock(&s->lock);
    if (interrupted) break; /* stopping (the next loop sends the newest once), or superseded */
    backoff *= 2;
  }
  bump(&s->dropped);
}

static void* sender_main(void* arg) {
  ns_sender* s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->stop && !s->has_next) pthread_cond_wait(&s->cond, &s->lock);
    if (!s->has_next) break; /* stopping, nothing left */
    ns_buf t = s->cur;       /* take the waiting payload; its old buffer becomes the spare */
    s->cur = s->next;
    s->next = t;
    ns_buf_reset(&s->next);
    s->has_next = 0;
    pthread_mutex_unlock(&s->lock);
    send_cur(s);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

ns_sender* ns_sender_start(const ns_sender_config* cfg) {
  char why[300];
  ns_sender* s = calloc(1, sizeof *s);
  if (!s) {
    ns_log_warn("no memory for the OTLP sender: no OTLP export");
    return NULL;
  }
  s->cfg = *cfg;
  ns_sink_buf_bound(&s->next);
  ns_sink_buf_bound(&s->cur);
  ns_sink_buf_bound(&s->zbuf);
  snprintf(s->url, sizeof s->url, "%s", cfg->url);
  ns_url_redact(cfg->url, s->url_shown, sizeof s->url_shown);
  s->http = ns_http_open(why, sizeof why);
  if (!s->http) {
    ns_log_warn("OTLP export is off: %s; the trace, windows.jsonl and the Prometheus file are not affected", why);
    free(s);
    return NULL;
  }
  if (cfg->gzip) {
    s->gz = ns_gzip_open(why, sizeof why);
    if (!s->gz) ns_log_warn("OTEL_EXPORTER_OTLP_COMPRESSION=gzip: %s; sending uncompressed", why);
  }
  snprintf(s->header_buf[s->nheaders++], sizeof s->header_buf[0], "Content-Type: %s",
           cfg->json ? "application/json" : "application/x-protobuf");
  if (s->gz) snprintf(s->header_buf[s->nheaders++], sizeof s->header_buf[0], "Content-Encoding: gzip");
  snprintf(s->header_buf[s->nheaders++], sizeof s->header_buf[0], "Expect:"); /* no 100-continue round trip */
  for (unsigned i = 0; i < cfg->nheaders && s->nheaders < NS_OTLP_HEADERS_MAX; i++)
    snprintf(s->header_buf[s->nheaders++], sizeof s->header_buf[0], "%s", cfg->headers[i]);
  for (unsigned i = 0; i < s->nheaders; i++) s->headers[i] = s->header_buf[i];
  pthread_mutex_init(&s->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cond, &ca);
  pthread_condattr_destroy(&ca);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the application's signals never land here */
  int rc = pthread_create(&s->thread, NULL, sender_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    ns_log_warn("cannot start the OTLP sender thread: no OTLP export");
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    ns_gzip_close(s->gz);
    ns_http_close(s->http);
    free(s);
    return NULL;
  }
  pthread_setname_np(s->thread, "ncclscope-otlp");
  return s;
}

void ns_sender_submit(ns_sender* s, ns_buf* payload) {
  if (!s || payload->failed) return;
  pthread_mutex_lock(&s->lock);
  if (s->has_next) bump(&s->dropped); /* never sent: the newer window has everything it had */
  ns_buf t = s->next;
  s->next = *payload;
  *payload = t;
  ns_buf_reset(payload);
  s->has_next = 1;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

void ns_sender_stats(ns_sender* s, uint64_t* ok, uint64_t* failed, uint64_t* dropped) {
  *ok = s ? atomic_load_explicit(&s->ok, memory_order_relaxed) : 0;
  *failed = s ? atomic_load_explicit(&s->failed, memory_order_relaxed) : 0;
  *dropped = s ? atomic_load_explicit(&s->dropped, memory_order_relaxed) : 0;
}

void ns_sender_stop(ns_sender* s) {
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  s->stop = 1;
  pthread_cond_signal(&s->cond);
  /* Wait for the sender to finish the last payload, NS_OTLP_FINAL_MS at most
   * (it waits on the same cond: wake it by a broadcast once done). */
  pthread_mutex_unlock(&s->lock);
  struct timespec d = {0, 10000000};
  for (int i = 0; i < NS_OTLP_FINAL_MS / 10; i++) {
    pthread_mutex_lock(&s->lock);
    int idle = !s->has_next;
    pthread_mutex_unlock(&s->lock);
    if (idle && pthread_tryjoin_np(s->thread, NULL) == 0) goto joined;
    nanosleep(&d, NULL);
  }
  atomic_store_explicit(&s->abort, 1, memory_order_relaxed); /* what is still in flight ends now */
  pthread_join(s->thread, NULL);
joined:
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  ns_gzip_close(s->gz);
  ns_http_close(s->http);
  ns_buf_free(&s->next);
  ns_buf_free(&s->cur);
  ns_buf_free(&s->zbuf);
  free(s);
}
