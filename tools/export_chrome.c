#include "export.h"
const ns_format ns_format_chrome = {"chrome", NULL, NULL};
