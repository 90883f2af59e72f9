/* ncclscope CLI: report.html (report_html.h). The embedded assets come from
 * tools/html (report.js, report.css) and uPlot's dist/ files, turned into
 * C arrays by tools/html/embed.cmake at build time. */
#include "report_html.h"

#include <string.h>

extern const char ns_html_uplot_js[];
extern const size_t ns_html_uplot_js_len;
extern const char ns_html_uplot_css[];
extern const size_t ns_html_uplot_css_len;
extern const char ns_html_page_js[];
extern const size_t ns_html_page_js_len;
extern const char ns_html_page_css[];
extern const size_t ns_html_page_css_len;

int ns_report_html_has_charts(void) { return ns_html_uplot_js_len > 0; }

/* Text into a <script> or <style> element: "</" never closes it early. */
static void raw(FILE* out, const char* s, size_t len) {
  size_t from = 0;
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == '<' && s[i + 1] == '/') {
      fwrite(s + from, 1, i + 1 - from, out);
      fputs("\\", out); /* "<\/" in JSON and JS strings is "</" */
      from = i + 1;
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
        "<p id=\"summary\"></p>\n<div id=\"charts\"></div>\n<script>\n",
        out);
  raw(out, ns_html_uplot_js, ns_html_uplot_js_len);
  fputs("\n</script>\n<script>\nwindow.NCCLSCOPE_SUMMARY = ", out);
  /* JSON's "\/" is "/": the data cannot end the element, and "\u2028" is
   * already valid in a script since ES2019 */
  raw(out, json, len);
  fputs(";\n</script>\n<script>\n", out);
  raw(out, ns_html_page_js, ns_html_page_js_len);
  fputs("\n</script>\n</body></html>\n", out);
  return ferror(out) ? -1 : 0;
}
