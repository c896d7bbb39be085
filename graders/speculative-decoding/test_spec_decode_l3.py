"""Hidden suite of `speculative-decoding`, level 3: the verification step.

The distribution tests enumerate every drafted token (weighted by q) and every piece of [0, 1) the
draws can fall in (see spec_decode_oracle.output_distribution), so they prove, in exact Fractions,
that the emitted tokens are distributed as the target's.
"""

from __future__ import annotations

import copy
from fractions import Fraction as F

from hypothesis import example, given
from hypothesis import strategies as st
from spec_decode_oracle import (
    distributions,
    marginals,
    o_sample,
    o_verify,
    output_distribution,
    prefix_probability,
    spec_cases,
)

from kata.checks import check, check_fraction, check_raises, graded, property_settings

PROPERTY = property_settings(60)

H, T, Q4 = F(1, 2), F(1, 3), F(1, 4)
P = [[H, H, 0], [T, T, T]]
Q = [[Q4, Q4, H]]


# --- acceptance rate -------------------------------------------------------------------


@graded(3, 1, "acceptance_rate: the prompt's 1/2; p == q is 1; disjoint supports are 0")
def test_acceptance_rate(impl):
    check_fraction(impl.acceptance_rate(P[0], Q[0]), H, "acceptance_rate([1/2, 1/2, 0], [1/4, 1/4, 1/2])")
    check_fraction(impl.acceptance_rate([T, T, T], [T, T, T]), F(1), "acceptance_rate(uniform, uniform)")
    check_fraction(impl.acceptance_rate([1, 0], [0, 1]), F(0), "acceptance_rate([1, 0], [0, 1])")


@graded(3, 2, "acceptance_rate is the probability verify accepts one drafted token (by enumeration)")
@PROPERTY
@given(data=st.data(), vocab=st.integers(1, 4))
def test_acceptance_rate_is_the_acceptance_probability(impl, data, vocab):
    p0 = data.draw(distributions(vocab))
    q0 = data.draw(distributions(vocab))
    bonus = [F(1, vocab)] * vocab
    dist = output_distribution(o_verify, [p0, bonus], [q0])
    accepted = sum((pr for seq, pr in dist.items() if len(seq) == 2), F(0))
    check_fraction(impl.acceptance_rate(p0, q0), accepted, f"acceptance_rate({p0}, {q0})")


# --- sample ---------------------------------------------------------------------------


@graded(3, 2, "sample: the smallest k with u * S < cumulative; at an exact boundary the next token")
def test_sample_boundaries(impl):
    w = [Q4, Q4, H]
    for u, want in ((F(0), 0), (F(1, 4) - F(1, 10**9), 0), (F(1, 4), 1), (F(1, 2), 2), (F(999, 1000), 2)):
        check(impl.sample(w, u), want, f"sample([1/4, 1/4, 1/2], {u})")


@graded(3, 2, "sample never picks a zero weight, even at u = 0 or at the boundary in front of it")
def test_sample_skips_zero_weights(impl):
    check(impl.sample([0, 0, 1, 0], F(0)), 2, "sample([0, 0, 1, 0], 0)")
    check(impl.sample([H, 0, H], H), 2, "sample([1/2, 0, 1/2], 1/2)")
    check(impl.sample([H, 0, H], F(0)), 0, "sample([1/2, 0, 1/2], 0)")


@graded(3, 1, "sample normalises: weights need not sum to 1 (ints are rationals)")
def test_sample_unnormalised(impl):
    check(impl.sample([1, 3], Q4), 1, "sample([1, 3], 1/4)")  # 1/4 * 4 = 1, not < 1
    check(impl.sample([1, 3], Q4 - F(1, 100)), 0, "sample([1, 3], 6/25)")
    check(impl.sample([F(3, 10), F(3, 10)], H), 1, "sample([3/10, 3/10], 1/2)")


@graded(3, 2, "sample matches the oracle on generated weights and draws")
@PROPERTY
@given(weights=st.lists(st.integers(0, 5), min_size=1, max_size=6).filter(lambda w: sum(w) > 0),
       u=st.fractions(min_value=0, max_value=F(29, 30), max_denominator=30))
def test_sample_matches_oracle(impl, weights, u):
    check(impl.sample(list(weights), u), o_sample(weights, u), f"sample({weights}, {u})")


# --- verify: one case per rule -------------------------------------------------------------


@graded(3, 2, "verify: the prompt's two examples (accepted then bonus; rejected then residual)")
def test_verify_examples(impl):
    check(impl.verify(P, Q, [0], [F(9, 10), H]), [0, 1], "verify(p, q, [0], [9/10, 1/2])")
    check(impl.verify(P, Q, [2], [F(0), H]), [1], "verify(p, q, [2], [0, 1/2])")


@graded(3, 1, "verify with no draft samples p[0] once with draws[0]")
def test_verify_no_draft(impl):
    check(impl.verify([[H, H]], [], [], [H]), [1], "verify([[1/2, 1/2]], [], [], [1/2])")
    check(impl.verify([[0, 1, 0]], [], [], [F(0)]), [1], "verify([[0, 1, 0]], [], [], [0])")


