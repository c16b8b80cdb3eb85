# The safety corpus's Python script (tests/integration/test_safety.cpp):
# exceptions raised and caught at several depths, a generator, a class, and
# output on both streams. Deterministic.
import sys


class Oops(Exception):
    pass


def deep(n):
    if n == 0:
        raise Oops("bottom")
    return deep(n - 1)


def catch_at(depth):
    try:
        deep(depth)
    except Oops as e:
        return f"caught {e} from depth {depth}"


def squares(n):
    for i in range(n):
        yield i * i


results = [catch_at(d) for d in range(5)]
print("\n".join(results))
try:
    try:
        {}["missing"]
    except KeyError as e:
        raise ValueError("wrapped") from e
except ValueError as e:
    print("chained:", e, "<-", repr(e.__cause__))
print("sum of squares:", sum(squares(1000)))
print("sorted:", sorted(["pear", "apple", "fig"], key=len))
print("to stderr", file=sys.stderr)
try:
    1 / 0
except ZeroDivisionError:
    print("division handled")
sys.exit(3)
