/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the trace's string table (writer thread only): every string
 * seen in this trace gets an id, written in a STRINGS block before the
 * first EVENTS block that uses it. */
#ifndef NCCLSCOPE_WRITER_STRTAB_H
#define NCCLSCOPE_WRITER_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "trace/codec.h"

typedef struct ns_strtab ns_strtab;
ns_strtab* ns_strtab_new(void);
void ns_strtab_free(ns_strtab* t);
/* The id of string `s` (n bytes); new strings are appended to `enc`
 * (begun lazily: *enc_open tells whether it was). */
uint32_t ns_strtab_intern(ns_strtab* t, const char* s, size_t n, ns_strings_encoder* enc, ns_buf* encbuf,
                          int* enc_open);
/* The string with that id (NUL-terminated, owned by t), NULL if unknown. */
const char* ns_strtab_str(const ns_strtab* t, uint32_t id);

#endif
