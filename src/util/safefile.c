/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: safe output files and directories (see safefile.h). Cold paths
 * only: session start, the summary at the last finalize, the CLI. */
#include "util/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ns_file_mode_parse(const char* s, unsigned* mode) {
  if (!s || !*s || strlen(s) > 4) return -1;
  unsigned v = 0;
  for (const char* p = s; *p; p++) {
    if (*p < '0' || *p > '7') return -1;
    v = v * 8 + (unsigned)(*p - '0');
  }
  if (v > 0777 || (v & 0600) != 0600) return -1;
  *mode = v;
  return 0;
}

unsigned ns_dir_mode_for(unsigned file_mode) {
  unsigned m = file_mode & 0777;
  return m | ((m & 0444) >> 2);
}

/* Opens component `name` of the directory dirfd, creating it when missing.
 * Follows a symlink only when `follow` (an existing intermediate component). */
static int open_component(int dirfd, const char* name, unsigned dir_mode, int create, int follow) {
  int flags = O_DIRECTORY | O_CLOEXEC | (follow ? O_PATH : O_RDONLY | O_NOFOLLOW);
  int fd = openat(dirfd, name, flags);
  if (fd >= 0 || errno != ENOENT || !create) return fd;
  if (mkdirat(dirfd, name, dir_mode) != 0 && errno != EEXIST) return -1;
  /* Ours now (or a racing creator's): never follow what stands there. */
  return openat(dirfd, name, O_DIRECTORY | O_CLOEXEC | (follow ? O_PATH : O_RDONLY) | O_NOFOLLOW);
}

int ns_dir_open(const char* path, unsigned dir_mode, int create) {
  if (!path || !*path) {
    errno = ENOENT;
    return -1;
  }
  size_t n = strlen(path);
  if (n >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return -1;
  }
  char buf[PATH_MAX];
  memcpy(buf, path, n + 1);
  while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0'; /* "dir/" names dir */
  int fd = open(buf[0] == '/' ? "/" : ".", O_DIRECTORY | O_CLOEXEC | O_RDONLY);
  if (fd < 0) return -1;
  char* save = NULL;
  char* comp = strtok_r(buf, "/", &save);
  while (comp) {
    char* next = strtok_r(NULL, "/", &save);
    int last = next == NULL;
    int sub = strcmp(comp, ".") == 0 ? (last ? openat(fd, ".", O_DIRECTORY | O_CLOEXEC | O_RDONLY) : dup(fd))
                                     : open_component(fd, comp, dir_mode, create, !last);
    int err = errno;
    if (sub < 0 && last && (err == ENOTDIR || err == ELOOP)) {
      /* O_NOFOLLOW|O_DIRECTORY on a symlink fails with ELOOP or ENOTDIR: say ELOOP only for a link. */
      struct stat st;
      err = fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
    }
    close(fd);
    if (sub < 0) {
      errno = err;
      return -1;
    }
    fd = sub;
    comp = next;
  }
  return fd;
}

int ns_open_long(const char* path, int flags) {
  int fd = open(path, flags);
  if (fd >= 0 || errno != ENAMETOOLONG) return fd;
  int dirfd = AT_FDCWD;
  const char* rest = path;
  for (;;) {
    size_t n = strlen(rest);
    int sub;
    if (n < PATH_MAX) {
      sub = openat(dirfd, rest, flags);
    } else {
      /* the longest piece that ends at a '/' (an absolute path's first piece keeps its '/') */
      size_t cut = PATH_MAX - 1;
      while (cut > 0 && rest[cut] != '/') cut--;
      if (cut == 0) {
        if (dirfd != AT_FDCWD) close(dirfd);
        errno = ENAMETOOLONG; /* one component longer than PATH_MAX */
        return -1;
      }
      char piece[PATH_MAX];
      memcpy(piece, rest, cut);
      piece[cut] = '\0';
      sub = openat(dirfd, piece, O_PATH | O_DIRECTORY | O_CLOEXEC);
      rest += cut + 1;
      while (*rest == '/') rest++;
      if (sub >= 0 && !*rest) { /* the path ended in '/': it names that directory */
        int whole = openat(sub, ".", flags);
        int err = errno;
        close(sub);
        if (dirfd != AT_FDCWD) close(dirfd);
        errno = err;
        return whole;
      }
    }
    int err = errno;
    if (dirfd != AT_FDCWD) close(dirfd);
    if (sub < 0 || n < PATH_MAX) {
      errno = err;
      return sub;
    }
    dirfd = sub;
  }
}

FILE* ns_fopen_read(const char* path) {
  int fd = ns_open_long(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "rb");
  if (!f) {
    int err = errno;
    close(fd);
    errno = err;
  }
  return f;
}

