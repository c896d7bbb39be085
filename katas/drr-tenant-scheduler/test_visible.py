"""Visible examples for drr-tenant-scheduler: run with `kata check drr-tenant-scheduler`."""

import pytest


@pytest.mark.level(1)
def test_prompt_example(impl):
    R, O = impl.Request, impl.Outcome
    got = impl.schedule_drr([R(1, "A", 0, 3), R(2, "A", 0, 3), R(3, "B", 1, 2), R(4, "A", 2, 1),
                             R(5, "B", 2, 1), R(6, "C", 3, 4), R(7, "B", 20, 2)],
                            {"A": 2, "B": 1, "C": 1}, 2)
    assert got.outcomes == {1: O(1, "A", 0, 3), 2: O(2, "A", 5, 8), 3: O(3, "B", 3, 5), 4: O(4, "A", 8, 9),
                            5: O(5, "B", 9, 10), 6: O(6, "C", 10, 14), 7: O(7, "B", 20, 22)}
    assert got.p99_wait == {"A": 6, "B": 7, "C": 7}


@pytest.mark.level(1)
def test_two_tenants_alternate(impl):
    R = impl.Request
    got = impl.schedule_drr([R(1, "a", 0, 1), R(2, "a", 0, 1), R(3, "b", 0, 1), R(4, "b", 0, 1)],
                            {"a": 1, "b": 1}, 1)
    assert [got.outcomes[i].start for i in (1, 3, 2, 4)] == [0, 1, 2, 3]


@pytest.mark.level(1)
def test_empty(impl):
    assert impl.schedule_drr([], {"a": 1}, 5) == impl.DRRResult({}, {})


@pytest.mark.level(1)
def test_unknown_tenant(impl):
    with pytest.raises(ValueError, match="^tenant"):
        impl.schedule_drr([impl.Request(1, "x", 0, 1)], {"a": 1}, 1)


@pytest.mark.level(1)
def test_lone_tenant_starts_new_turns(impl):
    # alone, "a" needs three turns of 2 for cost 5, at once; it keeps 1, which pays for request 2
    R = impl.Request
    got = impl.schedule_drr([R(1, "a", 0, 5), R(2, "a", 0, 1), R(3, "a", 0, 1), R(4, "b", 5, 1)],
                            {"a": 1, "b": 1}, 2)
    assert [got.outcomes[i].start for i in (1, 2, 4, 3)] == [0, 5, 6, 7]
