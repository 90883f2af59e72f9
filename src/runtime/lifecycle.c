/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: init and finalize (cold; any NCCL thread, several at once).
 *
 * One mutex serializes them. The first init of a loaded instance starts a
 * session: configuration, clock calibration, dump directory and trace file,
 * slot region, ring pool, writer thread. The last finalize ends it: the
 * writer drains and flushes everything and is joined, every resource is
 * released and every static reset, because NCCL dlcloses us right after.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock/clock.h"
#include "gpu/uuid.h"
#include "log/log.h"
#include "ring/ring.h"
#include "capture/context.h"
#include "runtime/runtime.h"
#include "runtime/exit.h"
#include "session/session.h"
#include "writer/detail.h"
#include "writer/writer.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_refs;            /* inits answered (traced or not) and not yet finalized */
static int g_disabled;        /* the current session could not start: nothing is traced */
/* Warnings already given by this loaded instance: never reset by session_stop,
 * so a job whose communicators come and go one after another warns once. */
static unsigned g_warned;
enum { WARNED_CONFIG = 1, WARNED_NO_SESSION = 2, WARNED_NO_SLOT = 4 };
/* The context of a communicator that is not traced: not in the context
 * table, so the hot path drops whatever comes with it. */
static char g_untraced;
static int g_exited;          /* the process ended the session without finalize (exit.c) */
static uint32_t g_next_serial;
static uint32_t g_ctx_cursor; /* round-robin: a finalized entry is reused late */

static const char* mask_names(uint32_t m, char* buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (unsigned t = 0; t < NS_EV_COUNT; t++)
    if (m & (1u << t)) {
      int k = snprintf(buf + at, len - at, "%s%s", at ? "," : "", ns_event_short_name(t));
      if (k < 0 || (size_t)k >= len - at) break;
      at += (size_t)k;
    }
  return buf;
}

static void config_warning(const char* msg) {
  if (!(g_warned & WARNED_CONFIG)) ns_log_warn("%s", msg);
}

/* 0, or -1 with the cause in why. */
static int session_start(int abi_version, char* why, size_t whylen) {
  memset(&ns_sess, 0, sizeof ns_sess);
  memset(&ns_cnt, 0, sizeof ns_cnt);
  ns_sess.abi_version = abi_version;
  ns_config_load(&ns_sess.cfg, config_warning);
  g_warned |= WARNED_CONFIG;
  ns_sess.pid = (uint32_t)getpid();
  if (gethostname(ns_sess.hostname, sizeof ns_sess.hostname - 1) != 0) strcpy(ns_sess.hostname, "unknown");
  for (char* p = ns_sess.hostname; *p; p++)
    if (*p == '/') *p = '_';
  ns_clock_init(&ns_sess.clock, ns_sess.cfg.force_mono, 1000); /* refined by the writer */
  if (ns_writer_open(why, whylen) != 0) return -1;
  if (ns_ring_pool_create(ns_sess.cfg.max_threads, ns_sess.cfg.ring_kb * 1024u) != 0) goto fail_rings;
  if (ns_writer_start() != 0) goto fail_writer;
  ns_exit_hooks_install(ns_runtime_process_exit);
  char mb[200];
  char detail[96] = "";
  if (ns_sess.cfg.detail == NS_DETAIL_SAMPLED)
    snprintf(detail, sizeof detail, " (%u ms a second)", ns_sess.cfg.sample_ms);
  ns_log_info("tracing to %s; detail %s%s; event mask 0x%x (%s) at full detail, 0x%x otherwise; clock %s; rings %u x "
              "%u KiB; %u open events tracked per communicator",
              ns_sess.trace_path, ns_detail_name(ns_sess.cfg.detail), detail, ns_sess.cfg.event_mask,
              mask_names(ns_sess.cfg.event_mask, mb, sizeof mb), ns_detail_mask(ns_sess.cfg.event_mask, 0),
              ns_sess.clock.use_tsc ? "tsc" : "clock_gettime", ns_sess.cfg.max_threads, ns_sess.cfg.ring_kb,
              ns_sess.cfg.slab_events);
  return 0;
fail_writer:
  ns_ring_pool_destroy();
fail_rings:
  snprintf(why, whylen, "cannot reserve memory for tracing");
  ns_writer_discard();
  return -1;
}

static void session_stop(void) {
  ns_exit_hooks_remove();
  ns_writer_stop(NS_END_FINALIZE);
  ns_ring_pool_destroy();
  memset(ns_ctx_table, 0, sizeof ns_ctx_table);
  memset(&ns_cnt, 0, sizeof ns_cnt);
  memset(&ns_sess, 0, sizeof ns_sess);
  ns_clock_use_tsc = 0;
  g_next_serial = 0;
  g_ctx_cursor = 0;
  ns_log_reset();
}

static ns_context* ctx_claim(void) {
  for (uint32_t k = 0; k < NS_MAX_CONTEXTS; k++) {
    uint32_t i = (g_ctx_cursor + k) % NS_MAX_CONTEXTS;
    ns_context* c = &ns_ctx_table[i];
    /* C1: acquire pairs with the writer's release when it freed the entry. */
    if (atomic_load_explicit(&c->state, memory_order_acquire) == NS_CTX_FREE) {
      g_ctx_cursor = i + 1;
      return c;
    }
  }
  return NULL;
}

