/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: entry point and subcommand dispatch. One file per subcommand
 * (cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "report/report.h"

#ifndef NCCLSCOPE_VERSION
#error "NCCLSCOPE_VERSION comes from project(VERSION) in CMakeLists.txt"
#endif

static void usage(FILE* out) {
  fprintf(out,
          "usage: ncclscope <command> [options]\n"
          "\n"
          "ncclscope records what NCCL does through its profiler plugin interface.\n"
          "This tool turns the recorded traces into files people and tools can read.\n"
          "\n"
          "commands:\n"
          "  demo     run the simulator with the plugin, export the trace, say what to open\n"
          "  export   convert a dump directory into JSON Lines or Perfetto/Chrome JSON\n"
          "  report   summarise a dump directory: nccl-tests style bandwidth table, slowest\n"
          "           links, GPU clock fit, stragglers (also writes DIR/summary.txt, .json)\n"
          "\n"
          "  ncclscope <command> --help   shows a command's options\n"
          "  ncclscope --version          prints the version\n");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return NS_EXIT_USAGE;
  }
  const char* cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("ncclscope %s\n", NCCLSCOPE_VERSION);
    return 0;
  }
  if (strcmp(cmd, "export") == 0) return ns_cmd_export(argc - 1, argv + 1);
  if (strcmp(cmd, "report") == 0) return ns_cmd_report(argc - 1, argv + 1);
  if (strcmp(cmd, "demo") == 0) return ns_cmd_demo(argc - 1, argv + 1);
  fprintf(stderr, "ncclscope: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return NS_EXIT_USAGE;
}
