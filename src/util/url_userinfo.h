/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: a URL as it may be logged: its user-info (the
 * "user:password@" of http://user:password@host/) replaced by stars, so a
 * credential in an endpoint never reaches a log line. Knows nothing of NCCL. */
#ifndef NCCLSCOPE_UTIL_URL_USERINFO_H
#define NCCLSCOPE_UTIL_URL_USERINFO_H

#include <stddef.h>

/* Writes url to out (cap bytes, truncated, NUL-terminated) with everything
 * before the last '@' of its authority (after "scheme://", up to the first
 * '/', '?' or '#') replaced by three stars: "http://u:pw@host:1/p" gives
 * "http://" "***" "@host:1/p". A value that is not a URL is treated the
 * same way from its start, so a malformed endpoint is hidden as well. */
void ns_url_hide_userinfo(const char* url, char* out, size_t cap);

#endif
