/* ncclscope tests: writes the standard synthetic run into a directory.
 * usage: gen_trace DIR [NPROC [TRUNCATE_BYTES_OF_LAST_FILE]] */
#include <stdio.h>
#include <stdlib.h>

#include "trace_builder.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gen_trace DIR [NPROC [TRUNCATE]]\n");
    return 2;
  }
  int nproc = argc > 2 ? atoi(argv[2]) : 2;
  size_t cut = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 0;
  if (tb_write_standard_run(argv[1], nproc, cut)) {
    fprintf(stderr, "gen_trace: cannot write into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
