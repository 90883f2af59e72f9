# SPDX-License-Identifier: Apache-2.0
"""What the Python test drivers share: a failed check, a skip, the exit
status ctest reads (0 pass, 1 fail, 77 skip: SKIP_RETURN_CODE), a fresh dump
directory, temporary directories that go at exit, the `DRIVER CHECK WORKDIR`
command line and an option with a value taken out of a command line, and the
LEB128 varint of the trace format and protobuf. Stdlib only."""
import atexit
import os
import shutil
import tempfile

SKIP = 77


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def outcome(fn, *args):
    """Runs fn(*args); prints PASS, FAIL: why or SKIP: why; returns the exit status."""
    try:
        fn(*args)
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0


def fresh_dump(work):
    """WORK/dump, created and emptied; returns its path."""
    dump = os.path.join(work, "dump")
    os.makedirs(dump, exist_ok=True)
    for name in os.listdir(dump):
        os.unlink(os.path.join(dump, name))
    return dump


def temp_under_one_dir(prefix):
    """Every later tempfile.mkdtemp/mkstemp of this process goes under one new directory of the system's
    temporary directory, removed with everything in it when the process exits, so that a driver making
    hundreds of runs leaves nothing in /tmp. NS_KEEP_TMP=1 keeps it (to look at a failure); returns its path."""
    root = tempfile.mkdtemp(prefix=prefix)
    tempfile.tempdir = root
    if not os.environ.get("NS_KEEP_TMP"):
        atexit.register(shutil.rmtree, root, True)
    return root


def run_named(checks, doc, argv):
    """`DRIVER CHECK WORKDIR`: runs checks[CHECK](WORKDIR); the usage (doc) and 2 otherwise."""
    if len(argv) != 3 or argv[1] not in checks:
        print(doc)
        return 2
    return outcome(checks[argv[1]], argv[2])


def varint(b, i):
    """The unsigned LEB128 varint at b[i] (the trace format's and protobuf's): (value, index after it)."""
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def pop_option(args, name, conv, default):
    """conv(VALUE) of `name VALUE` in the list args, both then removed from it; default when name is absent."""
    if name not in args:
        return default
    i = args.index(name)
    value = conv(args[i + 1])
    del args[i:i + 2]
    return value