/* Types an NCCL speaking `version` can send. */
static uint32_t version_types(int version) {
  if (version <= 2) return 0x3F;   /* Group .. ProxyCtrl */
  if (version <= 4) return 0xFF;   /* + KernelCh, NetPlugin */
  if (version == 5) return 0xFFF;  /* + API events, KernelLaunch */
  if (version == 6) return 0x7FFF; /* + CE */
  return 0xFFFF;                   /* + KernelPhase */
}

/* Logs, once per loaded instance, why nothing is traced. */
static void warn_once(unsigned what, const char* line) {
  if (g_warned & what) return;
  g_warned |= what;
  ns_log_warn("%s", line);
}

void ns_runtime_init(void** context, const ns_init_args* a) {
  if (!context) return;
  *context = &g_untraced;
  pthread_mutex_lock(&g_lock);
  if (g_exited) { /* the process is ending: nothing is traced any more (the untraced context, mask 0) */
    if (a->mask) __atomic_store_n(a->mask, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  ns_log_set_sink(a->log);
  if (g_refs == 0) {
    char why[PATH_MAX + 200];
    g_disabled = session_start(a->version, why, sizeof why) != 0;
    if (g_disabled) {
      char line[sizeof why + 100];
      snprintf(line, sizeof line, "%s; nothing is traced in this process until its communicators are destroyed "
               "(NCCL runs normally)", why);
      warn_once(WARNED_NO_SESSION, line);
    }
  }
  g_refs++;
  if (g_disabled) {
    /* NCCL's mask is one int for every communicator: 0 means it never calls
     * startEvent, and every communicator of a disabled session is untraced. */
    if (a->mask) __atomic_store_n(a->mask, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  uint32_t mask = ns_sess.cfg.event_mask & version_types(a->version);
  /* NCCL's one global mask: NCCL reads it with relaxed atomics on other
   * threads, so we store it the same way (a plain int: GCC builtin). Full
   * detail or not is the writer's decision of the moment (writer/detail.h);
   * the writer rewrites the mask whenever it changes. */
  if (a->mask) __atomic_store_n(a->mask, (int)ns_detail_mask(mask, ns_detail_full_now()), __ATOMIC_RELAXED);
  ns_context* c = ctx_claim();
  if (c) {
    uint32_t index = (uint32_t)(c - ns_ctx_table);
    memset((char*)c + sizeof c->state, 0, sizeof *c - sizeof c->state);
    c->index = index;
    c->serial = ++g_next_serial;
    c->mask = mask;
    c->nccl_mask = a->mask;
    c->detail_dynamic = a->mask && ns_sess.cfg.detail != NS_DETAIL_FULL;
    c->abi_version = a->version;
    c->rank = a->rank;
    c->nranks = a->nranks;
    c->nnodes = a->nnodes;
    c->comm_id = a->comm_id;
    if (a->comm_name) {
      c->has_name = 1;
      snprintf(c->name, sizeof c->name, "%s", a->comm_name);
    }
    if (!ns_sess.cfg.no_cuda) ns_gpu_uuid(c->gpu_uuid, sizeof c->gpu_uuid);
    c->init_tick = ns_clock_ticks();
    c->init_tid = (uint32_t)syscall(SYS_gettid);
    /* C1: release publishes the fields to the writer (which also reads
     * them under the queue mutex) and to a later ctx_claim. */
    atomic_store_explicit(&c->state, NS_CTX_ACTIVE, memory_order_release);
    ns_writer_post_init(index);
  }
  if (!c) {
    /* Success all the same, with the untraced context: NCCL calls finalize
     * for it, which drops the session reference taken above. Its events are
     * dropped by the hot path (not a context of ours) and counted. */
    char line[200];
    snprintf(line, sizeof line,
             "no free communicator slot (at most %d at once); such communicators are not traced",
             NS_MAX_CONTEXTS);
    warn_once(WARNED_NO_SLOT, line);
    pthread_mutex_unlock(&g_lock);
    return;
  }
  ns_log_info("communicator %u (commId 0x%llx, rank %d of %d) traced through ncclProfiler_v%d", c->serial,
              (unsigned long long)c->comm_id, c->rank, c->nranks, a->version);
  pthread_mutex_unlock(&g_lock);
  *context = c;
}

void ns_runtime_finalize(void* context) {
  pthread_mutex_lock(&g_lock);
  ns_context* c = g_disabled ? NULL : ns_ctx_from_ptr(context);
  if (c) {
    atomic_store_explicit(&c->state, NS_CTX_CLOSING, memory_order_relaxed);
    ns_writer_post_fini(c->index, ns_clock_ticks(), (uint32_t)syscall(SYS_gettid));
  }
  if (g_refs > 0 && --g_refs == 0 && !g_exited) {
    if (g_disabled) {
      g_disabled = 0;
      ns_log_reset();
    } else {
      ns_log_info("last communicator finalized; trace %s closed", ns_sess.trace_path);
      session_stop();
    }
  }
  pthread_mutex_unlock(&g_lock);
}

void ns_runtime_process_exit(void) {
  /* Bounded: a thread stuck inside init or finalize must not hang exit. */
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 2;
  if (pthread_mutex_timedlock(&g_lock, &dl) != 0) return;
  if (g_refs > 0 && !g_exited && !g_disabled) {
    g_exited = 1;
    ns_exit_hooks_remove();
    ns_log_info("process ending with %d communicator(s) not finalized; trace %s closed", g_refs, ns_sess.trace_path);
    /* The rings and slots stay: other threads may call in until the end. */
    ns_writer_stop(NS_END_EXIT);
  }
  pthread_mutex_unlock(&g_lock);
}