@graded(3, 2, "a draw exactly equal to p/q rejects (accept only when draws[i] < p/q)")
def test_verify_accept_is_strict(impl):
    p, q = [[Q4, F(3, 4)], [H, H]], [[H, H]]  # token 0: p/q = 1/2
    check(impl.verify(p, q, [0], [H, F(0)]), [1], "verify([[1/4, 3/4], ..], [[1/2, 1/2]], [0], [1/2, 0])")
    check(impl.verify(p, q, [0], [H - F(1, 10**9), F(0)]), [0, 0], "verify(.., [0], [1/2 - 1e-9, 0])")


@graded(3, 1, "p >= q always accepts, even with a draw just under 1; p == q never rejects")
def test_verify_p_at_least_q_accepts(impl):
    u = F(10**9 - 1, 10**9)
    check(impl.verify([[H, H], [H, H]], [[H, H]], [1], [u, F(0)]), [1, 0], "verify(p == q, [1], [1 - 1e-9, 0])")
    check(impl.verify(P, Q, [1], [u, F(0)]), [1, 0], "verify(p, q, [1], [1 - 1e-9, 0]) (p/q = 2)")


@graded(3, 2, "a rejection stops: later drafted tokens are discarded, and exactly one token follows")
def test_verify_rejection_stops(impl):
    p = [[1, 0], [H, H], [1, 0]]
    q = [[0, 1], [H, H]]  # the first draft (token 1) has p/q = 0: rejected
    check(impl.verify(p, q, [1, 0], [F(0), F(0), F(0)]), [0], "verify(.., [1, 0], [0, 0, 0]) (1st draft rejected)")
    p = [[H, H], [1, 0], [1, 0]]
    q = [[H, H], [0, 1]]
    check(impl.verify(p, q, [1, 1], [F(0), F(0), F(0)]), [1, 0], "verify(.., [1, 1], [0, 0, 0]) (2nd draft rejected)")


@graded(3, 2, "the residual is sampled with the last draw, draws[g], not with the rejecting draw")
def test_verify_residual_uses_last_draw(impl):
    p = [[H, 0, H], [1, 0, 0]]
    q = [[0, 1, 0]]  # token 1: p/q = 0, always rejected; residual [1/2, 0, 1/2]
    check(impl.verify(p, q, [1], [F(0), F(3, 4)]), [2], "verify(.., [1], [0, 3/4])")
    check(impl.verify(p, q, [1], [F(3, 4), F(0)]), [0], "verify(.., [1], [3/4, 0])")


