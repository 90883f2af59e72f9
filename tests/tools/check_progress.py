#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The export's progress line: on stderr when it is a terminal (a pty here),
never when it is not.

usage: check_progress.py NCCLSCOPE DUMPDIR OUTFILE

Runs `ncclscope export DUMPDIR -o OUTFILE` twice with NCCLSCOPE_PROGRESS_MS=0
(the line may show at once instead of after a second): with stderr on a
pseudo-terminal, the output must hold a "\\rncclscope: file 1 of N, X MB
read, S s" line and end it with a newline; with stderr on a pipe, no
carriage return at all. stdlib only."""
import os
import pty
import re
import subprocess
import sys


def on_pty(argv, env):
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(), b"".join(chunks).decode("utf-8", "replace")


def main():
    exe, dump, out = sys.argv[1:4]
    env = dict(os.environ, NCCLSCOPE_PROGRESS_MS="0")
    argv = [exe, "export", dump, "-o", out]
    rc, text = on_pty(argv, env)
    if rc != 0:
        print("FAIL: export on a pty exited %d: %s" % (rc, text[-500:]))
        return 1
    lines = re.findall(r"\rncclscope: file (\d+) of (\d+), ([0-9.]+) MB read, (\d+) s", text)
    if not lines:
        print("FAIL: no progress line on the terminal; stderr was %r" % text[-500:])
        return 1
    after = text[text.rindex("\rncclscope: file"):]
    if "\n" not in after:
        print("FAIL: the progress line is not ended by a newline")
        return 1
    res = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if res.returncode != 0 or b"\r" in res.stderr or b"MB read" in res.stderr:
        print("FAIL: progress written to a non-terminal stderr (exit %d): %r" % (res.returncode, res.stderr[-300:]))
        return 1
    print("progress: %d updates on the terminal (last: file %s of %s, %s MB), none on a pipe" % ((len(lines),) + lines[-1][:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
