/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope util: numbers and switches as people write them in environment
 * variables, with a range. Each returns 0 and sets *out, or returns -1 and
 * leaves *out alone. Spaces around the text are allowed. */
#ifndef NCCLSCOPE_UTIL_NUMTEXT_H
#define NCCLSCOPE_UTIL_NUMTEXT_H

/* strtoull, decimal unless the digits start with 0x: a leading zero is not
 * octal ("0100" is 100). A leading '+' is taken, a '-' is not. */
unsigned long long ns_parse_uint(const char* s, char** end);
/* A whole count in [lo, hi] (ns_parse_uint's syntax). */
int ns_parse_count(const char* s, unsigned long long lo, unsigned long long hi, unsigned long long* out);
/* A plain decimal number of seconds ("12", "0.5", "1e-3"; not hex, inf or
 * nan, which strtod takes too) in [lo, hi]; zero_off: 0 is taken too. */
int ns_parse_seconds(const char* s, double lo, double hi, int zero_off, double* out);
/* 1/0, true/false, yes/no, on/off (any case). */
int ns_parse_switch(const char* s, int* out);

#endif
