/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: an OTF2 archive's directory (see otf2_archive.h). */
#include "otf2/otf2_archive.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"

/* 1: path is a directory that holds an OTF2 anchor file, or nothing. */
static int replaceable(const char* path) {
  char anchor[4096];
  struct stat st;
  if (snprintf(anchor, sizeof anchor, "%s/%s.otf2", path, NS_OTF2_ANCHOR_NAME) >= (int)sizeof anchor) return 0;
  if (stat(anchor, &st) == 0 && S_ISREG(st.st_mode)) return 1;
  DIR* d = opendir(path);
  if (!d) return 0;
  int empty = 1;
  for (struct dirent* e; empty && (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = 0;
  closedir(d);
  return empty;
}

int ns_archive_reserve(const char* path, int force, char* tmp, size_t tmplen, char* err, size_t errlen) {
  struct stat st;
  if (!path || !*path) {
    snprintf(err, errlen, "no archive directory named (-o DIR)");
    return NS_EXIT_USAGE;
  }
  if (lstat(path, &st) == 0) {
    if (!force) {
      snprintf(err, errlen, "%s exists: not replaced (--force replaces an OTF2 archive)", path);
      return NS_EXIT_USAGE;
    }
    if (!S_ISDIR(st.st_mode) || !replaceable(path)) {
      snprintf(err, errlen, "%s is not an OTF2 archive directory (no %s.otf2) nor empty: not replaced, even with --force",
               path, NS_OTF2_ANCHOR_NAME);
      return NS_EXIT_USAGE;
    }
  } else if (errno != ENOENT) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return NS_EXIT_FAIL;
  }
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--; /* "out/" -> "out.tmp-PID", beside it */
  if (snprintf(tmp, tmplen, "%.*s.tmp-%ld", (int)n, path, (long)getpid()) >= (int)tmplen) {
    snprintf(err, errlen, "archive path too long: %s", path);
    return NS_EXIT_USAGE;
  }
  ns_archive_discard(tmp); /* a leftover of an earlier run with this pid */
  /* libotf2 reports a directory it cannot create on its own stderr, with no
   * errno for us: the location is tried here first, so that the reason is
   * ours to name */
  if (mkdir(tmp, 0700) != 0 || rmdir(tmp) != 0) {
    snprintf(err, errlen, "cannot create the OTF2 archive at %s (its temporary directory %s): %s", path, tmp,
             strerror(errno));
    return NS_EXIT_FAIL;
  }
  return NS_EXIT_OK;
}

static int remove_entry(const char* p, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

void ns_archive_discard(const char* tmp) {
  if (tmp && *tmp) nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int ns_archive_commit(const char* tmp, const char* path, int force, char* err, size_t errlen) {
  struct stat st;
  if (lstat(path, &st) == 0) { /* checked at reserve; checked again: it may have appeared meanwhile */
    if (!force || !S_ISDIR(st.st_mode) || !replaceable(path)) {
      snprintf(err, errlen, "%s appeared during the export: not replaced", path);
      return -1;
    }
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
      snprintf(err, errlen, "cannot remove the old %s: %s", path, strerror(errno));
      return -1;
    }
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    return -1;
  }
  return 0;
}
