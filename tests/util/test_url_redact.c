/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: URLs as logged (src/util/url_redact.c): user-info, query
 * values and fragments starred, everything else kept; malformed values and
 * truncation by a small buffer. */
#include "check.h"
#include "util/url_redact.h"

static const char* redact(const char* url) {
  static char out[256];
  ns_url_redact(url, out, sizeof out);
  return out;
}

int main(void) {
  CHECK_STR(redact("http://localhost:4318/v1/metrics"), "http://localhost:4318/v1/metrics");
  CHECK_STR(redact("http://user:pw@host:4318/v1/metrics"), "http://***@host:4318/v1/metrics");
  CHECK_STR(redact("http://user:pw@host:4318/v1/metrics?token=SECRET"), "http://***@host:4318/v1/metrics?token=***");
  CHECK_STR(redact("https://host/v1/metrics?a=1&token=SECRET;b=&c"),
            "https://host/v1/metrics?a=***&token=***;b=***&***");
  CHECK_STR(redact("https://host?SECRET"), "https://host?***");
  CHECK_STR(redact("https://host/p?&&x=SECRET"), "https://host/p?&&x=***");
  CHECK_STR(redact("https://host/p?k=v=SECRET"), "https://host/p?k=***");
  CHECK_STR(redact("https://host/p?x=SECRET#frag"), "https://host/p?x=***#***");
  CHECK_STR(redact("https://host/p#SECRET"), "https://host/p#***");
  CHECK_STR(redact("https://host/p?#"), "https://host/p?#");
  CHECK_STR(redact("http://a@b@host/p"), "http://***@host/p");
  CHECK_STR(redact("http://host/p@x?k=SECRET"), "http://host/p@x?k=***"); /* '@' after the authority: path */
  CHECK_STR(redact("user:pw@host with a space?token=SECRET"), "***@host with a space?token=***");
  CHECK_STR(redact(""), "");

  char small[24];
  ns_url_redact("http://u:pw@host/v1/metrics?token=SECRET", small, sizeof small);
  CHECK_STR(small, "http://***@host/v1/metr");
  ns_url_redact("http://host/?token=SECRET", small, sizeof small);
  CHECK_STR(small, "http://host/?token=***");
  char one[1] = {'x'};
  ns_url_redact("http://u:pw@host", one, sizeof one);
  CHECK_U64(one[0], 0);
  CHECK_DONE();
}
