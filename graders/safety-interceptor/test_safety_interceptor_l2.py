"""Hidden suite of `safety-interceptor`, level 2: streaming hold-back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from safety_interceptor_oracle import o_hold_back, stream_tuple

from kata.checks import check, check_raises, graded, property_settings

PROPERTY = property_settings()


def hb(impl, *args):
    return stream_tuple(impl.hold_back(*args))


@graded(2, 2, "the prompt's example, with and without a flag")
def test_prompt_example(impl):
    check(hb(impl, 7, 100, 10, 3, 5, None), ([125, 125, 125, 155, 155, 155, 165], None, 25), "hold_back(7, 100, 10, 3, 5, None)")
    check(hb(impl, 7, 100, 10, 3, 5, 4), ([125, 125, 125], 155, 25), "hold_back(7, 100, 10, 3, 5, 4)")


@graded(2, 2, "chunks are released in order: a slow check holds back the chunks behind it")
def test_release_in_order(impl):
    # chunk ends 20, 50, 60; checks done 45, 75, 85: token 0 waits 45
    check(hb(impl, 7, 0, 10, 3, 25, None), ([45, 45, 45, 75, 75, 75, 85], None, 45), "hold_back(7, 0, 10, 3, 25, None)")
    # tpot 0: all tokens at once; checks finish together; order keeps them equal
    check(hb(impl, 5, 3, 0, 2, 4, None), ([7, 7, 7, 7, 7], None, 4), "hold_back(5, 3, 0, 2, 4, None)")


@graded(2, 2, "the last chunk may be short: its check starts at its own last token")
def test_short_last_chunk(impl):
    check(hb(impl, 4, 0, 10, 3, 1, None), ([21, 21, 21, 31], None, 21), "hold_back(4, 0, 10, 3, 1, None)")


@graded(2, 2, "a flag in the first chunk releases nothing; the refusal goes at that check")
def test_flag_first_chunk(impl):
    check(hb(impl, 6, 50, 5, 3, 2, 0), ([], 62, 0), "hold_back(6, 50, 5, 3, 2, 0)")


@graded(2, 2, "a flag on a chunk's last token still withholds the whole chunk, and nothing after it")
def test_flag_last_of_chunk(impl):
    check(hb(impl, 9, 0, 1, 3, 0, 5), ([2, 2, 2], 5, 2), "hold_back(9, 0, 1, 3, 0, 5)")


@graded(2, 2, "the refusal goes when the flagged chunk's check finishes, after the earlier chunks")
def test_refusal_after_earlier_chunks(impl):
    # k = 1, check 100: token 0 released at 100; token 1's check flags at 101
    check(hb(impl, 3, 0, 1, 1, 100, 1), ([100], 101, 100), "hold_back(3, 0, 1, 1, 100, 1)")
    # equal finish times: k = 2, tpot 0, check 7: both chunks finish at 7; the refusal at 7
    check(hb(impl, 4, 0, 0, 2, 7, 3), ([7, 7], 7, 7), "hold_back(4, 0, 0, 2, 7, 3)")


@graded(2, 1, "k = 1 with check_time 0 releases each token as it is generated: no added latency")
def test_no_hold_back(impl):
    check(hb(impl, 4, 10, 3, 1, 0, None), ([10, 13, 16, 19], None, 0), "hold_back(4, 10, 3, 1, 0, None)")


@graded(2, 1, "no tokens: nothing released, no refusal, added latency 0")
def test_no_tokens(impl):
    check(hb(impl, 0, 10, 3, 2, 5, None), ([], None, 0), "hold_back(0, 10, 3, 2, 5, None)")


@graded(2, 1, "k larger than the stream: one chunk, checked after the last token")
def test_one_chunk(impl):
    check(hb(impl, 3, 0, 4, 10, 2, None), ([10, 10, 10], None, 10), "hold_back(3, 0, 4, 10, 2, None)")


@graded(2, 4, "hold_back matches the oracle, and nothing at or after flag_at is ever released")
@PROPERTY
@given(n=st.integers(0, 30), t0=st.integers(0, 50), tpot=st.integers(0, 9), k=st.integers(1, 8),
       check_time=st.integers(0, 40), data=st.data())
def test_matches_oracle(impl, n, t0, tpot, k, check_time, data):
    flag_at = data.draw(st.one_of(st.none(), st.integers(0, n - 1))) if n else None
    got = hb(impl, n, t0, tpot, k, check_time, flag_at)
    check(got, o_hold_back(n, t0, tpot, k, check_time, flag_at), f"hold_back({n}, {t0}, {tpot}, {k}, {check_time}, {flag_at})")
    if flag_at is not None:
        assert len(got[0]) <= flag_at, f"hold_back(..., flag_at={flag_at}) released {len(got[0])} tokens: the unsafe token leaked."


@graded(2, 2, "each int argument rejects True, 2.0, None, '2' and values below its minimum, naming it")
def test_invalid_ints(impl):
    names = ("num_tokens", "first_token_time", "tpot", "k", "check_time")
    minimums = (0, 0, 0, 1, 0)
    for i, (name, low) in enumerate(zip(names, minimums)):
        for bad in (True, 2.0, None, "2", low - 1):
            args = [5, 0, 1, 2, 1, None]
            args[i] = bad
            check_raises(lambda: impl.hold_back(*args), name, f"hold_back{tuple(args)}")


@graded(2, 2, "two invalid arguments at once: the earlier in the signature is named (every pair)")
def test_invalid_pairs_in_signature_order(impl):
    names = ("num_tokens", "first_token_time", "tpot", "k", "check_time", "flag_at")
    bad = (-1, -1, -1, 0, -1, -1)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            args = [5, 0, 1, 2, 1, None]
            args[i], args[j] = bad[i], bad[j]
            check_raises(lambda: impl.hold_back(*args), names[i], f"hold_back{tuple(args)}")


@graded(2, 2, "flag_at must be None or an int in 0..num_tokens-1, naming flag_at; checked last")
def test_invalid_flag(impl):
    for bad in (5, -1, True, 1.0, "1"):
        check_raises(lambda: impl.hold_back(5, 0, 1, 2, 1, bad), "flag_at", f"hold_back(5, 0, 1, 2, 1, {bad!r})")
    check_raises(lambda: impl.hold_back(0, 0, 1, 2, 1, 0), "flag_at", "hold_back(0, 0, 1, 2, 1, 0)")
    check_raises(lambda: impl.hold_back(5, 0, 1, 0, 1, 9), "k", "hold_back(5, 0, 1, 0, 1, 9) (k before flag_at)")


@graded(2, 1, "a flag in the short last chunk releases every full chunk before it")
def test_flag_in_last_chunk(impl):
    check(hb(impl, 5, 0, 2, 2, 1, 4), ([3, 3, 7, 7], 9, 3), "hold_back(5, 0, 2, 2, 1, 4)")


@graded(2, 1, "added latency is measured per token from its own generation time (the chunk's first token waits longest)")
def test_added_latency_per_token(impl):
    check(hb(impl, 2, 1000, 50, 2, 0, None), ([1050, 1050], None, 50), "hold_back(2, 1000, 50, 2, 0, None)")


@graded(2, 1, "tpot 0 and k = 1: every token is checked at once; a flag at token 2 releases tokens 0 and 1")
def test_simultaneous_tokens(impl):
    check(hb(impl, 4, 5, 0, 1, 3, 2), ([8, 8], 8, 3), "hold_back(4, 5, 0, 1, 3, 2)")