@graded(3, 2, "the bonus token after full acceptance comes from p[g], the position after the drafts")
def test_verify_bonus_from_last_p(impl):
    p = [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    q = [[1, 0, 0], [1, 0, 0]]
    check(impl.verify(p, q, [0, 0], [F(0), F(0), F(0)]), [0, 0, 2], "verify(.., [0, 0], [0, 0, 0])")


@graded(3, 2, "a token the draft never proposes (q = 0, p > 0) is reached only through the residual")
def test_verify_token_only_in_residual(impl):
    p = [[H, 0, H], [1, 0, 0]]
    q = [[H, H, 0]]  # token 2 has q = 0: never drafted, yet emitted half the time
    dist = output_distribution(impl.verify, p, q)
    check(marginals(dist, 0), {0: H, 2: H}, "the first emitted token's distribution, p[0] = [1/2, 0, 1/2]")


@graded(3, 1, "verify changes neither its lists nor their distributions")
def test_verify_does_not_modify(impl):
    p, q, drafts, draws = copy.deepcopy(P), copy.deepcopy(Q), [2], [F(0), H]
    got = impl.verify(p, q, drafts, draws)
    check((got, p, q, drafts, draws), ([1], P, Q, [2], [F(0), H]), "verify(p, q, [2], [0, 1/2]), then its arguments")


# --- verify: the distribution is the target's ---------------------------------------------------


@graded(3, 4, "exactly distributed as the target: the first emitted token follows p[0] (every draft, every draw)")
@PROPERTY
@given(case=spec_cases())
@example(case=([[H, H, 0], [T, T, T]], [[Q4, Q4, H]]))
@example(case=([[T, T, T], [1, 0, 0]], [[T, T, T]]))
def test_first_token_follows_target(impl, case):
    p, q = case
    dist = output_distribution(impl.verify, p, q)
    want = {k: F(v) for k, v in enumerate(p[0]) if v > 0}
    check(marginals(dist, 0), want, f"the first token's distribution over all drafts and draws, p={p}, q={q}")


@graded(3, 4, "the whole output (every prefix, length and token) has the oracle's exact distribution")
@PROPERTY
@given(case=spec_cases())
@example(case=([[H, 0, H], [1, 0, 0], [0, 1, 0]], [[H, H, 0], [0, H, H]]))
def test_output_distribution_matches_oracle(impl, case):
    p, q = case
    got = output_distribution(impl.verify, p, q)
    check(got, output_distribution(o_verify, p, q), f"verify's output distribution, p={p}, q={q}")


@graded(3, 2, "after an accepted first token, the second emitted token follows p[1]")
def test_second_token_follows_target(impl):
    p = [[H, H], [F(1, 5), F(4, 5)], [H, H]]
    q = [[F(3, 4), Q4], [H, H]]
    dist = output_distribution(impl.verify, p, q)
    for first in (0, 1):
        both = {t: prefix_probability(dist, (first, t)) for t in (0, 1)}
        total = sum(both.values())
        check({t: v / total for t, v in both.items()}, {0: F(1, 5), 1: F(4, 5)},
              f"P(second token | first = {first}), p[1] = [1/5, 4/5]")


# --- invalid input -----------------------------------------------------------------------------


@graded(3, 2, "distributions: not a list, empty, a float or bool entry, a negative entry, or a sum other than 1 name p or q")
def test_invalid_distributions(impl):
    for bad in (None, [], [0.5, 0.5], [True, 0], [F(3, 2), F(-1, 2)], [H, T], "ab", (H, H)):
        check_raises(lambda: impl.acceptance_rate(bad, [H, H]), "p", f"acceptance_rate({bad!r}, [1/2, 1/2])")
        check_raises(lambda: impl.acceptance_rate([H, H], bad), "q", f"acceptance_rate([1/2, 1/2], {bad!r})")
        check_raises(lambda: impl.verify([bad], [], [], [F(0)]), "p", f"verify([{bad!r}], [], [], [0])")
    check_raises(lambda: impl.acceptance_rate([H, H], [1, 0, 0]), "q", "acceptance_rate([1/2, 1/2], [1, 0, 0])")
    check_raises(lambda: impl.acceptance_rate([H, H, T], [9]), "p", "acceptance_rate([1/2, 1/2, 1/3], [9]) (p first)")


@graded(3, 2, "sample rejects empty, negative, float, bool or all-zero weights (weights), and u outside [0, 1) or not rational (u)")
def test_invalid_sample(impl):
    for bad in ([], [0, 0], [1, -1, 1], [0.5], [True], None, (1, 1)):
        check_raises(lambda: impl.sample(bad, F(0)), "weights", f"sample({bad!r}, 0)")
    for bad in (F(1), F(-1, 2), 0.5, True, None, 1):
        check_raises(lambda: impl.sample([1, 1], bad), "u", f"sample([1, 1], {bad!r})")
    check_raises(lambda: impl.sample([], 2), "weights", "sample([], 2) (weights first)")


@graded(3, 2, "verify's lengths: p non-empty with one V, q of len(p) - 1, draft_tokens of len(q), draws of len(p)")
def test_invalid_verify_lengths(impl):
    check_raises(lambda: impl.verify([], [], [], []), "p", "verify([], [], [], [])")
    check_raises(lambda: impl.verify([[1, 0], [1]], [[1, 0]], [0], [0, 0]), "p", "verify([[1, 0], [1]], ..) (lengths differ)")
    check_raises(lambda: impl.verify(P, [], [], [0]), "q", "verify(p, [], [], [0]) (q too short)")
    check_raises(lambda: impl.verify(P, [[1, 0]], [0], [0, 0]), "q", "verify(p, [[1, 0]], ..) (q of the wrong length V)")
    check_raises(lambda: impl.verify(P, Q, [], [0, 0]), "draft_tokens", "verify(p, q, [], [0, 0])")
    check_raises(lambda: impl.verify(P, Q, [0], [0]), "draws", "verify(p, q, [0], [0])")
    check_raises(lambda: impl.verify(P, Q, [0], (0, 0)), "draws", "verify(p, q, [0], (0, 0))")


@graded(3, 2, "draft tokens out of range, not ints (bool, float) or with q = 0 name draft_tokens; bad draws name draws")
def test_invalid_verify_values(impl):
    for bad in (3, -1, True, 0.0, None, 2.5):
        check_raises(lambda: impl.verify(P, Q, [bad], [0, 0]), "draft_tokens", f"verify(p, q, [{bad!r}], [0, 0])")
    check_raises(lambda: impl.verify([[1, 0], [1, 0]], [[1, 0]], [1], [0, 0]), "draft_tokens",
                 "verify(.., [[1, 0]], [1], ..) (q = 0 for the drafted token)")
    for bad in (F(1), F(-1, 9), 0.5, True, None):
        check_raises(lambda: impl.verify(P, Q, [0], [0, bad]), "draws", f"verify(p, q, [0], [0, {bad!r}])")


@graded(3, 1, "several invalid arguments: p, then q, then draft_tokens, then draws")
def test_invalid_verify_order(impl):
    check_raises(lambda: impl.verify([[2, -1]], [[1]], [5], [1]), "p", "verify([[2, -1]], [[1]], [5], [1])")
    check_raises(lambda: impl.verify(P, [[1]], [5], [1]), "q", "verify(p, [[1]], [5], [1])")
    check_raises(lambda: impl.verify(P, Q, [5], [1]), "draft_tokens", "verify(p, q, [5], [1])")
