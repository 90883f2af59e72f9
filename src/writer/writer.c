/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread.
 *
 * Every poll period it:
 *  1. takes the COMM_INIT and COMM_FINI work queued by init/finalize
 *     (lifecycle_queue.h),
 *  2. writes COMM_INIT blocks, then drains every ring (drain.h),
 *  3. writes the COMM_FINI blocks taken in step 1 (their events were in the
 *     rings before finalize queued them, so step 2 drained them),
 *  4. closes the open events NCCL will not stop (open_events.h: never-stopped
 *     ProxyOps, max age, too many open, a communicator's end; their records:
 *     closed_events.h),
 *  5. writes the batch with one write() when a second passed, the batch is
 *     large, or lifecycle blocks are in it (trace_out.h).
 * Every record it encodes goes to the process's analysis (analysis_feed.h):
 * a CLOCKFIT block per communicator at each timed flush when its fit moved
 * and always right before its COMM_FINI; the summary after the END block of
 * the last finalize. The files share their state through writer_state.h.
 */
#include "writer/writer.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "log/log.h"
#include "session/session.h"
#include "writer/analysis_feed.h"
#include "writer/closed_events.h"
#include "writer/counters.h"
#include "writer/detail.h"
#include "writer/detail_out.h"
#include "writer/drain.h"
#include "writer/lifecycle_queue.h"
#include "writer/open_events.h"
#include "writer/restarts.h"
#include "writer/trace_out.h"
#include "writer/writer_state.h"

static struct {
  pthread_t thread;
  int started;
  pthread_mutex_t lock; /* guards stop */
  pthread_cond_t cond;
  int stop;
  unsigned end_how; /* NS_END_*: set with stop */
  int end_signal;
  unsigned max_fill; /* the fullest ring of the last pass, percent: decides the next wait */
} W;

int ns_writer_open(char* why, size_t whylen) {
  if (ns_trace_out_open(why, whylen) != 0) return -1;
  memset(&W, 0, sizeof W);
  memset(&ns_ws, 0, sizeof ns_ws);
  return 0;
}

void ns_writer_discard(void) {
  ns_trace_out_unlink();
  ns_writer_stop(NS_END_FINALIZE);
}

static void write_counters(void) {
  size_t at = ns_block_begin(&ns_ws.out);
  ns_counters_props(&ns_ws.out);
  ns_detail_out_counters(&ns_ws.out, ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()));
  ns_block_end(&ns_ws.out, at, NS_BLOCK_COUNTERS, ns_ws.seq++);
}

static double thread_cpu_ms(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void iteration(void) {
  uint64_t now = ns_mono_ns();
  ns_lq_item *inits, *finis;
  ns_lq_take(&inits, &finis);
  /* Re-anchor before draining: every record drained now is converted from a
   * (TSC, CLOCK_MONOTONIC) pair at most one poll period away from it. */
  ns_clock_refine(&ns_sess.clock);
  ns_lq_write_inits(inits);
  unsigned fill = ns_drain_all();
  if (fill > W.max_fill) W.max_fill = fill;
  uint64_t trace_now = ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks());
  ns_feed_tick(trace_now);
  ns_detail_out(&ns_ws.out, &ns_ws.seq, trace_now);
  ns_lq_write_finis(finis);
  ns_open_run(trace_now, ns_closed_on_close, NULL);
  ns_closed_flush();
  int timed = ns_trace_out_since_flush(now) >= (uint64_t)ns_sess.cfg.flush_ms * 1000000u;
  if (timed) {
    ns_lq_write_clockfits();
    ns_trace_out_anchor();
  }
  if (ns_trace_out_due() || timed) ns_trace_out_flush();
}

/* A termination signal's request (ns_writer_signal_flush), outside W: the
 * handler may run while W is reset. seq counts requests, done the ones the
 * writer finished; final: the process dies after it (the trace ends). */
static struct {
  _Atomic uint32_t live; /* a writer thread runs and takes requests */
  _Atomic uint32_t seq, done;
  _Atomic int final_signal; /* 0: a checkpoint (the application's handler runs next) */
} S;

/* Final: every pending FINI and everything the rings hold, the events still
 * open closed, the counters, END, then the summary. */
static void finish(void) {
  iteration();
  /* After the last finalize only PXN events can be open; at exit, any. */
  unsigned how = W.end_how ? W.end_how : NS_END_FINALIZE;
  ns_open_close_all(how == NS_END_FINALIZE ? NS_CLOSE_COMM_END : NS_CLOSE_EXIT, ns_closed_on_close, NULL);
  ns_closed_flush();
  write_counters();
  ns_trace_out_anchor();
  ns_trace_out_end(how, W.end_signal);
  ns_trace_out_flush();
  ns_trace_out_warn_incomplete();
  /* The trace is on disk (as far as the file took it) before the summary, which may fail. */
  double cpu_trace = thread_cpu_ms();
  int analysed = ns_feed_enabled();
  ns_feed_finish();
  double cpu_all = thread_cpu_ms();
  ns_log_info("writer thread CPU %.1f ms (analysis %s; summary %.1f ms)", cpu_trace, analysed ? "on" : "off",
              cpu_all - cpu_trace);
}

