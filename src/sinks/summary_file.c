/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the plugin's summary at the last finalize (writer thread).
 *
 * The text summary goes to NCCL's log at INFO, one line per call, and both
 * forms go to the dump dir as summary-<host>-<pid>.txt / .json: several
 * processes share a dump dir, and `ncclscope report DIR` merges every
 * trace into DIR/summary.txt / summary.json. Files are written to an
 * unpredictable temporary name in the dump directory (opened once, used with
 * openat) and renamed, so a reader never sees half a summary and nothing
 * planted in the directory is followed.
 * Nothing here fails NCCL: an error is one warning. */
#include "sinks/summary_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "log/log.h"
#include "util/safefile.h"

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

/* Temporary file (unpredictable name, O_EXCL|O_NOFOLLOW) in the dump
 * directory, published under the first free name of STEM SUFFIX, STEM-<n>
 * SUFFIX ... (in `name`): STEM carries the trace's suffix, so the first is
 * free unless a file was left there; nothing is ever replaced. 0 or -1 with
 * the reason in why. */
static int write_file(int dirfd, const char* stem, const char* suffix, char* name, size_t namelen, unsigned mode,
                      summary_fn fn, ns_analysis* a, const ns_summary_options* opt, char* why, size_t whylen) {
  ns_out o;
  int n = snprintf(name, namelen, "%s%s", stem, suffix);
  if (n < 0 || (size_t)n >= namelen) {
    snprintf(why, whylen, "%s%s: name too long", stem, suffix);
    return -1;
  }
  if (ns_out_open_at(&o, dirfd, name, name, mode, why, whylen) != 0) return -1;
  if (fn(&a, 1, opt, o.f) != 0) {
    snprintf(why, whylen, "%s: %s", name, strerror(errno));
    ns_out_abort(&o);
    return -1;
  }
  return ns_out_commit_unique(&o, stem, suffix, ns_mono_ns(), name, namelen, why, whylen);
}

void ns_summary_file_write(ns_analysis* a, const ns_summary_recording* rec, int dirfd, const char* dir,
                           const char* summary_stem, unsigned mode) {
  ns_summary_options opt = {.max_links = 10, .recording = rec};
  char* text = NULL;
  size_t len = 0;
  FILE* mem = open_memstream(&text, &len);
  if (mem) {
    int rc = ns_analysis_summary_text(&a, 1, &opt, mem);
    if (fclose(mem) == 0 && rc == 0 && text) log_lines(text, len);
  }
  free(text);
  if (dirfd < 0) return;

  char stem[NAME_MAX + 1], name[NAME_MAX + 1], why[PATH_MAX + 200];
  why[0] = 0;
  static const char* const ext[] = {".txt", ".json"};
  static const summary_fn fns[] = {ns_analysis_summary_text, ns_analysis_summary_json};
  snprintf(stem, sizeof stem, "%s", summary_stem);
  for (int i = 0; i < 2; i++) {
    if (write_file(dirfd, stem, ext[i], name, sizeof name, mode, fns[i], a, &opt, why, sizeof why) != 0) {
      ns_log_warn("cannot write the summary in %s (%s); `ncclscope report %s` makes one from the trace", dir, why,
                  dir);
      return;
    }
    /* the .json goes with the .txt: the same name, whatever it took to be free */
    if (i == 0) name[strlen(name) - strlen(ext[0])] = '\0', snprintf(stem, sizeof stem, "%s", name);
  }
  ns_log_info("summary written to %s/%s.{txt,json}", dir, stem);
}
