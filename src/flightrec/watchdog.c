/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope flight recorder: the watchdog's verdicts (see flightrec.h).
 * Each check looks at one operation per communicator, the oldest one not
 * done, so it costs nothing while nothing is stuck. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Appends to buf (NUL-terminated, capacity len); a full buffer ends in "...". */
static void add(char* buf, size_t len, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char* buf, size_t len, const char* fmt, ...) {
  size_t at = strlen(buf);
  if (at + 4 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + at, len - at, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= len - at) memcpy(buf + len - 4, "...", 4);
}

/* "RecvWait" from "ProxyStepRecvWait". */
static const char* step_state(int32_t state) {
  const char* s = state >= 0 ? ns_state_name(state) : NULL;
  if (!s) return "posted";
  return strncmp(s, "ProxyStep", 9) == 0 ? s + 9 : s;
}

static double sec(uint64_t a, uint64_t b) { return a > b ? (double)(a - b) / 1e9 : 0.0; }

void ns_fr_waits_for(const ns_fr* fr, const ns_fr_op* op, uint64_t now, char* buf, size_t len) {
  if (!len) return;
  buf[0] = 0;
  const fr_comm* c = NULL;
  uint64_t* at = ns_idmap_get(&fr->ops, op->id);
  if (at) c = &fr->comms[fr_value_comm(*at)];
  if (!op->started) add(buf, len, "its start was not recorded; ");
  if (!op->proxy_ops && !op->kch) {
    add(buf, len, "nothing of it started on the proxy or the GPU (%s%s)",
        op->stopped ? "enqueued, waiting for its kernel or its peers" : "its enqueue has not ended",
        c && !c->want_kch && !c->want_pop ? "; KernelCh and ProxyOp are not recorded" : "");
    return;
  }
  /* The GPU: channels whose kernel started and did not stop. */
  int running = 0;
  for (uint32_t i = 0; i < op->nch; i++) {
    const ns_fr_chan* ch = &op->ch[i];
    if ((ch->kch & NS_FR_KCH_STARTED) && !(ch->kch & NS_FR_KCH_STOPPED)) {
      add(buf, len, "%s%d", running ? "," : "GPU: channel(s) ", ch->channel);
      running++;
    }
  }
  if (running) add(buf, len, " started, not stopped; ");
  if (c && c->want_kch && op->nchannels && op->kch < op->nchannels)
    add(buf, len, "GPU: %u of %u channels started; ", op->kch, op->nchannels);
  /* The network, per peer and direction: the channels not done, the least advanced one's step. */
  int any = 0;
  for (uint32_t i = 0; i < op->nch; i++) {
    for (int d = 0; d < 2; d++) {
      const ns_fr_dir* di = &op->ch[i].dir[d];
      if (!di->ops || di->ops_done >= di->ops) continue;
      int first = 1; /* the first channel of this (peer, direction) */
      for (uint32_t j = 0; j < i && first; j++)
        for (int e = 0; e < 2; e++) {
          const ns_fr_dir* dj = &op->ch[j].dir[e];
          if (e == d && dj->peer == di->peer && dj->ops && dj->ops_done < dj->ops) first = 0;
        }
      if (!first) continue;
      /* every channel of this peer and direction still running */
      const ns_fr_dir* least = di;
      uint64_t last = di->last_ts;
      add(buf, len, "%s%s rank %d ch ", any ? "; " : "network: ", d ? "send to" : "receive from", di->peer);
      int k = 0;
      for (uint32_t j = i; j < op->nch; j++) {
        const ns_fr_dir* dj = &op->ch[j].dir[d];
        if (dj->peer != di->peer || !dj->ops || dj->ops_done >= dj->ops) continue;
        add(buf, len, "%s%d", k++ ? "," : "", op->ch[j].channel);
        if (dj->steps_done < least->steps_done) least = dj;
        if (dj->last_ts > last) last = dj->last_ts;
      }
      if (!least->steps)
        add(buf, len, ": no step posted");
      else
        add(buf, len, ": %u step(s) done, step %lld %s", least->steps_done, (long long)least->last_step,
            step_state(least->last_state));
      add(buf, len, ", no progress for %.1f s", sec(now, last));
      any = 1;
    }
  }
  if (!any && op->proxy_ops && op->proxy_ops_done < op->proxy_ops) add(buf, len, "network: ProxyOps still running");
  size_t l = strlen(buf);
  while (l && (buf[l - 1] == ' ' || buf[l - 1] == ';')) buf[--l] = 0;
}

