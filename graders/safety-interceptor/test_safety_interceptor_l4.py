"""Hidden suite of `safety-interceptor`, level 4: a conversation's risk."""

from __future__ import annotations

from fractions import Fraction as F

from hypothesis import example, given
from hypothesis import strategies as st
from safety_interceptor_oracle import o_flagged

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def flag(impl, scores, turn, conv, decay):
    return impl.first_flagged_turn(list(scores), impl.Policy(turn, conv, decay))


@graded(4, 2, "the prompt's examples: a gradual jailbreak at turn 3, a long benign conversation never, a single bad turn")
def test_prompt_examples(impl):
    check(flag(impl, [F(2, 5)] * 5, F(1, 2), 1, F(3, 4)), 3, "first_flagged_turn([2/5] * 5, Policy(1/2, 1, 3/4))")
    check(flag(impl, [F(1, 5)] * 500, F(1, 2), 1, F(3, 4)), None, "first_flagged_turn([1/5] * 500, Policy(1/2, 1, 3/4))")
    check(flag(impl, [F(1, 5), F(3, 5)], F(1, 2), 1, F(3, 4)), 1, "first_flagged_turn([1/5, 3/5], Policy(1/2, 1, 3/4))")


@graded(4, 2, "both thresholds are inclusive: a score equal to turn_threshold, a risk equal to conversation_threshold")
def test_inclusive_thresholds(impl):
    check(flag(impl, [F(1, 5), F(1, 2)], F(1, 2), 10, 0), 1, "first_flagged_turn([1/5, 1/2], Policy(1/2, 10, 0))")
    # decay 1/2: risk 1/2, then 1/4 + 3/4 = 1
    check(flag(impl, [F(1, 2), F(3, 4)], 1, 1, F(1, 2)), 1, "first_flagged_turn([1/2, 3/4], Policy(1, 1, 1/2))")


@graded(4, 2, "the risk decays: without decay (carry 1/2 instead of all) the same turns stay under the threshold")
def test_decay_applies(impl):
    # carry 1/2: 2/5, 3/5, 7/10, 3/4 ... -> never 1; a sum would reach 1 at turn 2
    check(flag(impl, [F(2, 5)] * 6, 1, 1, F(1, 2)), None, "first_flagged_turn([2/5] * 6, Policy(1, 1, 1/2))")


@graded(4, 1, "decay 0: only the current turn counts toward the conversation threshold")
def test_decay_zero(impl):
    check(flag(impl, [F(3, 10)] * 10, 1, F(3, 10), 0), 0, "first_flagged_turn([3/10] * 10, Policy(1, 3/10, 0))")
    check(flag(impl, [F(3, 10)] * 10, 1, F(31, 100), 0), None, "first_flagged_turn([3/10] * 10, Policy(1, 31/100, 0))")


@graded(4, 1, "the risk starts at 0; a conversation threshold of 0 flags the first turn; no turns gives None")
def test_edges(impl):
    check(flag(impl, [0], 1, 0, F(1, 2)), 0, "first_flagged_turn([0], Policy(1, 0, 1/2))")
    check(flag(impl, [], 0, 0, 0), None, "first_flagged_turn([], Policy(0, 0, 0))")


@graded(4, 2, "exact arithmetic: a risk that reaches the threshold only in Fractions (a float sum stops just short)")
def test_exact(impl):
    # decay 0: ten turns of 1/10 never add; with decay 1 - 1/10**6 the risk climbs slowly; use a case floats get wrong
    scores = [F(1, 10)] * 3
    # decay 1 - 0 is not allowed; use decay 9/10: 1/10, 19/100, 271/1000
    check(flag(impl, scores, 1, F(271, 1000), F(9, 10)), 2, "first_flagged_turn([1/10] * 3, Policy(1, 271/1000, 9/10))")


@graded(4, 1, "scores and thresholds may be ints (0 and 1) as well as Fractions")
def test_int_scores(impl):
    check(flag(impl, [0, 0, 1], 1, 5, F(1, 2)), 2, "first_flagged_turn([0, 0, 1], Policy(1, 5, 1/2))")


@graded(4, 4, "first_flagged_turn matches the oracle on generated conversations and policies")
@PROPERTY
@given(scores=st.lists(st.fractions(0, 1, max_denominator=10), max_size=30), turn=st.fractions(0, 1, max_denominator=10),
       conv=st.fractions(0, 5, max_denominator=10), decay=st.fractions(0, F(9, 10), max_denominator=10))
