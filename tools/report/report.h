/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: `ncclscope report` as a function, for the demo too. */
#ifndef NCCLSCOPE_TOOLS_REPORT_H
#define NCCLSCOPE_TOOLS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "ncclscope/analysis.h" /* NS_SUMMARY_* */

typedef struct {
  const char* text_path; /* NULL: DIR/summary.txt */
  const char* json_path; /* NULL: DIR/summary.json */
  const char* html_path; /* NULL: DIR/report.html */
  FILE* print;           /* where to print the summary; NULL: nowhere */
  unsigned sections;     /* what to print: NS_SUMMARY_* bits, 0 = everything (files always get everything) */
  size_t max_links;      /* slowest links listed */
  int wide;              /* the collectives table per algorithm, protocol and rank count; lines not folded */
} ns_report_options;

/* The text summary's lines are folded to this many columns unless wide. */
#define NS_REPORT_COLUMNS 120

/* 0 if at least one trace was readable and both files were written, else 1. */
int ns_report_dir(const char* dir, const ns_report_options* o);
int ns_cmd_report(int argc, char** argv);

#endif