/* 64 unpredictable bits: getrandom, else a mix of time, pid and a counter. */
static uint64_t random64(void) {
  uint64_t v;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v) return v;
  static _Atomic uint64_t counter;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  v = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^ ((uint64_t)getpid() << 17) ^ (uint64_t)(uintptr_t)&t;
  v += ++counter * 0x9E3779B97F4A7C15ull; /* splitmix64 */
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  return v ^ (v >> 31);
}

int ns_tmp_create(int dirfd, const char* name, unsigned mode, char* tmp, size_t tmplen) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (int tries = 0; tries < 16; tries++) {
    uint64_t r = random64();
    char rnd[13];
    for (int i = 0; i < 12; i++, r /= 62) rnd[i] = digits[r % 62];
    rnd[12] = '\0';
    int k = snprintf(tmp, tmplen, ".%s.%s.tmp", name, rnd);
    if (k < 0 || (size_t)k >= tmplen || k > NAME_MAX) {
      /* A long NAME: the random part alone still makes a unique name. */
      k = snprintf(tmp, tmplen, ".ncclscope.%s.tmp", rnd);
      if (k < 0 || (size_t)k >= tmplen) {
        errno = ENAMETOOLONG;
        return -1;
      }
    }
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

static void out_reset(ns_out* o, const char* shown) {
  memset(o, 0, sizeof *o);
  o->dirfd = -1;
  snprintf(o->shown, sizeof o->shown, "%s", shown);
}

static int out_tmp_in(ns_out* o, int dirfd, const char* name, unsigned mode, char* err, size_t errlen) {
  if (strlen(name) >= sizeof o->name) {
    snprintf(err, errlen, "%s: file name too long", o->shown);
    return -1;
  }
  snprintf(o->name, sizeof o->name, "%s", name);
  int fd = ns_tmp_create(dirfd, name, mode, o->tmp, sizeof o->tmp);
  if (fd < 0) {
    snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", o->shown, strerror(errno));
    return -1;
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    snprintf(err, errlen, "%s: %s", o->shown, strerror(errno));
    close(fd);
    unlinkat(dirfd, o->tmp, 0);
    return -1;
  }
  o->dirfd = dirfd;
  return 0;
}

int ns_out_open_at(ns_out* o, int dirfd, const char* name, const char* shown, unsigned mode, char* err,
                   size_t errlen) {
  out_reset(o, shown ? shown : name);
  return out_tmp_in(o, dirfd, name, mode, err, errlen);
}

/* Writes in place: a FIFO, a device, or what a symlink names when that is not a regular file. */
static int out_in_place(ns_out* o, const char* path, char* err, size_t errlen) {
  /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking. */
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "%s: %s", o->shown,
             errno == ENXIO ? "no process is reading this FIFO (or the device is absent)" : strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: changed while being opened", o->shown);
    close(fd);
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* a reader exists: write at its pace */
  o->f = fdopen(fd, "w");
  if (!o->f) {
    snprintf(err, errlen, "%s: %s", o->shown, strerror(errno));
    close(fd);
    return -1;
  }
  return 0;
}

int ns_out_open(ns_out* o, const char* path, unsigned mode, char* err, size_t errlen) {
  out_reset(o, path);
  if (strcmp(path, "-") == 0) {
    o->f = stdout;
    o->is_stdout = 1;
    return 0;
  }
  char resolved[PATH_MAX];
  const char* target = path;
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: a symbolic link to nothing (%s)", path, strerror(errno));
        return -1;
      }
      if (!S_ISREG(st.st_mode)) return S_ISDIR(st.st_mode) ? (snprintf(err, errlen, "%s: is a directory", path), -1)
                                                           : out_in_place(o, path, err, errlen);
      /* Replace the file the link names, not the link. */
      if (!realpath(path, resolved)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
      }
      target = resolved;
    }
    if (S_ISDIR(st.st_mode)) {
      snprintf(err, errlen, "%s: is a directory", path);
      return -1;
    }
    if (!S_ISREG(st.st_mode)) return out_in_place(o, path, err, errlen);
    mode = st.st_mode & 0777; /* a replaced file keeps its permissions */
  } else if (errno != ENOENT) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  size_t n = strlen(target);
  if (n >= PATH_MAX) {
    snprintf(err, errlen, "%s: path too long", path);
    return -1;
  }
  char dir[PATH_MAX];
  memcpy(dir, target, n + 1);
  char* slash = strrchr(dir, '/');
  const char* name = target;
  if (slash) {
    name = target + (slash - dir) + 1;
    if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
  } else {
    strcpy(dir, ".");
  }
  if (!*name) {
    snprintf(err, errlen, "%s: names a directory", path);
    return -1;
  }
  /* The user's own directory: followed as the system resolves it; the file
   * made in it is never a followed link (O_EXCL|O_NOFOLLOW). */
  int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    snprintf(err, errlen, "%s: cannot open its directory: %s", path, strerror(errno));
    return -1;
  }
  o->own_dirfd = 1;
  if (out_tmp_in(o, dirfd, name, mode, err, errlen) != 0) {
    close(dirfd);
    o->own_dirfd = 0;
    return -1;
  }
  return 0;
}

