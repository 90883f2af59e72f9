/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: text folded to a width, for summaries read in a terminal
 * or an e-mail (summary.txt: 120 columns unless --wide). */
#ifndef NCCLSCOPE_TOOLS_TEXT_FOLD_H
#define NCCLSCOPE_TOOLS_TEXT_FOLD_H

#include <stddef.h>
#include <stdio.h>

/* Writes text[0, len) to out with every line longer than width columns
 * (bytes; UTF-8 sequences are never cut) broken at its last space before
 * the width, the rest continued on lines that start as it did ("# ", or its
 * indentation) and 4 more spaces; a word longer than a line is cut. 0, or
 * -1 when out failed. */
int ns_text_fold(FILE* out, const char* text, size_t len, size_t width);

#endif
