#include "export.h"
int ns_cmd_demo(int argc, char** argv) { (void)argc; (void)argv; return 1; }
