/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: report.html, the page `ncclscope report` writes beside
 * summary.json: self-contained (the chart library, uPlot, and the page's
 * script and style are embedded in the binary at build time and written
 * into the page; nothing is fetched when it is viewed), with the summary's
 * JSON embedded as its data (<script type="application/json"
 * id="ncclscope-summary">, '<', '>', '&', U+2028 and U+2029 escaped: no
 * string in it can end or re-open the element). The charts are drawn by
 * tools/report/html/report.js. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_HTML_H
#define NCCLSCOPE_TOOLS_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* The page with json (summary.json's text, len bytes) as its data; title is
 * shown in its heading (the dump directory). 0, or -1 on a write error. */
int ns_report_html(FILE* out, const char* title, const char* json, size_t len);
/* Whether the chart library was embedded (npm was there at build time). */
int ns_report_html_has_charts(void);

#endif
