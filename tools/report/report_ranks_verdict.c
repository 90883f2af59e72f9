/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: the verdict that leads summary.txt, and
 * the mismatches in text and JSON (report_ranks_out.h). */
#include <inttypes.h>
#include <string.h>

#include "report/report_ranks_judge.h"
#include "report/report_ranks_out.h"

static const char* func_name(int16_t f) { return ns_func_name(f); }

/* "AllReduce seq 6 (262144 x ncclFloat32)", the root too where it counts
 * (Broadcast, Reduce) or where it is what differs (`other` is the call
 * compared with; 0 none). */
static void call_text(const ns_xr* x, int16_t func, uint64_t seq, uint32_t call, uint32_t other, char* buf,
                      size_t len) {
  const ns_xrank_call* k = call && call <= x->ncalls ? &x->calls[call - 1] : NULL;
  const ns_xrank_call* o = other && other <= x->ncalls ? &x->calls[other - 1] : NULL;
  if (!k) {
    snprintf(buf, len, "%s seq %" PRIu64, func_name(func), seq);
    return;
  }
  int rooted = func == NS_FUNC_BROADCAST || func == NS_FUNC_REDUCE || (o && o->root != k->root);
  char root[32] = "";
  if (rooted) snprintf(root, sizeof root, ", root %" PRId64, k->root);
  snprintf(buf, len, "%s seq %" PRIu64 " (%" PRIu64 " x %s%s)", func_name(func), seq, k->count,
           k->dtype[0] ? k->dtype : "datatype unknown", root);
}

/* "communicator 0x95d2bc57170d4d2f (world)", the name cut at 24 characters. */
static void comm_head(const ns_xrank_comm* c, char* buf, size_t len) {
  snprintf(buf, len, "communicator 0x%016" PRIx64 "%s%.24s%s", c->comm_id, c->name[0] ? " (" : "", c->name,
           c->name[0] ? ")" : "");
}

/* One mismatch in two lines. */
static void mismatch_text(const ns_xr* x, const ns_xrank_mismatch* m, const char* indent, FILE* out) {
  char got[160], want[160];
  call_text(x, m->got_func, m->got_seq, m->got_call, m->want_call, got, sizeof got);
  call_text(x, m->want_func, m->want_seq, m->want_call, m->got_call, want, sizeof want);
  switch (m->kind) {
  case NS_XRANK_MM_SKIPPED:
    fprintf(out, "%srank %d skipped %s,\n", indent, m->rank, want);
    fprintf(out, "%s  collective #%" PRIu64 " of %u of %u ranks: it runs one behind from there\n", indent, m->pos + 1,
            m->agree, m->ranks);
    break;
  case NS_XRANK_MM_EXTRA:
    fprintf(out, "%srank %d posted one more: %s,\n", indent, m->rank, got);
    fprintf(out, "%s  before %s, collective #%" PRIu64 " of %u of %u ranks\n", indent, want, m->pos + 1, m->agree,
            m->ranks);
    break;
  default:
    fprintf(out, "%srank %d posted %s\n", indent, m->rank, got);
    fprintf(out, "%s  where %u of %u ranks posted %s (collective #%" PRIu64 ")\n", indent, m->agree, m->ranks, want,
            m->pos + 1);
  }
}

static void text_mismatches(const ns_xr* x, FILE* out) {
  fprintf(out,
          "\n# mismatches: ranks whose collectives differ from the others' at the same place of their\n"
          "# communicator's order (function, count, datatype, root; skipped or extra collectives)\n");
  if (!x->nmismatches) {
    fprintf(out, "  none\n");
    return;
  }
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    if (!c->nmm && !c->mm_tie) continue;
    char head[160];
    comm_head(c, head, sizeof head);
    fprintf(out, "  %s, %u ranks: %" PRIu64 " place(s) differ\n", head, c->nranks, c->mm_places);
    for (size_t k = 0; k < c->nmm; k++) mismatch_text(x, &c->mm[k], "    ", out);
    if (c->mm_tie) fprintf(out, "    (at some places no call has a majority of the ranks: none is named there)\n");
  }
}

/* The communicator's stragglers, "3,5"; 0 when none. */
static size_t stragglers(const ns_xrank_comm* c, char* buf, size_t len) {
  size_t at = 0, n = 0;
  buf[0] = 0;
  for (uint32_t r = 0; r < c->nranks && at + 16 < len; r++)
    if (c->ranks[r].outlier) at += (size_t)snprintf(buf + at, len - at, "%s%u", at ? "," : "", r), n++;
  return n;
}

/* The ranks of c with no file at all (no trace with its COMM_INIT, no flight record), "3,5-7"; 0 when none. A
 * rank some traces name but none records never created the communicator, or its process's files are not here. */
static size_t ranks_without_record(const ns_xrank_comm* c, char* buf, size_t len) {
  size_t at = 0, n = 0;
  buf[0] = 0;
  for (uint32_t r = 0; r < c->nranks; r++) {
    if (c->ranks[r].file >= 0) continue;
    uint32_t e = r;
    while (e + 1 < c->nranks && c->ranks[e + 1].file < 0) e++;
    n += e - r + 1;
    if (at + 24 < len) {
      at += (size_t)snprintf(buf + at, len - at, at ? ",%u" : "%u", r);
      if (e > r) at += (size_t)snprintf(buf + at, len - at, "-%u", e);
    }
    r = e;
  }
  return n;
}

