/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: the inside of a JSON string, from any bytes. Every JSON
 * writer of the plugin and of the tools escapes through it, so every output
 * follows one rule set and is valid UTF-8 whatever NCCL or a trace hands in
 * (communicator names and the like may hold any bytes):
 *
 *  - well-formed UTF-8 (utf8.h) is copied unchanged;
 *  - each byte that is not part of a well-formed sequence (overlong forms,
 *    surrogates, code points above U+10FFFF, stray continuation bytes,
 *    sequences cut short) becomes \ufffd, one per byte;
 *  - '"' and '\\' become \" and \\;
 *  - the control characters U+0000..U+001F and U+007F become \b, \t, \n,
 *    \f, \r or \u00XX (lower-case hex);
 *  - with NS_JSON_ESC_HTML, also '<', '>', '&' become \u003c, \u003e,
 *    \u0026 and U+2028, U+2029 become \u2028, \u2029: the text may then sit
 *    in an HTML <script> element (no "</script", "<!--" or "<script" in it)
 *    and in JavaScript source. The string it stands for is the same.
 *
 * Input is a pointer and a length (a NUL byte is \u0000). Thread-safe: no
 * state, no allocation, no syscall. */
#ifndef NCCLSCOPE_UTIL_JSON_ESCAPE_H
#define NCCLSCOPE_UTIL_JSON_ESCAPE_H

#include <stddef.h>

#define NS_JSON_ESC_HTML 1u /* flag: safe inside an HTML <script> element */

/* The most output bytes one unit takes (a unit: a UTF-8 sequence, or one
 * byte with its escape); also the most one input byte grows to. */
#define NS_JSON_ESC_UNIT_MAX 6

/* in[0, n) escaped into out[0, cap) (no quotes, no NUL added), whole units
 * only: a UTF-8 sequence or an escape is never cut. Returns the bytes
 * written; *used gets the input bytes consumed, less than n when out had
 * no room for the next unit (the caller may go on from in + *used). */
size_t ns_json_escape(char* out, size_t cap, const char* in, size_t n, unsigned flags, size_t* used);

/* Per byte: 2 copied as is, 1 copied as is unless NS_JSON_ESC_HTML, 0
 * escaped (or, from 0x80, the start of a sequence to check). A byte is
 * copied when ns_json_plain_byte[c] > (flags & NS_JSON_ESC_HTML): writers
 * with an inline path for short plain strings test it the same way. */
extern const unsigned char ns_json_plain_byte[256];

#endif
