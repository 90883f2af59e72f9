/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: listing the *.nstrace files (and flight records) of a dump directory. */
#include "traces/trace_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ncclscope/trace_format.h"
#include "util/array.h"
#include "util/safefile.h"

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int has_suffix(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

int ns_trace_dir_list(const char* dir, ns_trace_list* out, char* err, size_t errlen) {
  return ns_dir_list(dir, "", NS_TRACE_FILE_SUFFIX, out, err, errlen);
}

/* One entry of a listing: its file (a link's target) and whether the entry is a symbolic link. */
typedef struct {
  char* path;
  dev_t dev;
  ino_t ino;
  int link;
} dir_entry;

/* By file, a name that is not a link first, then by name: the first of each file is the one read. */
static int by_file(const void* pa, const void* pb) {
  const dir_entry *a = pa, *b = pb;
  if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
  if (a->ino != b->ino) return a->ino < b->ino ? -1 : 1;
  if (a->link != b->link) return a->link - b->link;
  return strcmp(a->path, b->path);
}

/* Entries that are another name of a file listed already (a symbolic link
 * to a trace of the same directory, a hard link) would read one trace twice:
 * each is named on stderr and dropped, the name that is not a link kept.
 * The kept paths go to out->paths (their owner), the others are freed. */
static void drop_other_names(dir_entry* e, size_t n, ns_trace_list* out) {
  qsort(e, n, sizeof *e, by_file);
  for (size_t i = 0, first = 0; i < n; i++) {
    if (i > 0 && e[i].dev == e[first].dev && e[i].ino == e[first].ino) {
      fprintf(stderr, "ncclscope: warning: %s is %s %s, which the directory holds: skipped\n", e[i].path,
              e[i].link ? "a symbolic link to" : "another name (a hard link) of", e[first].path);
      free(e[i].path);
      continue;
    }
    first = i;
    out->paths[out->n++] = e[i].path;
  }
}

int ns_dir_list(const char* dir, const char* prefix, const char* suffix, ns_trace_list* out, char* err,
                size_t errlen) {
  memset(out, 0, sizeof *out);
  /* Each entry is examined relative to the directory, so DIR/NAME may be
   * longer than PATH_MAX (the reader opens such paths piece by piece). */
  int fd = ns_open_long(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  dir_entry* e = NULL;
  size_t n = 0, cap = 0;
  struct dirent* de;
  while ((de = readdir(d)) != NULL) {
    if (!has_suffix(de->d_name, suffix) || strncmp(de->d_name, prefix, strlen(prefix)) != 0) continue;
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    char* path = malloc(len);
    if (!path) break;
    snprintf(path, len, "%s/%s", dir, de->d_name);
    struct stat st, lst;
    if (fstatat(dirfd(d), de->d_name, &st, 0) != 0) {
      fprintf(stderr, "ncclscope: warning: cannot examine %s (%s): skipped\n", path, strerror(errno));
      free(path);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      fprintf(stderr, "ncclscope: warning: %s is not a regular file: skipped\n", path);
      free(path);
      continue;
    }
    dir_entry* grown = ns_array_room(e, &cap, n, sizeof *e, 16);
    if (!grown) {
      free(path);
      break;
    }
    e = grown;
    int link = fstatat(dirfd(d), de->d_name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
    e[n++] = (dir_entry){.path = path, .dev = st.st_dev, .ino = st.st_ino, .link = link};
  }
  closedir(d);
  out->paths = n ? malloc(n * sizeof *out->paths) : NULL;
  if (out->paths) {
    drop_other_names(e, n, out);
  } else {
    for (size_t i = 0; i < n; i++) free(e[i].path);
  }
  free(e);
  if (out->n) qsort(out->paths, out->n, sizeof *out->paths, by_name);
  return 0;
}

void ns_trace_list_free(ns_trace_list* l) {
  for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
  free(l->paths);
  memset(l, 0, sizeof *l);
}

unsigned ns_cli_file_mode(void) {
  static int warned;
  unsigned mode = NS_FILE_MODE_DEFAULT;
  const char* s = getenv("NCCLSCOPE_FILE_MODE");
  if (s && *s && ns_file_mode_parse(s, &mode) != 0) {
    mode = NS_FILE_MODE_DEFAULT;
    if (!warned++)
      fprintf(stderr, "ncclscope: warning: NCCLSCOPE_FILE_MODE is not an octal mode <= 0777 with owner read and "
                      "write; using 0%o\n", NS_FILE_MODE_DEFAULT);
  }
  return mode;
}

void ns_file_health_take(const ns_reader* r, ns_file_health* h) {
  ns_reader_get_stats(r, &h->st);
  const ns_reader_damage* d;
  size_t n = ns_reader_damage_list(r, &d);
  h->n = n < NS_HEALTH_RANGES ? n : NS_HEALTH_RANGES;
  memcpy(h->d, d, h->n * sizeof *d);
}

int ns_file_health_print(const char* tool, const char* path, const ns_file_health* h) {
  const ns_reader_stats* s = &h->st;
  if (s->header_damaged)
    fprintf(stderr, "%s: warning: %s: the file header is damaged; the blocks were found by their own framing and "
                    "CRCs\n", tool, path);
  for (size_t i = 0; i < h->n; i++) {
    const ns_reader_damage* d = &h->d[i];
    if (d->kept) {
      fprintf(stderr,
              "%s: warning: %s: bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 ") damaged (%s): block seq %" PRIu64
              " read all the same, every record of it kept\n",
              tool, path, d->offset, d->offset + d->length, d->length, d->why, d->seq_first);
      continue;
    }
    char blocks[96];
    if (d->tail)
      snprintf(blocks, sizeof blocks, "the blocks from seq %" PRIu64 " on", d->seq_first);
    else if (d->seq_next > d->seq_first)
      snprintf(blocks, sizeof blocks, "blocks seq %" PRIu64 "..%" PRIu64 " (%" PRIu64 ")", d->seq_first,
               d->seq_next - 1, d->seq_next - d->seq_first);
    else
      snprintf(blocks, sizeof blocks, "no whole block");
    fprintf(stderr, "%s: warning: %s: bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 ") %s (%s): lost %s%s\n", tool, path,
            d->offset, d->offset + d->length, d->length, d->tail ? "cut at the end" : "damaged", d->why, blocks,
            d->tail ? "" : "; read on from the next valid block");
  }
  if (s->damaged > h->n)
    fprintf(stderr, "%s: warning: %s: %" PRIu64 " more damaged range(s)\n", tool, path, s->damaged - h->n);
  if (s->damaged > s->damaged_kept)
    fprintf(stderr, "%s: warning: %s: %" PRIu64 " of %" PRIu64 " bytes damaged or cut; every valid block was read (%" PRIu64
            " records)\n", tool, path, s->bytes_skipped + s->bytes_cut, s->file_size, s->records);
  if (s->blocks_duplicate)
    fprintf(stderr, "%s: warning: %s: %" PRIu64 " duplicate block(s) (%" PRIu64 " bytes) dropped\n", tool, path,
            s->blocks_duplicate, s->bytes_duplicate);
  if (s->seq_gaps) fprintf(stderr, "%s: warning: %s: %" PRIu64 " block(s) missing in all\n", tool, path, s->seq_gaps);
  if (!s->clean_end && !s->bytes_cut)
    fprintf(stderr, "%s: note: %s: no end marker (the process was killed, or is still running)\n", tool, path);
  else if (s->clean_end && s->end_how == NS_END_EXIT)
    fprintf(stderr, "%s: note: %s: the process exited without finalizing its communicators; the trace was ended at "
                    "exit\n", tool, path);
  else if (s->clean_end && s->end_how == NS_END_SIGNAL)
    fprintf(stderr, "%s: note: %s: the process was ended by signal %d; the trace was ended in its handler\n", tool,
            path, s->end_signal);
  if (s->records + s->comm_inits == 0) {
    fprintf(stderr, "%s: warning: %s: nothing recovered (no record, no communicator)\n", tool, path);
    return 1;
  }
  return 0;
}

int ns_cli_dir_arg(const char* cmd, const char* a, const char** dir, void (*usage)(FILE*)) {
  if (a[0] == '-' && a[1] != '\0') {
    fprintf(stderr, "ncclscope %s: unknown option '%s'\n", cmd, a);
    usage(stderr);
    return NS_EXIT_USAGE;
  }
  if (*dir) {
    fprintf(stderr, "ncclscope %s: one directory only ('%s' and '%s')\n", cmd, *dir, a);
    return NS_EXIT_USAGE;
  }
  *dir = a;
  return NS_EXIT_OK;
}

int ns_cli_dir_given(const char* cmd, const char* dir, void (*usage)(FILE*)) {
  if (dir) return NS_EXIT_OK;
  fprintf(stderr, "ncclscope %s: missing the dump directory\n", cmd);
  usage(stderr);
  return NS_EXIT_USAGE;
}
