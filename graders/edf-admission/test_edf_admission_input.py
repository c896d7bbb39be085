"""Hidden suite, level 1: invalid input, the order in which it is reported, and result types."""

import pytest
from edf_admission_oracle import check

from kata.checks import check_raises, graded


def _expect(impl, specs, word):
    jobs = [impl.Job(*spec) if isinstance(spec, tuple) else spec for spec in specs]
    check_raises(lambda: impl.schedule(jobs), word, f"schedule({specs!r})", anywhere=True)


@graded(1, 1, "arrival negative or not an int (bool, float, str, None) raises ValueError naming arrival")
@pytest.mark.parametrize("bad", [-1, True, 1.0, "1", None])
def test_bad_arrival(impl, bad):
    _expect(impl, [("a", bad, 1, 5)], "arrival")


@graded(1, 1, "duration below 1 or not an int raises ValueError naming duration")
@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "2", None])
def test_bad_duration(impl, bad):
    _expect(impl, [("a", 0, bad, 5)], "duration")


@graded(1, 1, "deadline negative or not an int raises ValueError naming deadline")
@pytest.mark.parametrize("bad", [-1, False, 5.0, "5", None])
def test_bad_deadline(impl, bad):
    _expect(impl, [("a", 0, 1, bad)], "deadline")


@graded(1, 2, "a duplicate id raises ValueError naming id, even when the first holder is too_late")
def test_duplicate_id(impl):
    _expect(impl, [("a", 0, 9, 1), ("b", 0, 1, 5), ("a", 3, 1, 9)], "id")


@graded(1, 1, "within a job: arrival before duration")
def test_order_arrival_before_duration(impl):
    _expect(impl, [("a", None, 0, 5)], "arrival")


@graded(1, 1, "within a job: duration before deadline")
def test_order_duration_before_deadline(impl):
    _expect(impl, [("a", 0, 0, -1)], "duration")


@graded(1, 2, "within one job, its fields come before its duplicate id (the prompt's first example)")
@pytest.mark.parametrize("field, spec", [("arrival", ("a", -1, 1, 5)), ("duration", ("a", 0, 0, 5)),
                                         ("deadline", ("a", 0, 1, -1))], ids=["arrival", "duration", "deadline"])
def test_order_same_job_field_before_duplicate(impl, field, spec):
    _expect(impl, [("a", 0, 1, 5), spec], field)


@graded(1, 2, "a duplicate id on the second job beats a bad duration on the third (the prompt's second example)")
def test_order_prompt_duplicate_before_later_job(impl):
    _expect(impl, [("a", 0, 1, 5), ("a", 0, 1, 5), ("b", 0, 0, 5)], "id")


@graded(1, 2, "a bad duration on a job before a duplicate id is reported as duration")
def test_order_bad_field_before_duplicate(impl):
    _expect(impl, [("a", 0, 1, 5), ("b", 0, 0, 5), ("a", 1, 1, 5)], "duration")


@graded(1, 2, "a duplicate id before a job with a bad deadline is reported as id")
def test_order_duplicate_before_bad_field(impl):
    _expect(impl, [("a", 0, 1, 5), ("a", 1, 1, 5), ("b", 0, 1, -3)], "id")


@graded(1, 2, "errors follow list order, not arrival order: a bad deadline on an early-listed late arrival wins")
def test_order_list_not_arrival(impl):
    _expect(impl, [("late", 9, 1, -1), ("early", 0, 0, 5)], "deadline")


@graded(1, 2, "a bad field on the last of many jobs is still found before anything is returned")
def test_bad_field_late_in_list(impl):
    specs = [(f"j{i}", i, 1, i + 1) for i in range(50)] + [("last", 60, 1, None)]
    _expect(impl, specs, "deadline")


@graded(1, 2, "result types: a Schedule whose finish values are ints and rejected values strs")
def test_result_types(impl):
    got = impl.schedule([impl.Job("a", 0, 2, 5), impl.Job("b", 0, 9, 1)])
    check((type(got) is impl.Schedule, got.finish, got.rejected), (True, {"a": 2}, {"b": "too_late"}),
          "schedule([Job('a', 0, 2, 5), Job('b', 0, 9, 1)])")
