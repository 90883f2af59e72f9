/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope sinks: the flight record file, flightrec-<host>-<pid> and the
 * trace's suffix, .json, in the dump directory. Writer thread. */
#ifndef NCCLSCOPE_SINKS_FLIGHTREC_FILE_H
#define NCCLSCOPE_SINKS_FLIGHTREC_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "flightrec/flightrec.h"

/* A session's flight record file. Zeroed: none written yet. */
typedef struct {
  char name[NAME_MAX + 1]; /* its name once written ("": not yet) */
  int warned;              /* a failure was said (once per session) */
} ns_fr_file;

/* fr's dump (ns_fr_dump_json with info) into the dump directory dirfd
 * (named `dir` in messages; none when dirfd < 0): the first time under
 * STEM.json or, when that is taken, the first free name after it; later
 * dumps replace that file. A temporary file renamed into place: a reader
 * never sees half a record. shown gets DIR/NAME. 0, or -1 (one warning per
 * session). */
int ns_fr_file_write(ns_fr_file* file, const ns_fr* fr, const ns_fr_dump_info* info, int dirfd, const char* dir,
                     const char* stem, unsigned mode, char* shown, size_t shownlen);

#endif
