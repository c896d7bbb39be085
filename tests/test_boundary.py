"""The process boundary (kata/boundary.py): the learner's module in a process of its own, what
crosses, what stays, and what the learner's code can no longer reach."""

from __future__ import annotations

import os
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from kata import boundary, checks
from kata.boundary import BoundaryError, Client, RemoteModule
from kata.strict import same

LEARNER = '''
import os, sys, time
from collections import namedtuple
from dataclasses import dataclass

print("imported")
Point = namedtuple("Point", "x y")


class OutOfBlocks(ValueError):
    pass


class Deeper(OutOfBlocks):
    def __str__(self):
        return "deeper: " + self.args[0]


@dataclass
class Req:
    id: int
    size: int


class Store:
    def __init__(self, n):
        self.n, self.items = n, []

    def add(self, r):
        if len(self.items) >= self.n:
            raise OutOfBlocks(f"no room for {r.id}")
        self.items.append(r)
        return len(self.items)

    def all(self):
        return list(self.items)

    def __len__(self):
        return len(self.items)


class Liar:
    def __eq__(self, other):
        return True


def echo(x):
    return x


def mutate(xs, d, s):
    xs.append("added")
    d["k"] = 1
    s.add(9)
    raise KeyError("after mutating")


def use(f, it):
    return [f(x) for x in it]


def loud():
    print("hello from the learner")
    return 1


def deeper():
    raise Deeper("x")


def where():
    return os.getpid(), sorted(m for m in sys.modules if m.startswith(("kata", "_pytest", "pytest")))


def leave(kind):
    raise {"exit": SystemExit(2), "interrupt": KeyboardInterrupt(), "generator": GeneratorExit()}[kind]


class Abort(KeyboardInterrupt):
    pass


def abort():
    raise Abort()


def spin():
    while True:
        pass


def die():
    os._exit(3)


def order():
    return list({f"key-{i}" for i in range(50)})


def frames():
    names, f = [], sys._getframe(1)
    while f is not None:
        names.append(sorted(f.f_locals))
        f = f.f_back
    return names
'''


@pytest.fixture
def impl(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(LEARNER))
    client = Client(str(path), "learner")
    yield RemoteModule(client)
    client.stop()


def test_data_crosses_with_its_types(impl):
    values = [None, True, 1, 2**80, 1.5, float("inf"), -0.0, "é\udc80", b"\x00\xff", bytearray(b"ab"),
              Fraction(1, 3), complex(1, 2), (1, "a"), [1, [2]], {(1, 2): {"a"}, "k": frozenset({1})}, {3}]
    for value in values:
        got = impl.echo(value)
        assert same(got, value) and type(got) is type(value), value
    nan = impl.echo(float("nan"))
    assert nan != nan
    assert same(impl.echo(True), True) and not same(impl.echo(1), True)


def test_objects_stay_in_their_process_with_identity_and_class(impl):
    store, r1 = impl.Store(2), impl.Req(1, 5)
    assert store.add(r1) == 1 and len(store) == 1
    assert store.all()[0] is r1  # the same object is the same proxy
    assert type(r1) is impl.Req and isinstance(r1, impl.Req) and not isinstance(store, impl.Req)
    assert same(store.all(), [impl.Req(1, 5)]) and not same(store.all(), [impl.Req(1, 6)])
    r1.size = 7
    assert r1.size == 7 and "size=7" in repr(r1)
    p = impl.Point(1, 2)  # a namedtuple crosses as a tuple of that name
    assert same(p, (1, 2)) and type(p).__name__ == "Point" and p.y == 2


def test_the_learners_exceptions_are_raised_as_their_types(impl):
    store = impl.Store(0)
    with pytest.raises(impl.OutOfBlocks, match="no room for 1"):
        store.add(impl.Req(1, 1))
    with pytest.raises(ValueError):
        store.add(impl.Req(1, 1))
    with pytest.raises(impl.OutOfBlocks, match="deeper: x") as caught:
        impl.deeper()
    assert type(caught.value) is impl.Deeper
    with pytest.raises(AttributeError):
        impl.no_such_name  # noqa: B018


