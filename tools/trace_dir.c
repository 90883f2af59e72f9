/* ncclscope CLI: listing the *.nstrace files of a dump directory. */
#include "trace_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ncclscope/trace_format.h"
#include "util/safefile.h"

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int has_suffix(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

int ns_trace_dir_list(const char* dir, ns_trace_list* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  DIR* d = opendir(dir);
  if (!d) {
    snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    return -1;
  }
  size_t cap = 0;
  struct dirent* de;
  while ((de = readdir(d)) != NULL) {
    if (!has_suffix(de->d_name, NS_TRACE_FILE_SUFFIX)) continue;
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    char* path = malloc(len);
    if (!path) break;
    snprintf(path, len, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(path);
      continue;
    }
    if (out->n == cap) {
      cap = cap ? cap * 2 : 16;
      char** np = realloc(out->paths, cap * sizeof *np);
      if (!np) {
        free(path);
        break;
      }
      out->paths = np;
    }
    out->paths[out->n++] = path;
  }
  closedir(d);
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
