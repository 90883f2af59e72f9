/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the outputs of `ncclscope report`, from what report_read.c
 * read of the dump directory: the text summary (folded to
 * NS_REPORT_COLUMNS unless --wide), the JSON summary (the library's object
 * with the cross-rank view, the process counters, the events, the losses
 * and the detail added) and the page (report.html, the same JSON drawn),
 * each written to an unpredictable temporary name beside its file and
 * renamed (safefile.h); and the summary printed. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_WRITE_H
#define NCCLSCOPE_TOOLS_REPORT_WRITE_H

#include <stddef.h>

#include "ncclscope/analysis.h"
#include "report/report.h"
#include "report/report_detail.h"
#include "report/report_events.h"
#include "report/report_loss.h"
#include "report/report_phases.h"
#include "report/report_ranks.h"

/* Everything a summary writer needs. */
typedef struct {
  ns_summary* sum;
  const ns_xr* xr;
  const ns_file_losses* losses;
  size_t nlosses;
  const ns_asm_stats* events;
  const char* dir;
  ns_report_loss loss;
  const ns_report_detail* detail;
  const ns_phases* phases;
} ns_report_data;

/* Writes the text summary, the JSON summary and the page, each to its path
 * in o ("-": standard output), else into d->dir (summary.txt, summary.json,
 * report.html); all three are tried. 0, or -1 when one could not be written
 * (said on stderr). */
int ns_report_write(const ns_report_data* d, const ns_report_options* o, const ns_summary_options* opt);
/* Prints the summary on o->print: the text, or only the sections o names. */
void ns_report_print(const ns_report_data* d, const ns_report_options* o, const ns_summary_options* opt);

#endif