static void fill(const ns_fr* fr, const fr_comm* c, const ns_fr_op* op, uint64_t now, ns_fr_stuck* s) {
  memset(s, 0, sizeof *s);
  s->comm = c->comm;
  s->comm_id = c->comm_id;
  s->rank = c->rank;
  s->nranks = c->nranks;
  snprintf(s->comm_name, sizeof s->comm_name, "%s", c->name);
  s->op = *op;
  s->op.ch = NULL;
  s->op.nch = 0;
  s->op.ch_low = 0;
  const char* f = fr_str(fr, op->func_str);
  snprintf(s->func, sizeof s->func, "%s", *f ? f : op->type == NS_EV_P2P ? "P2p" : "unknown");
  s->detect_ns = now;
  s->waited_ns = now > op->t_start ? now - op->t_start : 0;
}

size_t ns_fr_check(ns_fr* fr, uint64_t now, uint64_t timeout_ns, ns_fr_stuck* out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < fr->ncomms && n < max; i++) {
    fr_comm* c = &fr->comms[i];
    if (!c->comm) continue;
    if (c->episode_open) {
      uint64_t* at = ns_idmap_get(&fr->ops, c->episode_op);
      const ns_fr_op* op = at ? fr_at(fr, &fr->comms[fr_value_comm(*at)], fr_value_pos(*at)) : NULL;
      if (!op || op->id != c->episode_op || op->done) {
        out[n] = c->episode;
        out[n].cleared = 1;
        out[n].detect_ns = now;
        if (op && op->id == c->episode_op && op->t_done > op->t_start) out[n].waited_ns = op->t_done - op->t_start;
        /* the dump's history says so too (a later dump must not show it stuck) */
        uint64_t ne = fr->st.episodes, from = ne > FR_EPISODES ? ne - FR_EPISODES : 0;
        for (uint64_t e = from; e < ne; e++) {
          ns_fr_stuck* h = &fr->episodes[e % FR_EPISODES];
          if (h->op.id == c->episode_op && h->comm == c->episode.comm && !h->cleared) {
            h->cleared = 1;
            h->waited_ns = out[n].waited_ns;
          }
        }
        n++;
        c->episode_open = 0;
        if (n >= max) break;
      }
    }
    if (c->first_open >= c->head) continue;
    const ns_fr_op* op = fr_at(fr, c, c->first_open);
    if (op->done || op->id == c->episode_op || now <= op->t_start || now - op->t_start <= timeout_ns) continue;
    ns_fr_stuck* s = &out[n++];
    fill(fr, c, op, now, s);
    ns_fr_waits_for(fr, op, now, s->waits_for, sizeof s->waits_for);
    c->episode_op = op->id;
    c->episode_open = 1;
    c->episodes++;
    c->episode = *s;
    fr->episodes[fr->st.episodes % FR_EPISODES] = *s;
    fr->st.episodes++;
  }
  return n;
}

size_t ns_fr_inflight_get(const ns_fr* fr, uint64_t now, ns_fr_inflight* out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < fr->ncomms && n < max; i++) {
    const fr_comm* c = &fr->comms[i];
    if (!c->comm) continue;
    ns_fr_inflight* f = &out[n++];
    memset(f, 0, sizeof *f);
    f->comm = c->comm;
    f->episodes = c->episodes;
    f->first = c->first_open == 0;
    for (unsigned k = 0; k < FR_SEQ_FUNCS; k++) {
      f->posted += c->posted[k];
      f->completed += c->completed[k];
    }
    if (c->first_open < c->head) {
      const ns_fr_op* op = fr_at(fr, c, c->first_open);
      if (!op->done && now > op->t_start) f->age_ns = now - op->t_start;
      f->children = op->proxy_ops || op->kch;
    }
    if (c->episode_open) { /* as ns_fr_check sees it: the episode's operation, still there and not done */
      uint64_t* at = ns_idmap_get(&fr->ops, c->episode_op);
      const ns_fr_op* op = at ? fr_at(fr, &fr->comms[fr_value_comm(*at)], fr_value_pos(*at)) : NULL;
      if (op && op->id == c->episode_op && !op->done) {
        f->stuck = 1;
        snprintf(f->func, sizeof f->func, "%s", c->episode.func);
        f->seq = c->episode.op.seq;
      }
    }
  }
  return n;
}
