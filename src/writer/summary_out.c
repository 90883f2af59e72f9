/* ncclscope: the plugin's summary at the last finalize (writer thread).
 *
 * The text summary goes to NCCL's log at INFO, one line per call, and both
 * forms go to the dump dir as summary-<host>-<pid>.txt / .json: several
 * processes share a dump dir, and `ncclscope report DIR` merges every
 * trace into DIR/summary.txt / summary.json. Files are written to a
 * temporary name and renamed, so a reader never sees half a summary.
 * Nothing here fails NCCL: an error is one warning. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclscope/analysis.h"
#include "log/log.h"
#include "writer/analysis_feed.h"

static void log_lines(const char* text, size_t len) {
  const char* p = text;
  const char* end = text + len;
  while (p < end) {
    const char* nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    ns_log_info("summary: %.*s", (int)n, p);
    p += n + (nl ? 1 : 0);
  }
}

typedef int (*summary_fn)(ns_analysis* const*, size_t, const ns_summary_options*, FILE*);

/* 0 or -1 with errno-ish reason in why. */
static int write_file(const char* path, summary_fn fn, ns_analysis* a, const ns_summary_options* opt,
                      char* why, size_t whylen) {
  char tmp[1400];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (!f) {
    snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
    return -1;
  }
  int rc = fn(&a, 1, opt, f);
  int err = errno;
  if (fclose(f) != 0 && rc == 0) {
    rc = -1;
    err = errno;
  }
  if (rc == 0 && rename(tmp, path) != 0) {
    rc = -1;
    err = errno;
  }
  if (rc != 0) {
    snprintf(why, whylen, "%s: %s", path, strerror(err));
    remove(tmp);
  }
  return rc;
}

void ns_summary_out(struct ns_analysis* a, const char* dir, const char* host, uint32_t pid) {
  ns_summary_options opt = {.max_links = 10};
  char* text = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&text, &len);
  if (mem) {
    int rc = ns_analysis_summary_text(&a, 1, &opt, mem);
    if (fclose(mem) == 0 && rc == 0 && text) log_lines(text, len);
  }
  free(text);

  char path[1300], why[1500];
  int failed = 0;
  why[0] = 0;
  snprintf(path, sizeof path, "%s/summary-%s-%u.txt", dir, host, pid);
  if (write_file(path, ns_analysis_summary_text, a, &opt, why, sizeof why) != 0) failed = 1;
  snprintf(path, sizeof path, "%s/summary-%s-%u.json", dir, host, pid);
  if (!failed && write_file(path, ns_analysis_summary_json, a, &opt, why, sizeof why) != 0) failed = 1;
  if (failed)
    ns_log_warn("cannot write the summary (%s); the trace is complete, run `ncclscope report %s`", why, dir);
  else
    ns_log_info("summary written to %s/summary-%s-%u.{txt,json}", dir, host, pid);
}
