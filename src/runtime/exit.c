/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: a process that ends without finalizing its communicators.
 *
 * PyTorch and most training scripts exit with communicators alive; torchrun
 * and job schedulers end workers with SIGTERM. NCCL then never calls
 * finalize, and without this file the trace would have no end: no END
 * block, no counters, no summary, and the last poll period of events lost.
 *
 *  - exit() or a return from main: an atexit handler and a library
 *    destructor (whichever runs first) end the session: the writer drains
 *    everything, closes the events still open (NS_CLOSE_EXIT), writes the
 *    counters, END (NS_END_EXIT) and the summary, and is joined. The slot
 *    region and the rings stay mapped: other threads may still call in
 *    until the process is gone.
 *  - SIGTERM, SIGINT: a handler installed only where the application left
 *    the default action or its own handler (never where it ignores the
 *    signal). It asks the writer thread to write what it has and waits for
 *    it, at most NS_SIGNAL_WAIT_NS (nothing in the handler but atomics and
 *    nanosleep, which are async-signal-safe). Where the default action
 *    would follow (the process dies), the writer ends the trace
 *    (NS_END_SIGNAL), then the handler restores the default and raises the
 *    signal again, so the process dies of it as it would have. Where the
 *    application has its own handler, the writer only writes a checkpoint
 *    and the application's handler is called, as if it had been called
 *    directly; tracing goes on if the process does.
 *  - SIGKILL cannot be caught: at most one flush period is lost, as before.
 *  - The dump signal (NCCLSCOPE_DUMP_SIGNAL, SIGUSR1 by default; 0: none)
 *    asks the writer for a flight record (src/writer/flightrec_run.c): the
 *    handler only sets a flag, then calls the application's handler if it
 *    had one. Installed under the same rule (not where the signal is
 *    ignored); where the default action was left, ours replaces it, since a
 *    dump is what the signal was sent for (the default would kill).
 * The handlers are removed when the session ends (if still ours): the
 * library may be unloaded after the last finalize.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/exit.h"

#include "capture/context.h"
#include "session/session.h"
#include "writer/flightrec_run.h"
#include "writer/writer.h"

#define NS_SIGNAL_WAIT_NS (5ull * 1000000000ull)

static const int kSignals[] = {SIGTERM, SIGINT};
#define NSIG_HOOKED (sizeof kSignals / sizeof kSignals[0])

static struct sigaction g_old[NSIG_HOOKED];
static _Atomic int g_installed[NSIG_HOOKED];
static _Atomic int g_session_pid; /* the process whose writer runs; a forked child has none */

/* The dump signal: its number while our handler is installed (0: none), and
 * what was there before (written before ours is installed, read by it). */
static _Atomic int g_dump_sig;
static struct sigaction g_dump_old;

static void on_dump_signal(int sig, siginfo_t* info, void* uctx) {
  int saved_errno = errno;
  if (atomic_load_explicit(&g_session_pid, memory_order_relaxed) == (int)getpid()) ns_writer_request_dump();
  const struct sigaction* old = &g_dump_old;
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) old->sa_sigaction(sig, info, uctx);
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  }
  errno = saved_errno;
}

/* Installs handler for sig unless the application ignores it; *old gets what was there. 1 if installed. */
static int hook(int sig, void (*handler)(int, siginfo_t*, void*), struct sigaction* old) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) return 0;
  if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) return 0; /* the application ignores it */
  *old = cur;
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = handler;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  return sigaction(sig, &ours, NULL) == 0;
}

/* Puts *old back on sig if our handler is still the one installed. */
static void unhook(int sig, void (*handler)(int, siginfo_t*, void*), const struct sigaction* old) {
  struct sigaction cur;
  /* Only if still ours: a handler the application installed since stays. */
  if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler)
    sigaction(sig, old, NULL);
}

static int sig_index(int sig) {
  for (unsigned i = 0; i < NSIG_HOOKED; i++)
    if (kSignals[i] == sig) return (int)i;
  return -1;
}

static void on_signal(int sig, siginfo_t* info, void* uctx) {
  int saved_errno = errno;
  int i = sig_index(sig);
  if (i < 0) return;
  const struct sigaction* old = &g_old[i];
  int dies = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
  if (atomic_load_explicit(&g_session_pid, memory_order_relaxed) == (int)getpid())
    ns_writer_signal_flush(sig, dies, NS_SIGNAL_WAIT_NS);
  if (dies) {
    /* The default action, as the application asked: the signal is blocked
     * while we run, so it is delivered, and kills, when we return. */
    sigaction(sig, old, NULL);
    raise(sig);
  } else if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) old->sa_sigaction(sig, info, uctx);
  } else if (old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  }
  errno = saved_errno;
}

/* Set by the first install, before the atexit handler is registered; read
 * at exit or unload, on the thread that runs them. */
static void (*g_on_process_exit)(void);

static void at_exit(void* unused) {
  (void)unused;
  if (g_on_process_exit) g_on_process_exit();
}

/* The C library's: registers f to run at exit, or when the library whose
 * __dso_handle is passed is unloaded (then it is dropped). */
extern int __cxa_atexit(void (*f)(void*), void* arg, void* dso);
extern void* __dso_handle;

/* A destructor too: a library loaded after the application registered its
 * own atexit handlers is still unloaded (and its destructor run) at exit,
 * and a dlclose with communicators alive runs it as well. */
__attribute__((destructor)) static void at_unload(void) {
  if (g_on_process_exit) g_on_process_exit();
}

void ns_exit_hooks_install(void (*on_process_exit)(void)) {
  static int registered;
  g_on_process_exit = on_process_exit;
  if (!registered) {
    /* Tied to this library: it also runs (and is dropped) at dlclose, never
     * after the code is gone. Not atexit(): an interposed atexit (a
     * sanitizer's, a profiler's) may keep a pointer into us after dlclose. */
    registered = __cxa_atexit(at_exit, NULL, &__dso_handle) == 0;
  }
  atomic_store_explicit(&g_session_pid, (int)getpid(), memory_order_relaxed);
  for (unsigned i = 0; i < NSIG_HOOKED; i++) {
    if (atomic_load_explicit(&g_installed[i], memory_order_relaxed)) continue;
    if (hook(kSignals[i], on_signal, &g_old[i])) atomic_store_explicit(&g_installed[i], 1, memory_order_relaxed);
  }
  int ds = ns_sess.cfg.fr_entries ? ns_sess.cfg.dump_signal : 0;
  if (ds && !atomic_load_explicit(&g_dump_sig, memory_order_relaxed) && hook(ds, on_dump_signal, &g_dump_old))
    atomic_store_explicit(&g_dump_sig, ds, memory_order_relaxed);
}

void ns_exit_hooks_remove(void) {
  atomic_store_explicit(&g_session_pid, 0, memory_order_relaxed);
  for (unsigned i = 0; i < NSIG_HOOKED; i++) {
    if (!atomic_load_explicit(&g_installed[i], memory_order_relaxed)) continue;
    unhook(kSignals[i], on_signal, &g_old[i]);
    atomic_store_explicit(&g_installed[i], 0, memory_order_relaxed);
  }
  int ds = atomic_exchange_explicit(&g_dump_sig, 0, memory_order_relaxed);
  if (ds) unhook(ds, on_dump_signal, &g_dump_old);
}