def test_an_exit_or_interrupt_in_the_learners_code_only_fails_the_call(impl):
    for kind in ("exit", "interrupt", "generator"):
        with pytest.raises(boundary.LearnerExit, match="the code raised"):
            impl.leave(kind)
    with pytest.raises(Exception) as caught:  # its own KeyboardInterrupt: an Exception here
        impl.abort()
    assert not isinstance(caught.value, KeyboardInterrupt)
    assert impl.echo(1) == 1


def test_mutated_arguments_come_back_even_when_the_call_raises(impl):
    xs, d, s = ["a"], {}, set()
    with pytest.raises(KeyError):
        impl.mutate(xs, d, s)
    assert xs == ["a", "added"] and d == {"k": 1} and s == {9}


def test_callbacks_iterators_and_prints_cross(impl, capsys):
    assert impl.use(lambda x: x * 10, iter([1, 2])) == [10, 20]
    assert impl.use(str, range(3)) == ["0", "1", "2"]
    assert impl.loud() == 1
    assert "hello from the learner" in capsys.readouterr().out


def test_equality_never_asks_the_learners_eq(impl):
    liar = impl.Liar()
    assert not same(liar, [1]) and not same(liar, "x") and liar != impl.Req(1, 1)


def test_the_learners_process_holds_no_grader_and_sees_no_grader_frame(impl):
    pid, modules = impl.where()
    assert pid != os.getpid() and modules == []
    names = impl.frames()  # every frame above the learner's code is the server's own
    assert not any("expected" in f or "impl" in f for f in names), names


def test_the_same_code_answers_the_same_every_run(tmp_path):
    """String hashes (a set's order) are the same in every learner's process: PYTHONHASHSEED=0."""
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(LEARNER))
    orders = []
    for _ in range(2):
        client = Client(str(path), "learner")
        orders.append(RemoteModule(client).order())
        client.stop()
    assert orders[0] == orders[1]


def test_a_dead_or_hung_process_costs_one_call_then_a_fresh_one_answers(impl):
    before = impl.Req(1, 1)
    with pytest.raises(BoundaryError, match="exit code 3"):
        impl.die()
    assert impl.echo(5) == 5  # a fresh process
    with pytest.raises(BoundaryError, match="earlier run"):
        impl.echo(before)
    client = RemoteModule._client_of(impl)
    assert client.restarts == 1


def test_cpu_time_is_measured_and_bounded_where_the_code_runs(impl):
    client = RemoteModule._client_of(impl)
    impl.echo(0)
    start = client.remote_cpu()
    client.budget(0.3)
    with pytest.raises(checks.TooSlow):
        impl.spin()
    client.budget(0)
    assert client.remote_cpu() - start >= 0.25
    assert boundary.cpu_apart() >= start + 0.25  # kata.checks's clock counts it


def test_an_import_that_fails_says_why_in_one_line(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n")
    client = Client(str(path), "broken")
    with pytest.raises(BoundaryError, match=r"importing broken.py raised SyntaxError at line 1"):
        client.module()
    Path(path).write_text("raise SystemExit(4)\n")
    with pytest.raises(BoundaryError, match="SystemExit"):
        Client(str(path), "broken").module()


def test_the_grading_page_names_every_kata_graded_apart():
    import re

    from kata.catalog import Workbook

    root = Path(__file__).resolve().parents[1]
    wb = Workbook.find(root)
    apart = sorted(s for s in wb.slugs() if wb.kata(s).process_boundary)
    page = " ".join((root / "docs" / "GRADING.md").read_text().split())
    listed = re.search(r"process_boundary = true` \((\w+) of the twenty today: ([a-z, -]+)\)", page)
    assert listed is not None
    words = {10: "ten", 11: "eleven", 12: "twelve", 20: "all"}
    assert listed.group(1) == words.get(len(apart)) and listed.group(2).split(", ") == apart
