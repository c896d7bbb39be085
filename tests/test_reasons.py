"""A test's reason (timed out; never run, the budget spent) is a value the supervisor sets, not
prose read back: JSON outputs are as they were, and a result read back from JSON gets it again."""

from __future__ import annotations

import json

from kata.catalog import Workbook
from kata.grading import Limits, grade
from kata.results import Reason, SuiteResult, ran_out_of_time, timeout_line

SPINS = ("def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    while True:\n        pass\n\n"
         "def mul(a, b):\n    return a * b\n\ndef neg(a):\n    return -a\n\ndef div(a, b):\n    return a / b\n")


def test_a_timeout_is_a_reason_set_where_it_happens_and_kept_through_json(fixture_workbook, tmp_path):
    kata = Workbook.find(fixture_workbook).kata("adder")
    mine = tmp_path / "adder.py"
    mine.write_text(SPINS)
    result = grade(kata, mine, "hidden", Limits(test_timeout=1, hard_test_grace=1, wall_timeout=30))
    spun = [t for t in result.tests if t.name.endswith("test_sub")]
    assert [t.reason for t in spun] == [Reason.TIMED_OUT] and ran_out_of_time(spun[0])
    assert all(t.reason is None for t in result.tests if not t.name.endswith("test_sub"))
    data = result.to_json()
    assert all("reason" not in t for t in data["tests"])  # the JSON every output writes is as it was
    again = SuiteResult.from_json(json.loads(json.dumps(data)))
    assert [t.reason for t in again.tests] == [t.reason for t in result.tests]
    assert timeout_line(again) == timeout_line(result) == "1 test timed out: an infinite loop?"
