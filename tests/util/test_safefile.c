/* SPDX-License-Identifier: Apache-2.0 */
/* src/util/safefile.c, in a fresh directory: file modes parsed and widened
 * for directories; directories created with their parents and a symlink at
 * the last component refused; temporary files unpredictable and exclusive;
 * unique names taken in order; an output replaced atomically (a reader sees
 * the old file or the new one, never a part), a symlink's target replaced
 * and not the link, a FIFO written in place, an abort leaving nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/safefile.h"

static char root[256];

static void path_of(char* out, size_t cap, const char* rel) { snprintf(out, cap, "%s/%s", root, rel); }

static void slurp(const char* rel, char* out, size_t cap) {
  char p[512];
  path_of(p, sizeof p, rel);
  out[0] = 0;
  FILE* f = fopen(p, "rb");
  if (!f) return;
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = 0;
  fclose(f);
}

static unsigned mode_of(const char* rel) {
  char p[512];
  struct stat st;
  path_of(p, sizeof p, rel);
  return lstat(p, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xFFFFFFFFu;
}

/* Entries of a directory whose name starts with '.' (temporary files). */
static int hidden_entries(const char* rel) {
  char p[512];
  path_of(p, sizeof p, rel);
  DIR* d = opendir(p);
  int n = 0;
  for (struct dirent* e; d && (e = readdir(d));)
    if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

static void test_modes(void) {
  unsigned m = 0;
  CHECK_U64(ns_file_mode_parse("640", &m), 0);
  CHECK_U64(m, 0640);
  CHECK_U64(ns_file_mode_parse("0600", &m), 0);
  CHECK_U64(m, 0600);
  CHECK_U64(ns_file_mode_parse("0777", &m), 0);
  CHECK_U64(m, 0777);
  static const char* const bad[] = {"", "0200", "0400", "1777", "0888", "abc", "0x1a0", "-640", "640x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    m = 12345;
    CHECK_TRUE(ns_file_mode_parse(bad[i], &m) != 0);
  }
  CHECK_U64(ns_dir_mode_for(0640), 0750);
  CHECK_U64(ns_dir_mode_for(0600), 0700);
  CHECK_U64(ns_dir_mode_for(0644), 0755);
  CHECK_U64(ns_dir_mode_for(0664), 0775);
}

static void test_dirs(void) {
  char p[512];
  path_of(p, sizeof p, "a/b/c");
  int fd = ns_dir_open(p, 0750, 1);
  CHECK_TRUE(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK_U64(mode_of("a"), 0750);
  CHECK_U64(mode_of("a/b/c"), 0750);
  /* not created without `create` */
  path_of(p, sizeof p, "a/b/d");
  errno = 0;
  CHECK_TRUE(ns_dir_open(p, 0750, 0) < 0 && errno == ENOENT);
  /* a symlink as the last component is refused, not followed */
  char target[512];
  path_of(target, sizeof target, "a/b/c");
  path_of(p, sizeof p, "link");
  CHECK_U64(symlink(target, p), 0);
  errno = 0;
  CHECK_TRUE(ns_dir_open(p, 0750, 1) < 0 && errno == ELOOP);
}

static void test_tmp_and_unique(int dirfd) {
  char a[300], b[300];
  int fa = ns_tmp_create(dirfd, "x.json", 0600, a, sizeof a);
  int fb = ns_tmp_create(dirfd, "x.json", 0600, b, sizeof b);
  CHECK_TRUE(fa >= 0 && fb >= 0);
  CHECK_TRUE(strcmp(a, b) != 0);
  CHECK_TRUE(!strncmp(a, ".x.json.", 8) && strlen(a) == strlen(".x.json.XXXXXXXXXXXX.tmp"));
  CHECK_TRUE(strlen(a) > 4 && !strcmp(a + strlen(a) - 4, ".tmp"));
  char rel[400];
  snprintf(rel, sizeof rel, "a/b/c/%s", a);
  CHECK_U64(mode_of(rel), 0600);
  if (fa >= 0) close(fa);
  if (fb >= 0) close(fb);
  unlinkat(dirfd, a, 0);
  unlinkat(dirfd, b, 0);

  char name[300];
  int f1 = ns_create_unique(dirfd, "trace", ".nst", 5, O_WRONLY, 0640, name, sizeof name);
  CHECK_STR(name, "trace.nst");
  int f2 = ns_create_unique(dirfd, "trace", ".nst", 5, O_WRONLY, 0640, name, sizeof name);
  CHECK_STR(name, "trace-5.nst");
  int f3 = ns_create_unique(dirfd, "trace", ".nst", 5, O_WRONLY, 0640, name, sizeof name);
  CHECK_STR(name, "trace-6.nst");
  CHECK_TRUE(f1 >= 0 && f2 >= 0 && f3 >= 0);
  CHECK_U64(mode_of("a/b/c/trace-6.nst"), 0640);
  close(f1), close(f2), close(f3);
}

static void test_outputs(void) {
  char p[512], err[256];
  ns_out o;
  /* a new file: mode as asked, nothing left behind */
  path_of(p, sizeof p, "out.txt");
  CHECK_U64(ns_out_open(&o, p, 0604, err, sizeof err), 0);
  fputs("first", o.f);
  CHECK_U64(ns_out_commit(&o, err, sizeof err), 0);
  char text[64];
  slurp("out.txt", text, sizeof text);
  CHECK_STR(text, "first");
  CHECK_U64(mode_of("out.txt"), 0604);
  /* replaced: the old content stays whole until the commit; the mode is kept */
  CHECK_U64(chmod(p, 0640), 0);
  CHECK_U64(ns_out_open(&o, p, 0600, err, sizeof err), 0);
  fputs("second, longer", o.f);
  fflush(o.f);
  slurp("out.txt", text, sizeof text);
  CHECK_STR(text, "first");
  CHECK_U64(ns_out_commit(&o, err, sizeof err), 0);
  slurp("out.txt", text, sizeof text);
  CHECK_STR(text, "second, longer");
  CHECK_U64(mode_of("out.txt"), 0640);
  /* aborted: the old file as it was, no temporary file */
  CHECK_U64(ns_out_open(&o, p, 0600, err, sizeof err), 0);
  fputs("third", o.f);
  ns_out_abort(&o);
  slurp("out.txt", text, sizeof text);
  CHECK_STR(text, "second, longer");
  CHECK_U64(hidden_entries(""), 0);
  /* a symlink to a regular file: its target is replaced, the link stays a link */
  char lnk[512];
  path_of(lnk, sizeof lnk, "out-link.txt");
  CHECK_U64(symlink("out.txt", lnk), 0);
  CHECK_U64(ns_out_open(&o, lnk, 0600, err, sizeof err), 0);
  fputs("through the link", o.f);
  CHECK_U64(ns_out_commit(&o, err, sizeof err), 0);
  slurp("out.txt", text, sizeof text);
  CHECK_STR(text, "through the link");
  struct stat st;
  CHECK_TRUE(lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode));
  /* a FIFO with no reader: an error at once, not a hang */
  char fifo[512];
  path_of(fifo, sizeof fifo, "fifo");
  CHECK_U64(mkfifo(fifo, 0600), 0);
  err[0] = 0;
  CHECK_TRUE(ns_out_open(&o, fifo, 0600, err, sizeof err) != 0);
  CHECK_TRUE(err[0] != 0);
  /* a file that must replace no one's: the first free name */
  int dirfd = open(root, O_RDONLY | O_DIRECTORY);
  char name[300];
  for (int i = 0; i < 2; i++) {
    CHECK_U64(ns_out_open_at(&o, dirfd, "summary.json", "summary.json", 0640, err, sizeof err), 0);
    fprintf(o.f, "v%d", i);
    CHECK_U64(ns_out_commit_unique(&o, "summary", ".json", 9, name, sizeof name, err, sizeof err), 0);
    CHECK_STR(name, i ? "summary-9.json" : "summary.json");
  }
  slurp("summary.json", text, sizeof text);
  CHECK_STR(text, "v0");
  slurp("summary-9.json", text, sizeof text);
  CHECK_STR(text, "v1");
  CHECK_U64(hidden_entries(""), 0);
  close(dirfd);
}

int main(void) {
  const char* tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/ns-safefile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) return perror("mkdtemp"), 1;
  umask(022);
  test_modes();
  test_dirs();
  char p[512];
  path_of(p, sizeof p, "a/b/c");
  int dirfd = ns_dir_open(p, 0750, 0);
  CHECK_TRUE(dirfd >= 0);
  if (dirfd >= 0) test_tmp_and_unique(dirfd), close(dirfd);
  test_outputs();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  CHECK_DONE();
}
