/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the directory of an OTF2 archive (`export --format otf2`):
 * written under a temporary name next to it, renamed into place at the end,
 * an existing one replaced only when asked (--force) and only when it is an
 * OTF2 archive or empty. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_OTF2_ARCHIVE_H
#define NCCLSCOPE_TOOLS_OTF2_ARCHIVE_H

#include <stddef.h>

/* The anchor file of an archive in its directory (what Vampir opens). */
#define NS_OTF2_ANCHOR_NAME "traces"

/* See ns_dir_output (export.h). reserve also creates and removes the
 * temporary directory: a location that cannot be written is refused with
 * its errno, before libotf2 tries it. */
int ns_archive_reserve(const char* path, int force, char* tmp, size_t tmplen, char* err, size_t errlen);
int ns_archive_commit(const char* tmp, const char* path, int force, char* err, size_t errlen);
void ns_archive_discard(const char* tmp);

#endif