static void out_close_dir(ns_out* o) {
  if (o->own_dirfd && o->dirfd >= 0) close(o->dirfd);
  o->dirfd = -1;
  o->own_dirfd = 0;
}

int ns_out_commit(ns_out* o, char* err, size_t errlen) {
  if (!o->f) {
    snprintf(err, errlen, "%s: not open", o->shown);
    return -1;
  }
  int rc = 0;
  if (fflush(o->f) != 0 || ferror(o->f)) {
    snprintf(err, errlen, "%s: write error: %s", o->shown, strerror(errno));
    rc = -1;
  }
  if (o->is_stdout) {
    o->f = NULL;
    return rc;
  }
  if (fclose(o->f) != 0 && rc == 0) {
    snprintf(err, errlen, "%s: write error: %s", o->shown, strerror(errno));
    rc = -1;
  }
  o->f = NULL;
  if (o->dirfd >= 0) {
    if (rc == 0 && renameat(o->dirfd, o->tmp, o->dirfd, o->name) != 0) {
      snprintf(err, errlen, "%s: cannot rename the temporary file into place: %s", o->shown, strerror(errno));
      rc = -1;
    }
    if (rc != 0) unlinkat(o->dirfd, o->tmp, 0);
  }
  out_close_dir(o);
  return rc;
}

/* The try-th name of a set (see NS_UNIQUE_TRIES): 0, or -1 when it does not fit. */
static int unique_name(char* name, size_t namelen, const char* stem, const char* suffix, uint64_t alt, int try) {
  int n = try == 0 ? snprintf(name, namelen, "%s%s", stem, suffix)
                   : snprintf(name, namelen, "%s-%llu%s", stem, (unsigned long long)(alt + (uint64_t)try - 1), suffix);
  return n < 0 || (size_t)n >= namelen ? -1 : 0;
}

int ns_create_unique(int dirfd, const char* stem, const char* suffix, uint64_t alt, int flags, unsigned mode,
                     char* name, size_t namelen) {
  flags |= O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  for (int try = 0; try <= NS_UNIQUE_TRIES; try++) {
    if (unique_name(name, namelen, stem, suffix, alt, try) != 0) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = openat(dirfd, name, flags, (mode_t)mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1; /* errno: EEXIST */
}

int ns_out_commit_unique(ns_out* o, const char* stem, const char* suffix, uint64_t alt, char* name, size_t namelen,
                         char* err, size_t errlen) {
  if (!o->f || o->dirfd < 0) {
    snprintf(err, errlen, "%s: not a file written in a directory", o->shown);
    ns_out_abort(o);
    return -1;
  }
  int rc = 0;
  if (fflush(o->f) != 0 || ferror(o->f)) rc = -1;
  if (fclose(o->f) != 0) rc = -1;
  o->f = NULL;
  if (rc != 0) snprintf(err, errlen, "%s: write error: %s", o->shown, strerror(errno));
  for (int try = 0; rc == 0; try++) {
    if (try > NS_UNIQUE_TRIES || unique_name(name, namelen, stem, suffix, alt, try) != 0) {
      snprintf(err, errlen, "%s: no free name (%s%s and %d others taken)", o->shown, stem, suffix, NS_UNIQUE_TRIES);
      rc = -1;
      break;
    }
    if (linkat(o->dirfd, o->tmp, o->dirfd, name, 0) == 0) break;
    if (errno == EEXIST) continue;
    /* no hard links on this file system: claim the name, then move the file onto it */
    int fd = openat(o->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0 || (close(fd), renameat(o->dirfd, o->tmp, o->dirfd, name) != 0)) {
      snprintf(err, errlen, "%s: cannot move the temporary file into place: %s", name, strerror(errno));
      if (fd >= 0) unlinkat(o->dirfd, name, 0);
      rc = -1;
      break;
    }
    o->tmp[0] = '\0'; /* renamed: nothing left to remove */
    break;
  }
  if (o->tmp[0]) unlinkat(o->dirfd, o->tmp, 0);
  out_close_dir(o);
  return rc;
}

void ns_out_abort(ns_out* o) {
  if (o->f && !o->is_stdout) fclose(o->f);
  if (o->f && o->is_stdout) fflush(o->f);
  o->f = NULL;
  if (o->dirfd >= 0 && o->tmp[0]) unlinkat(o->dirfd, o->tmp, 0);
  out_close_dir(o);
}
