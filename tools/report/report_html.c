/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: report.html (report_html.h). The embedded assets come from
 * tools/report/html (report.js, report.css) and uPlot's dist/ files, turned into
 * C arrays by tools/report/html/embed.cmake at build time. */
#include "report/report_html.h"

#include <string.h>

#include "util/json_escape.h"

extern const char ns_html_uplot_js[];
extern const size_t ns_html_uplot_js_len;
extern const char ns_html_uplot_css[];
extern const size_t ns_html_uplot_css_len;
extern const char ns_html_page_js[];
extern const size_t ns_html_page_js_len;
extern const char ns_html_page_css[];
extern const size_t ns_html_page_css_len;

int ns_report_html_has_charts(void) { return ns_html_uplot_js_len > 0; }

/* Code or style into a <script> or <style> element: "</" never closes it
 * early. For the project's own assets (report.js, report.css, uPlot), whose
 * text is fixed at build time; data goes through json_in_script(). */
static void raw(FILE* out, const char* s, size_t len) {
  size_t from = 0;
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == '<' && s[i + 1] == '/') {
      fwrite(s + from, 1, i + 1 - from, out);
      fputs("\\", out); /* "<\/" in JS strings and regular expressions is "</" */
      from = i + 1;
    }
  fwrite(s + from, 1, len - from, out);
}

/* JSON text into a <script> element, whatever its strings hold: '<', '>',
 * '&', U+2028 and U+2029 escaped as util/json_escape.h's NS_JSON_ESC_HTML
 * escapes them (\u003c ...). JSON has these characters only inside
 * strings, where the escapes mean the same characters, so the data parses
 * to the same value, and the HTML parser never sees "</script", "<!--" or
 * "<script" in it (either of the last two puts it into the script's
 * escaped states, where the page's own scripts that follow become part of
 * this element). Nothing else of the text is touched: its quotes and
 * backslashes are JSON's own. */
static void json_in_script(FILE* out, const char* s, size_t len) {
  size_t from = 0;
  for (size_t i = 0; i < len; i++) {
    const unsigned char* u = (const unsigned char*)s + i;
    size_t unit = ns_json_plain_byte[*u] == 1 ? 1 /* plain unless HTML: '<', '>', '&' */
                  : *u == 0xE2 && len - i >= 3 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9) ? 3
                                                                                                 : 0;
    if (!unit) continue;
    char esc[NS_JSON_ESC_UNIT_MAX];
    fwrite(s + from, 1, i - from, out);
    fwrite(esc, 1, ns_json_escape(esc, sizeof esc, s + i, unit, NS_JSON_ESC_HTML, NULL), out);
    from = i + unit;
    i += unit - 1;
  }
  fwrite(s + from, 1, len - from, out);
}

/* Text into HTML content. */
static void escaped(FILE* out, const char* s) {
  for (; *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '&': fputs("&amp;", out); break;
      case '"': fputs("&quot;", out); break;
      default: fputc(*s, out);
    }
  }
}

int ns_report_html(FILE* out, const char* title, const char* json, size_t len) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data:\">\n<title>ncclscope report: ",
        out);
  escaped(out, title);
  fputs("</title>\n<style>\n", out);
  raw(out, ns_html_uplot_css, ns_html_uplot_css_len);
  fputs("\n", out);
  raw(out, ns_html_page_css, ns_html_page_css_len);
  fputs("\n</style>\n</head><body>\n<h1>ncclscope report</h1>\n<p class=\"note\">", out);
  escaped(out, title);
  fputs(" &middot; the same data as summary.json beside this page (docs/metrics.md defines it)</p>\n"
        "<div id=\"summary\"></div>\n<div id=\"charts\"></div>\n"
        "<script type=\"application/json\" id=\"ncclscope-summary\">",
        out);
  json_in_script(out, json, len);
  fputs("</script>\n<script>\n", out);
  raw(out, ns_html_uplot_js, ns_html_uplot_js_len);
  fputs("\n</script>\n<script>\n", out);
  raw(out, ns_html_page_js, ns_html_page_js_len);
  fputs("\n</script>\n</body></html>\n", out);
  return ferror(out) ? -1 : 0;
}
