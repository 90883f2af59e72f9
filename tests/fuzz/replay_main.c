/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope fuzz targets as plain regression tests: a main() that feeds
 * every file named on the command line (or found in the directories named)
 * to LLVMFuzzerTestOneInput once. Built with any compiler, so the corpus
 * is replayed in the normal ctest run; libFuzzer builds do not use it.
 * Single-threaded.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

static int replayFile(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  uint8_t* buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? cap * 2 : 4096;
      uint8_t* nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t k = fread(buf + len, 1, cap - len, f);
    if (!k) break;
    len += k;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t*)"", len);
  free(buf);
  return 0;
}

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      files += replayFile(argv[i]) == 0;
      continue;
    }
    DIR* d = opendir(argv[i]);
    for (struct dirent* e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      files += replayFile(p) == 0;
    }
    if (d) closedir(d);
  }
  printf("replayed %d input(s)\n", files);
  return files > 0 ? 0 : 1;
}