static void* writer_main(void* arg) {
  (void)arg;
  atomic_store_explicit(&ns_ws.tid, (uint32_t)syscall(SYS_gettid), memory_order_relaxed);
  ns_feed_open(ns_drain_strings());
  pthread_mutex_lock(&W.lock);
  while (!W.stop) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    /* A ring a quarter full at the last pass may fill faster than the
     * poll period drains it: come back after 100 us instead (the rate, not
     * the poll period, then sets how often the writer wakes). */
    uint64_t wait_ns = W.max_fill >= 25 ? 100000u : (uint64_t)ns_sess.cfg.poll_ms * 1000000u;
    W.max_fill = 0;
    uint64_t ns = (uint64_t)dl.tv_nsec + wait_ns;
    dl.tv_sec += (time_t)(ns / 1000000000u);
    dl.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&W.cond, &W.lock, &dl);
    if (W.stop) break;
    pthread_mutex_unlock(&W.lock);
    /* A signal handler waits (ns_writer_signal_flush); acquire pairs with its release. */
    uint32_t req = atomic_load_explicit(&S.seq, memory_order_acquire);
    if (req != atomic_load_explicit(&S.done, memory_order_relaxed)) {
      int sig = atomic_load_explicit(&S.final_signal, memory_order_relaxed);
      if (sig) {
        /* The process dies when the handler returns: end the trace now and
         * take no more work (no one joins this thread). */
        W.end_how = NS_END_SIGNAL;
        W.end_signal = sig;
        atomic_store_explicit(&S.live, 0, memory_order_relaxed);
        finish();
        atomic_store_explicit(&S.done, req, memory_order_release);
        return NULL;
      }
      iteration();
      ns_trace_out_flush(); /* a checkpoint: everything so far is on disk */
      atomic_store_explicit(&S.done, req, memory_order_release);
    } else {
      iteration();
    }
    pthread_mutex_lock(&W.lock);
  }
  pthread_mutex_unlock(&W.lock);
  atomic_store_explicit(&S.live, 0, memory_order_relaxed);
  finish();
  return NULL;
}

int ns_writer_signal_flush(int sig, int final, uint64_t timeout_ns) {
  if (!atomic_load_explicit(&S.live, memory_order_relaxed)) return 0;
  if (final) atomic_store_explicit(&S.final_signal, sig, memory_order_relaxed);
  /* Release: the writer that sees the new seq sees final_signal. */
  uint32_t req = atomic_fetch_add_explicit(&S.seq, 1, memory_order_release) + 1;
  for (uint64_t waited = 0; waited < timeout_ns; waited += 1000000u) {
    if ((int32_t)(atomic_load_explicit(&S.done, memory_order_acquire) - req) >= 0) return 1;
    struct timespec d = {0, 1000000}; /* nanosleep: async-signal-safe */
    nanosleep(&d, NULL);
  }
  return 0;
}

int ns_writer_start(void) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&W.cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&W.lock, NULL);
  if (ns_lq_open() != 0) goto fail_queue;
  if (ns_drain_open() != 0) goto fail;
  ns_trace_out_begin();
  /* Before the first init stores NCCL's mask, which reads the decision. */
  ns_detail_open(ns_sess.cfg.detail, ns_sess.cfg.sample_ms, ns_sess.cfg.escalate_sec, ns_sess.cfg.hang_timeout_sec,
                 ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()));
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* NCCL's process signals never land on our thread */
  int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) goto fail;
  pthread_setname_np(W.thread, "ncclscope-wr");
  W.started = 1;
  atomic_store_explicit(&S.final_signal, 0, memory_order_relaxed);
  atomic_store_explicit(&S.done, atomic_load_explicit(&S.seq, memory_order_relaxed), memory_order_relaxed);
  atomic_store_explicit(&S.live, 1, memory_order_release);
  return 0;
fail:
  ns_drain_close();
  ns_lq_close();
fail_queue:
  pthread_cond_destroy(&W.cond);
  pthread_mutex_destroy(&W.lock);
  return -1;
}

void ns_writer_stop(unsigned how) {
  if (W.started) {
    pthread_mutex_lock(&W.lock);
    W.stop = 1;
    W.end_how = how;
    pthread_cond_signal(&W.cond);
    pthread_mutex_unlock(&W.lock);
    pthread_join(W.thread, NULL);
    /* pthread_join returns when the kernel clears the thread's tid, slightly
     * before the task leaves /proc/self/task; leak checkers (NCCL's tests,
     * the simulator) look there right after dlclose. Wait for it, briefly. */
    char task[64];
    snprintf(task, sizeof task, "/proc/self/task/%u", atomic_load_explicit(&ns_ws.tid, memory_order_relaxed));
    for (int i = 0; i < 2000 && access(task, F_OK) == 0; i++) {
      struct timespec d = {0, 50000};
      nanosleep(&d, NULL);
    }
    pthread_cond_destroy(&W.cond);
    pthread_mutex_destroy(&W.lock);
  }
  ns_lq_close();
  ns_trace_out_close();
  ns_buf_free(&ns_ws.out);
  ns_drain_close();
  ns_closed_reset();
  ns_restarts_reset();
  ns_open_reset();
  memset(&W, 0, sizeof W);
  memset(&ns_ws, 0, sizeof ns_ws);
}

void ns_writer_post_init(uint32_t ctx_index) {
  if (W.started) ns_lq_post_init(ctx_index);
}

void ns_writer_post_fini(uint32_t ctx_index, uint64_t tick, uint32_t tid) {
  if (W.started) ns_lq_post_fini(ctx_index, tick, tid);
}
