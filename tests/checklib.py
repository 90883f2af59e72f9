"""What the Python test drivers share: a failed check, a skip, and the exit
status ctest reads (0 pass, 1 fail, 77 skip: SKIP_RETURN_CODE). Stdlib only."""

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
