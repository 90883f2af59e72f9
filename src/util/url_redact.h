/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: a URL as it may be logged, with what may carry a
 * credential replaced by stars: its user-info (the "user:password@" of
 * http://user:password@host/), every value of its query string (the
 * "SECRET" of ?token=SECRET) and its fragment. Scheme, host, port, path
 * and the query's keys stay, so the log still says where requests go.
 * Knows nothing of NCCL. */
#ifndef NCCLSCOPE_UTIL_URL_REDACT_H
#define NCCLSCOPE_UTIL_URL_REDACT_H

#include <stddef.h>

/* Writes url to out (cap bytes, truncated, NUL-terminated) with:
 * - everything before the last '@' of its authority (after "scheme://", up
 *   to the first '/', '?' or '#') replaced by "***";
 * - in the query (after the first '?', up to '#'), the value of each
 *   '&'- or ';'-separated parameter replaced by "***" ("key=***"), and a
 *   parameter without '=' (a bare token) by "***" whole; empty ones kept;
 * - a non-empty fragment (after '#') replaced by "***".
 * "http://u:pw@host:1/p?token=s&x=1#f" gives
 * "http://" "***" "@host:1/p?token=***&x=***#***".
 * A value that is not a URL is treated the same way from its start, so a
 * malformed endpoint is hidden as well. */
void ns_url_redact(const char* url, char* out, size_t cap);

#endif
