/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the text, JSON and page outputs of `ncclscope report`, and
 * the summary printed (see report_write.h). Single-threaded. */
#include "report/report_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/event_details.h"
#include "report/report_html.h"
#include "report/report_ranks_out.h"
#include "report/text_fold.h"
#include "traces/trace_dir.h"
#include "util/json_writer.h"
#include "util/safefile.h"

#define NS_REPORT_LOSSES 0x100u /* sections bit (beside NS_SUMMARY_*): the recording losses table */
#define NS_REPORT_EVENTS 0x200u /* sections bit: the events per type, as assembled */

/* Everything of the report into out (text). */
static int write_text_wide(const ns_report_data* d, const ns_summary_options* opt, FILE* out) {
  ns_report_loss_text(&d->loss, out);
  size_t verdicts = d->xr ? ns_xr_verdict_lines(d->xr, out) : 0;
  if (d->phases) verdicts += ns_phases_verdict_text(d->phases, out);
  if (!verdicts) fprintf(out, "# verdict: no hang, no mismatch, no straggler\n");
  if (d->xr) ns_xr_verdict_sections(d->xr, out);
  fputc('\n', out);
  ns_detail_text(d->detail, out);
  int rc = ns_summary_text(d->sum, opt, out);
  if (d->xr) ns_xr_text(d->xr, opt->wide, out);
  if (d->phases) ns_phases_text(d->phases, out);
  ns_report_losses_text(d->losses, d->nlosses, out);
  ns_events_text(d->events, out);
  return rc || ferror(out) ? -1 : 0;
}

typedef int (*report_writer)(const ns_report_data* d, const ns_summary_options* opt, FILE* out);

/* What w writes, in memory: *buf (the caller frees it, whatever the result), *len. */
static int to_memory(report_writer w, const ns_report_data* d, const ns_summary_options* opt, char** buf, size_t* len) {
  *buf = NULL;
  *len = 0;
  FILE* mem = open_memstream(buf, len);
  if (!mem) return -1;
  int rc = w(d, opt, mem);
  if (fclose(mem) != 0) rc = -1;
  return rc;
}

/* The same, folded to NS_REPORT_COLUMNS unless --wide. */
static int write_text(const ns_report_data* d, const ns_summary_options* opt, FILE* out) {
  if (opt->wide) return write_text_wide(d, opt, out);
  char* buf;
  size_t len;
  int rc = to_memory(write_text_wide, d, opt, &buf, &len);
  if (rc == 0) rc = ns_text_fold(out, buf, len, NS_REPORT_COLUMNS);
  free(buf);
  return rc;
}

/* The library's JSON object with the cross-rank members ("hosts", "hangs",
 * "lateness", "crossRank") and "processCounters" added: it is produced into
 * memory and its closing brace replaced. */
static int write_json(const ns_report_data* d, const ns_summary_options* opt, FILE* out) {
  char* buf = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (!mem) return -1;
  int rc = ns_summary_json(d->sum, opt, mem);
  if (fclose(mem) != 0) rc = -1;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) len--;
  if (rc || len == 0 || buf[len - 1] != '}') {
    free(buf);
    return -1;
  }
  fwrite(buf, 1, len - 1, out);
  free(buf);
  static ns_json j; /* 64 KiB: not on the stack */
  nsj_init(&j, out);
  j.need_comma[0] = 1; /* members of the object begun above: each key after a comma */
  if (d->xr) ns_xr_json(d->xr, &j);
  if (d->phases) ns_phases_json(d->phases, &j);
  nsj_flush(&j);
  nsj_init(&j, out);
  nsj_ws(&j, ",\"processCounters\":");
  nsj_arr_begin(&j);
  for (size_t i = 0; i < d->nlosses; i++) {
    nsj_obj_begin(&j);
    nsj_kstr(&j, "host", d->losses[i].host);
    nsj_ku64(&j, "pid", d->losses[i].pid);
    if (d->losses[i].has)
      ns_write_counter_fields(&j, &d->losses[i].counters);
    else
      nsj_kbool(&j, "missing", 1);
    nsj_obj_end(&j);
  }
  nsj_arr_end(&j);
  nsj_flush(&j);
  fputs(",\"events\":", out);
  nsj_init(&j, out);
  ns_events_json(d->events, &j);
  nsj_flush(&j);
  fputs(",\"loss\":", out);
  nsj_init(&j, out);
  ns_report_loss_json(&d->loss, &j);
  nsj_flush(&j);
  fputs(",\"detail\":", out);
  nsj_init(&j, out);
  ns_detail_json(d->detail, &j);
  nsj_flush(&j);
  fputs("}\n", out);
  return ferror(out) ? -1 : 0;
}

