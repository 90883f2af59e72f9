/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: URLs without their user-info, for logs (see url_userinfo.h). */
#include "util/url_userinfo.h"

#include <stdio.h>
#include <string.h>

void ns_url_hide_userinfo(const char* url, char* out, size_t cap) {
  if (!cap) return;
  const char* scheme_end = strstr(url, "://");
  const char* host = scheme_end ? scheme_end + 3 : url;
  size_t authority = strcspn(host, "/?#");
  const char* at = NULL;
  for (const char* p = host; p < host + authority; p++)
    if (*p == '@') at = p;
  if (!at) {
    snprintf(out, cap, "%s", url);
    return;
  }
  snprintf(out, cap, "%.*s***%s", (int)(host - url), url, at);
}
