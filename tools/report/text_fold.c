/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: folding text to a width (text_fold.h). */
#include "report/text_fold.h"

#include <string.h>

/* The line's lead that its continuations repeat: "#" and the spaces after
 * it, or its indentation. */
static size_t lead_of(const char* s, size_t n) {
  size_t i = 0;
  if (n && s[0] == '#') i = 1;
  while (i < n && s[i] == ' ') i++;
  return i;
}

/* Where to break s[0, n) to fit in room bytes: after the last space at or
 * before room (not inside the lead), else at room, moved back off UTF-8
 * continuation bytes. */
static size_t break_at(const char* s, size_t n, size_t room, size_t lead) {
  if (n <= room) return n;
  for (size_t i = room; i > lead; i--)
    if (s[i] == ' ') return i;
  size_t i = room;
  while (i > 1 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
  return i;
}

static int fold_line(FILE* out, const char* s, size_t n, size_t width) {
  if (n <= width) return fwrite(s, 1, n, out) == n ? 0 : -1;
  size_t lead = lead_of(s, n);
  if (lead > width / 2) lead = 0; /* an indentation that leaves no room is not repeated */
  char pad[128];                  /* the continuations' start: the line's own lead, then 4 spaces */
  if (lead + 4 > sizeof pad) lead = 0;
  memcpy(pad, s, lead);
  memset(pad + lead, ' ', 4);
  size_t pl = lead + 4;
  size_t cut = break_at(s, n, width, lead);
  if (fwrite(s, 1, cut, out) != cut) return -1;
  s += cut, n -= cut;
  for (;;) {
    while (n && *s == ' ') s++, n--; /* the space broken at */
    if (!n) return 0;
    cut = break_at(s, n, width - pl, 0);
    if (fputc('\n', out) == EOF || fwrite(pad, 1, pl, out) != pl || fwrite(s, 1, cut, out) != cut) return -1;
    s += cut, n -= cut;
  }
}

int ns_text_fold(FILE* out, const char* text, size_t len, size_t width) {
  if (width < 40) width = 40;
  const char* end = text + len;
  for (const char* s = text; s < end;) {
    const char* nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (fold_line(out, s, n, width) != 0) return -1;
    if (nl && fputc('\n', out) == EOF) return -1;
    s += n + (nl ? 1 : 0);
  }
  return ferror(out) ? -1 : 0;
}