/* report.html: the JSON made into memory, then the page around it. */
static int write_html(const ns_report_data* d, const ns_summary_options* opt, FILE* out) {
  char* buf;
  size_t len;
  int rc = to_memory(write_json, d, opt, &buf, &len);
  if (rc == 0) rc = ns_report_html(out, d->dir, buf, len);
  free(buf);
  return rc;
}

typedef int (*writer_fn)(const ns_report_data*, const ns_summary_options*, FILE*);

/* An output named by the user (`-`: standard output) when path is set,
 * else NAME in the dump directory dirfd: a temporary file beside it renamed
 * over it, so a link planted at DIR/NAME is replaced, never followed. */
static int write_file(const char* path, int dirfd, const char* dir, const char* name, writer_fn fn,
                      const ns_report_data* d, const ns_summary_options* opt) {
  char err[PATH_MAX + 256], shown[PATH_MAX + 64];
  ns_out o;
  int rc;
  if (path) {
    rc = ns_out_open(&o, path, ns_cli_file_mode(), err, sizeof err);
  } else {
    snprintf(shown, sizeof shown, "%s/%s", dir, name);
    rc = dirfd < 0 ? (snprintf(err, sizeof err, "%s: cannot open the directory", shown), -1)
                   : ns_out_open_at(&o, dirfd, name, shown, ns_cli_file_mode(), err, sizeof err);
  }
  if (rc != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s\n", err);
    return -1;
  }
  if (fn(d, opt, o.f) != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s: %s\n", o.shown, strerror(errno));
    ns_out_abort(&o);
    return -1;
  }
  if (ns_out_commit(&o, err, sizeof err) != 0) {
    fprintf(stderr, "ncclscope report: cannot write %s\n", err);
    return -1;
  }
  return 0;
}

int ns_report_write(const ns_report_data* d, const ns_report_options* o, const ns_summary_options* opt) {
  int rc = 0;
  int dirfd = -1;
  if (!o->text_path || !o->json_path || !o->html_path) dirfd = open(d->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (write_file(o->text_path, dirfd, d->dir, "summary.txt", write_text, d, opt)) rc = -1;
  if (write_file(o->json_path, dirfd, d->dir, "summary.json", write_json, d, opt)) rc = -1;
  if (write_file(o->html_path, dirfd, d->dir, "report.html", write_html, d, opt)) rc = -1;
  if (dirfd >= 0) close(dirfd);
  return rc;
}

void ns_report_print(const ns_report_data* d, const ns_report_options* o, const ns_summary_options* opt) {
  FILE* out = o->print;
  if (!o->sections) {
    write_text(d, opt, out);
  } else {
    ns_summary_options popt = *opt;
    popt.sections = o->sections;
    ns_summary_text(d->sum, &popt, out);
    if ((o->sections & NS_SUMMARY_CROSS_RANK) && d->xr) ns_xr_text(d->xr, o->wide, out);
    if (o->sections & NS_REPORT_LOSSES) ns_report_losses_text(d->losses, d->nlosses, out);
    if (o->sections & NS_REPORT_EVENTS) ns_events_text(d->events, out);
  }
  fflush(out);
}