size_t ns_xr_verdict_lines(const ns_xr* x, FILE* out) {
  size_t lines = 0;
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    char head[160], who[256];
    comm_head(c, head, sizeof head);
    if (c->hang) {
      char never[128], stuck[128];
      ns_xrank_rank_list(c, NS_XRANK_S_NEVER, never, sizeof never);
      ns_xrank_rank_list(c, NS_XRANK_S_STUCK, stuck, sizeof stuck);
      fprintf(out, "# verdict: HANG in %s at %s seq %" PRIu64 ":\n", head, func_name(c->hang_func), c->hang_seq);
      fprintf(out, "#   never posted by: %s%s; stuck in it: %s%s\n", strcmp(never, "none") ? "rank " : "", never,
              strcmp(stuck, "none") ? "rank " : "", stuck);
      lines++;
    }
    for (size_t k = 0; k < c->nmm; k++) {
      fprintf(out, "# verdict: MISMATCH in %s:\n", head);
      mismatch_text(x, &c->mm[k], "#   ", out);
      lines++;
    }
    if (c->mm_tie && !c->nmm) {
      fprintf(out, "# verdict: MISMATCH in %s: ranks posted different calls, none by a majority\n", head);
      lines++;
    }
    size_t absent = ranks_without_record(c, who, sizeof who);
    if (absent && absent < c->nranks) {
      fprintf(out, "# verdict: INCOMPLETE %s: %s %s of %u left no trace or flight record of it:\n", head,
              absent > 1 ? "ranks" : "rank", who, c->nranks);
      fprintf(out, "#   never created it (its collectives cannot start), or its process's files are not here\n");
      lines++;
    }
    if (stragglers(c, who, sizeof who)) {
      fprintf(out, "# verdict: straggler in %s: rank %s (lateness below)\n", head, who);
      lines++;
    }
  }
  return lines;
}

void ns_xr_verdict_sections(const ns_xr* x, FILE* out) {
  if (x->nhangs) ns_xrank_hangs_text(x, out);
  if (x->nmismatches) text_mismatches(x, out);
}

void ns_xrank_mismatches_tail_text(const ns_xr* x, FILE* out) {
  if (!x->nmismatches) text_mismatches(x, out);
}

static void json_call(const ns_xr* x, ns_json* j, const char* key, int16_t func, uint64_t seq, uint32_t call) {
  nsj_key(j, key);
  nsj_obj_begin(j);
  nsj_kstr(j, "func", func_name(func));
  nsj_ku64(j, "seq", seq);
  if (call && call <= x->ncalls) {
    const ns_xrank_call* k = &x->calls[call - 1];
    nsj_ku64(j, "count", k->count);
    nsj_kstr(j, "datatype", k->dtype);
    nsj_ki64(j, "root", k->root);
  }
  nsj_obj_end(j);
}

void ns_xrank_incomplete_json(const ns_xr* x, ns_json* j) {
  nsj_key(j, "communicatorsIncomplete");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    char who[256];
    size_t absent = ranks_without_record(c, who, sizeof who);
    if (!absent || absent == c->nranks) continue;
    nsj_obj_begin(j);
    nsj_khex(j, "commId", c->comm_id);
    nsj_kstr(j, "name", c->name);
    nsj_ku64(j, "nranks", c->nranks);
    nsj_key(j, "ranksWithoutRecord");
    nsj_arr_begin(j);
    for (uint32_t r = 0; r < c->nranks; r++)
      if (c->ranks[r].file < 0) nsj_u64(j, r);
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}

void ns_xrank_mismatches_json(const ns_xr* x, ns_json* j) {
  nsj_key(j, "mismatches");
  nsj_arr_begin(j);
  for (size_t i = 0; i < x->ncomms; i++) {
    const ns_xrank_comm* c = &x->comms[i];
    if (!c->nmm && !c->mm_tie) continue;
    nsj_obj_begin(j);
    nsj_khex(j, "commId", c->comm_id);
    nsj_kstr(j, "name", c->name);
    nsj_ku64(j, "nranks", c->nranks);
    nsj_ku64(j, "placesDiffering", c->mm_places);
    nsj_kbool(j, "noMajoritySomewhere", c->mm_tie);
    nsj_key(j, "ranks");
    nsj_arr_begin(j);
    for (size_t k = 0; k < c->nmm; k++) {
      const ns_xrank_mismatch* m = &c->mm[k];
      static const char* const kinds[] = {"call", "skipped", "extra"};
      nsj_obj_begin(j);
      nsj_ki64(j, "rank", m->rank);
      nsj_kstr(j, "kind", kinds[m->kind]);
      nsj_ku64(j, "collective", m->pos + 1);
      if (m->kind != NS_XRANK_MM_SKIPPED) json_call(x, j, "posted", m->got_func, m->got_seq, m->got_call);
      json_call(x, j, "othersPosted", m->want_func, m->want_seq, m->want_call);
      nsj_ku64(j, "ranksAgreeing", m->agree);
      nsj_ku64(j, "ranksPosting", m->ranks);
      nsj_obj_end(j);
    }
    nsj_arr_end(j);
    nsj_obj_end(j);
  }
  nsj_arr_end(j);
}
