/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: creating output files and directories safely (cold paths: the
 * plugin's session start and summary, the CLI's outputs).
 *
 * The rules, for every file ncclscope writes:
 *  - a directory is opened once, O_DIRECTORY|O_NOFOLLOW, and files are made
 *    inside it with openat: a symlink planted as the directory, or swapped in
 *    after the check, is refused, never followed;
 *  - a temporary file has an unpredictable name (getrandom) and is created
 *    with O_CREAT|O_EXCL|O_NOFOLLOW in the directory of its target, then
 *    renamed over it: nothing planted at a guessable name is ever opened;
 *  - an output named by the user that is not a regular file (a FIFO, a
 *    device, a symlink to one, "-" for standard output) is written in place,
 *    never replaced; a FIFO is opened with O_NONBLOCK first, so one with no
 *    reader is an error rather than a hang;
 *  - modes are explicit (files 0640, directories 0750, or what
 *    NCCLSCOPE_FILE_MODE says), so the umask can only restrict them.
 * Knows nothing of NCCL or of traces. */
#ifndef NCCLSCOPE_UTIL_SAFEFILE_H
#define NCCLSCOPE_UTIL_SAFEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NS_FILE_MODE_DEFAULT 0640u

/* Parses an octal permission mode ("640", "0640"): at most 0777 and at least
 * owner read and write (the writer must be able to append). 0, or -1. */
int ns_file_mode_parse(const char* s, unsigned* mode);
/* The directory mode that goes with a file mode: x wherever r is set (0640 -> 0750). */
unsigned ns_dir_mode_for(unsigned file_mode);

/* Opens the directory `path`, creating it and its missing parents with
 * dir_mode when `create` is set. Components that already exist are followed
 * as the system resolves them except the last one; the last one and every
 * component created here are opened O_NOFOLLOW. Returns a directory fd
 * (O_CLOEXEC) or -1 with errno set (ELOOP: a symlink at the last component). */
int ns_dir_open(const char* path, unsigned dir_mode, int create);

/* open(path, flags) for a path of any length: one longer than the system
 * takes (ENAMETOOLONG: a dump directory near PATH_MAX, a file inside it) is
 * opened one piece of at most PATH_MAX - 1 bytes at a time, each piece
 * relative to the directory the last one opened, resolved as open() would.
 * The fd, or -1 with errno set. */
int ns_open_long(const char* path, int flags);
/* fopen(path, "rb") through ns_open_long (O_CLOEXEC). */
FILE* ns_fopen_read(const char* path);

/* Creates a new, unpredictably named temporary file ".NAME.XXXXXXXXXXXX.tmp"
 * in dirfd with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and `mode`. Returns the
 * fd (write-only) with the name in tmp, or -1 with errno set. */
int ns_tmp_create(int dirfd, const char* name, unsigned mode, char* tmp, size_t tmplen);

/* Names for files several processes may want at once (two containers'
 * processes with one pid share a dump directory): the first free one of
 * STEM SUFFIX, then STEM-<alt> SUFFIX, STEM-<alt+1> SUFFIX ... (100 tries);
 * alt is the caller's (a clock reading), so a later name sorts later. */
#define NS_UNIQUE_TRIES 100

/* Creates a file no one else has in dirfd under the first free such name,
 * with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC|flags and mode: the trace and
 * windows.jsonl, opened once and appended to. The fd with the name in
 * `name`, or -1 with errno set. */
int ns_create_unique(int dirfd, const char* stem, const char* suffix, uint64_t alt, int flags, unsigned mode,
                     char* name, size_t namelen);

/* One output file. */
typedef struct {
  FILE* f;        /* write here */
  int dirfd;      /* the directory of a replaced file; -1 when written in place */
  int own_dirfd;  /* dirfd was opened by ns_out_open and is closed with it */
  int is_stdout;
  char tmp[300];  /* temporary name in dirfd */
  char name[300]; /* final name in dirfd */
  char shown[512]; /* the path as given, for messages */
} ns_out;

/* Opens `path` for writing: "-" is standard output; a missing or regular
 * file is written to a temporary file beside it and renamed over it by
 * ns_out_commit (a replaced file keeps its permission bits; a new one gets
 * `mode`); a symlink to a regular file replaces its target, not the link;
 * anything else (FIFO, character device, a symlink to one) is written in
 * place. 0, or -1 with a message in err. */
int ns_out_open(ns_out* o, const char* path, unsigned mode, char* err, size_t errlen);
/* The same for a file NAME inside an open directory (the plugin's summary
 * files): always temporary file + rename; dirfd stays the caller's. */
int ns_out_open_at(ns_out* o, int dirfd, const char* name, const char* shown, unsigned mode, char* err,
                   size_t errlen);
/* Flushes and closes; renames the temporary file into place. 0, or -1 with
 * a message in err (the temporary file is removed). */
int ns_out_commit(ns_out* o, char* err, size_t errlen);
/* ns_out_commit for a file opened with ns_out_open_at that must replace no
 * one's: the whole file appears under the first free name of STEM SUFFIX,
 * STEM-<alt> SUFFIX ... (a hard link from its temporary name; where the
 * file system has none, the name is claimed with O_EXCL and the file
 * renamed over it), the name in `name`. A later version of the same file
 * goes there with ns_out_open_at(name) + ns_out_commit. 0, or -1 with a
 * message in err (the temporary file is removed). */
int ns_out_commit_unique(ns_out* o, const char* stem, const char* suffix, uint64_t alt, char* name, size_t namelen,
                         char* err, size_t errlen);
/* Closes and removes the temporary file (no-op for in-place outputs). */
void ns_out_abort(ns_out* o);

#endif