@example(scores=[F(2, 5)] * 5, turn=F(1, 2), conv=F(1), decay=F(3, 4))
def test_matches_oracle(impl, scores, turn, conv, decay):
    check(flag(impl, scores, turn, conv, decay), o_flagged(scores, turn, conv, decay),
          f"first_flagged_turn({scores}, Policy({turn}, {conv}, {decay}))")


@graded(4, 1, "a benign conversation (every score s) is never flagged by a threshold of s / (1 - decay), for decay > 0")
@PROPERTY
@given(s=st.fractions(0, F(1, 2), max_denominator=10), decay=st.fractions(0, F(9, 10), max_denominator=10), n=st.integers(0, 60))
def test_benign_never_flagged(impl, s, decay, n):
    conv = s / (1 - decay)  # never exceeded; reached only with decay 0 (then the risk is the score)
    if decay == 0 or s == 0:
        conv += F(1, 10)
    check(flag(impl, [s] * n, 1, conv, decay), None, f"first_flagged_turn([{s}] * {n}, Policy(1, {conv}, {decay}))")


@graded(4, 2, "policy fields and scores: floats, bools, None and out-of-range values are named; decay 1 is invalid")
def test_invalid(impl):
    good = (F(1, 2), 1, F(1, 2))
    for i, name, bads in ((0, "turn_threshold", (0.5, True, None, F(3, 2), F(-1, 2))),
                          (1, "conversation_threshold", (1.0, True, None, -1)),
                          (2, "decay", (0.5, True, None, 1, F(-1, 2)))):
        for bad in bads:
            fields = list(good)
            fields[i] = bad
            check_raises(lambda: impl.first_flagged_turn([F(1, 5)], impl.Policy(*fields)), name, f"first_flagged_turn([1/5], Policy{tuple(fields)})")
    for bad in (None, (F(1, 5),), [0.2], [True], [F(6, 5)], [F(-1, 5)]):
        check_raises(lambda: impl.first_flagged_turn(bad, impl.Policy(*good)), "scores", f"first_flagged_turn({bad!r}, Policy(1/2, 1, 1/2))")
    check_raises(lambda: impl.first_flagged_turn(None, impl.Policy(F(1, 2), 1, 1)), "decay", "first_flagged_turn(None, Policy(.., decay 1)) (policy first)")
    check_raises(lambda: impl.first_flagged_turn([F(1, 5)], impl.Policy(F(3, 2), -1, 1)), "turn_threshold",
                 "first_flagged_turn([1/5], Policy(3/2, -1, 1)) (every field bad: the first is named)")
    check_raises(lambda: impl.first_flagged_turn([F(1, 5)], impl.Policy(F(1, 2), -1, 1)), "conversation_threshold",
                 "first_flagged_turn([1/5], Policy(1/2, -1, 1)) (two fields bad: the earlier is named)")


@graded(4, 1, "turn_threshold 0 flags the first turn, whatever its score")
def test_turn_threshold_zero(impl):
    check(flag(impl, [0, 0], 0, 100, F(1, 2)), 0, "first_flagged_turn([0, 0], Policy(0, 100, 1/2))")


@graded(4, 1, "the risk keeps accumulating across low turns and is flagged at the turn it first reaches the threshold")
def test_flag_turn_index(impl):
    # decay 1/2, score 3/10: 3/10, 9/20, 21/40, 87/160 ... -> 3/5 in the limit; threshold 21/40 hits at turn 2
    check(flag(impl, [F(3, 10)] * 10, 1, F(21, 40), F(1, 2)), 2, "first_flagged_turn([3/10] * 10, Policy(1, 21/40, 1/2))")


@graded(4, 1, "a conversation that drifts then calms down is flagged only if the peak risk reached the threshold")
def test_drift_then_calm(impl):
    scores = [F(2, 5), F(2, 5), F(0), F(0), F(2, 5)]
    # decay 1/2: 2/5, 3/5, 3/10, 3/20, 19/40
    check(flag(impl, scores, 1, F(3, 5), F(1, 2)), 1, f"first_flagged_turn({scores}, Policy(1, 3/5, 1/2))")
    check(flag(impl, scores, 1, F(61, 100), F(1, 2)), None, f"first_flagged_turn({scores}, Policy(1, 61/100, 1/2))")
