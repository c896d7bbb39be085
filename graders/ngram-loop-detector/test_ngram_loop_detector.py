"""Hidden suite for ngram-loop-detector, level 1: firing rule, window edges, chunks, validation.

Every firing position is compared with a brute-force oracle written here: the whole stream kept,
the window recounted at every position.
"""

import pytest
from hypothesis import example, given, strategies as st

from kata.checks import check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(60)


# --- helpers ----------------------------------------------------------------------


def oracle(chunks, n, window, threshold):
    """[(fired positions of each chunk)], recounting the window from scratch at every position."""
    stream, out = [], []
    for chunk in chunks:
        fired = []
        for token in chunk:
            stream.append(token)
            p = len(stream) - 1
            if p < n - 1:
                continue
            gram = stream[p - n + 1:p + 1]
            lo = max(0, p - window + 1)
            c = sum(1 for q in range(max(n - 1, lo + n - 1), p + 1) if stream[q - n + 1:q + 1] == gram)
            if c >= threshold:
                fired.append(p)
        out.append(fired)
    return out


def oracle_count(stream, n, window, ngram):
    p = len(stream) - 1
    lo = max(0, p - window + 1)
    return sum(1 for q in range(max(n - 1, lo + n - 1), p + 1) if stream[q - n + 1:q + 1] == ngram)


def _feed_all(impl, chunks, n, window, threshold, expected=None):
    d = impl.LoopDetector(n, window, threshold)
    got = [d.feed(list(c)) for c in chunks]
    want = oracle(chunks, n, window, threshold)
    if expected is not None:
        assert same(want, expected), "grader self-check: the oracle disagrees with the stated answer"
    assert same(got, want), (
        f"Called LoopDetector({n}, {window}, {threshold}), then feed on each of {chunks!r}. "
        f"Returned {got!r}, expected {want!r}.")
    return d


# --- the worked example and the firing rule -----------------------------------------------


@graded(1, 3, "the prompt's worked example: four chunks, tokens_seen and three counts")
def test_prompt_example(impl):
    d = _feed_all(impl, [[7, 3, 7], [3, 1, 1], [7, 3], [1, 1, 1]], 2, 5, 2, [[], [3], [], [10]])
    got = (d.tokens_seen, d.count([1, 1]), d.count([7, 3]), d.count([3, 7]))
    assert same(got, (11, 2, 1, 0)), f"After the prompt's example: (tokens_seen, counts) = {got!r}, expected (11, 2, 1, 0)."


@graded(1, 2, "the n-gram counts itself: with threshold 2 it fires at the second occurrence, not the third")
def test_counts_itself(impl):
    _feed_all(impl, [[1, 2, 9, 1, 2]], 2, 10, 2, [[4]])


@graded(1, 2, "exactly threshold occurrences fire (>=); one fewer does not")
def test_threshold_equality(impl):
    _feed_all(impl, [[5, 6, 5, 6, 5, 6]], 2, 10, 3, [[5]])
    _feed_all(impl, [[5, 6, 5, 6]], 2, 10, 3, [[]])


@graded(1, 2, "overlapping occurrences count: 4 4 4 4 holds (4, 4) three times")
def test_overlapping(impl):
    _feed_all(impl, [[4, 4, 4, 4]], 2, 10, 3, [[3]])


@graded(1, 2, "it fires again at every later position whose n-gram still repeats enough")
def test_fires_repeatedly(impl):
    _feed_all(impl, [[8] * 6], 1, 3, 2, [[1, 2, 3, 4, 5]])


@graded(1, 2, "nothing fires before position n - 1, and n = 1 counts single tokens")
def test_before_first_ngram(impl):
    _feed_all(impl, [[3], [3], [3]], 3, 3, 2, [[], [], []])
    _feed_all(impl, [[0, 0]], 1, 2, 2, [[1]])


@graded(1, 2, "window == n holds a single n-gram: it never fires")
def test_window_equal_n(impl):
    _feed_all(impl, [[2, 2, 2, 2, 2, 2]], 3, 3, 2, [[]])


@graded(1, 3, "an occurrence whose first token is the window's first token counts")
def test_window_edge_inside(impl):
    # n=2, window=4: at p=3 the window is 0..3 and (1, 2) ending at 1 starts at 0: inside
    _feed_all(impl, [[1, 2, 1, 2]], 2, 4, 2, [[3]])


@graded(1, 3, "an occurrence whose first token just left the window no longer counts, though its last token is inside")
def test_window_edge_outside(impl):
    # n=2, window=3: at p=3 the window is 1..3; (1, 2) ending at 1 starts at 0: outside
    _feed_all(impl, [[1, 2, 1, 2]], 2, 3, 2, [[]])


@graded(1, 2, "a window as large as the stream so far counts from position 0")
def test_window_larger_than_stream(impl):
    _feed_all(impl, [[9, 1, 9]], 1, 100, 2, [[2]])


@graded(1, 2, "positions run across chunks, and an n-gram may straddle two chunks")
def test_positions_across_chunks(impl):
    _feed_all(impl, [[5], [6, 5], [], [6]], 2, 8, 2, [[], [], [], [3]])


@graded(1, 1, "token id 0 is a valid token")
def test_token_zero(impl):
    _feed_all(impl, [[0, 0, 1, 0, 0]], 2, 5, 2, [[4]])


@graded(1, 2, "token ids past 2**53 stay distinct: 2**53 and 2**53 + 1 are different tokens")
def test_huge_token_ids(impl):
    big = 2**53
    _feed_all(impl, [[big, big + 1, big, big + 1]], 1, 4, 2, [[2, 3]])
    _feed_all(impl, [[big, big + 1]], 1, 4, 2, [[]])


@graded(1, 1, "an empty chunk returns [] and adds nothing")
def test_empty_chunk(impl):
    d = _feed_all(impl, [[], [1, 1], []], 1, 3, 2, [[], [1], []])
    assert same(d.tokens_seen, 2), f"tokens_seen after feeding [], [1, 1], []: {d.tokens_seen!r}, expected 2."


@graded(1, 1, "feed returns a new list each call: changing one does not change the detector")
def test_returns_new_list(impl):
    d = impl.LoopDetector(1, 4, 2)
    first = d.feed([3, 3])
    first.append(99)
    second = d.feed([3])
    assert same(second, [2]), f"After feed([3, 3]) (result changed by the caller), feed([3]) returned {second!r}, expected [2]."


@graded(1, 1, "n = 64 n-grams with a long window")
def test_long_ngrams(impl):
    block = list(range(64))
    _feed_all(impl, [block, block[:10], block[10:], [1]], 64, 200, 2)


# --- count and tokens_seen ------------------------------------------------------------------


@graded(1, 1, "count before n tokens is 0; tokens_seen of a new detector is 0")
def test_count_before_first_ngram(impl):
    d = impl.LoopDetector(3, 5, 2)
    d.feed([1, 2])
    got = (d.count([1, 2, 3]), impl.LoopDetector(3, 5, 2).tokens_seen, d.tokens_seen)
    assert same(got, (0, 0, 2)), f"(count before 3 tokens, tokens_seen of a new detector, after 2) = {got!r}, expected (0, 0, 2)."


@graded(1, 1, "tokens_seen is read-only: assigning to it raises AttributeError and the count stays")
def test_tokens_seen_read_only(impl):
    d = impl.LoopDetector(2, 5, 2)
    d.feed([4, 5, 6])
    try:
        d.tokens_seen = 0
    except AttributeError:
        pass
    else:
        pytest.fail("Assigned d.tokens_seen = 0 after feeding 3 tokens: no AttributeError, expected one "
                    "(tokens_seen is a read-only property).", pytrace=False)
    assert same(d.tokens_seen, 3), f"tokens_seen after the rejected assignment: {d.tokens_seen!r}, expected 3."
    got = d.feed([4, 5])
    assert same(got, [4]), f"After feed([4, 5, 6]), feed([4, 5]) returned {got!r}, expected [4]."


@graded(1, 2, "count sees only n-grams wholly inside the current window")
def test_count_window(impl):
    stream = [1, 2, 1, 2, 3, 1, 2]
    d = impl.LoopDetector(2, 4, 9)
    d.feed(stream)
    got = [d.count(g) for g in ([1, 2], [2, 3], [2, 1], [3, 1], [7, 7])]
    want = [oracle_count(stream, 2, 4, g) for g in ([1, 2], [2, 3], [2, 1], [3, 1], [7, 7])]
    assert same(want, [1, 1, 0, 1, 0]), "grader self-check"
    assert same(got, want), f"After feed({stream}) on LoopDetector(2, 4, 9), counts {got!r}, expected {want!r}."


@graded(1, 1, "count changes nothing: later firing is the same")
def test_count_is_read_only(impl):
    d = impl.LoopDetector(2, 6, 2)
    d.feed([4, 5])
    for _ in range(3):
        d.count([4, 5])
    got = d.feed([4, 5])
    assert same(got, [3]), f"After feed([4, 5]) and three count([4, 5]) calls, feed([4, 5]) returned {got!r}, expected [3]."


@graded(1, 2, "count validates ngram: a list of exactly n ints >= 0")
@pytest.mark.parametrize("bad", [(1, 2), [1], [1, 2, 3], [1, -1], [1, True], [1, 2.0], [1, None], [1, "2"], None],
                         ids=["tuple", "short", "long", "negative", "bool", "float", "None-item", "str", "None"])
def test_count_invalid(impl, bad):
    d = impl.LoopDetector(2, 4, 2)
    d.feed([1, 2])
    check_raises(lambda: d.count(bad), "ngram", f"count({bad!r}) on LoopDetector(2, 4, 2)")


# --- feed validation --------------------------------------------------------------------------


@graded(1, 2, "tokens that is not a list (tuple, None, str, generator) names tokens")
@pytest.mark.parametrize("kind", ["tuple", "None", "str", "generator"])
def test_feed_not_a_list(impl, kind):
    d = impl.LoopDetector(1, 3, 2)
    value = {"tuple": (1, 2), "None": None, "str": "12", "generator": (x for x in [1, 2])}[kind]
    check_raises(lambda: d.feed(value), "tokens", f"feed(a {kind})")


@graded(1, 2, "a token that is negative, a bool, a float, None or a str names tokens")
@pytest.mark.parametrize("bad", [-1, True, 1.0, None, "1"], ids=["negative", "bool", "float", "None", "str"])
def test_feed_bad_token(impl, bad):
    d = impl.LoopDetector(1, 3, 2)
    check_raises(lambda: d.feed([1, bad]), "tokens", f"feed([1, {bad!r}])")


@graded(1, 3, "a chunk with a bad last token adds nothing: tokens_seen, positions and counts are as before")
def test_bad_chunk_changes_nothing(impl):
    d = impl.LoopDetector(2, 5, 2)
    d.feed([6, 7])
    check_raises(lambda: d.feed([6, 7, 6, 7, -5]), "tokens", "feed([6, 7, 6, 7, -5]) after feed([6, 7])")
    got = (d.tokens_seen, d.count([6, 7]), d.count([7, 6]), d.feed([6, 7]))
    assert same(got, (2, 1, 0, [3])), (
        f"After a rejected chunk: (tokens_seen, count([6, 7]), count([7, 6]), feed([6, 7])) = {got!r}, "
        "expected (2, 1, 0, [3]).")


@graded(1, 1, "a bad token late in a long chunk is still caught before anything is added")
def test_bad_token_late_in_long_chunk(impl):
    d = impl.LoopDetector(1, 3, 2)
    check_raises(lambda: d.feed(list(range(5000)) + [None]), "tokens", "feed(5,000 good tokens then None)")
    assert same(d.tokens_seen, 0), f"tokens_seen after the rejected chunk: {d.tokens_seen!r}, expected 0."


# --- constructor validation ---------------------------------------------------------------------


BAD = [True, 2.0, None, "2"]
BAD_IDS = ["bool", "float", "None", "str"]


@graded(1, 2, "n that is 0, negative, a bool, a float, None or a str names n")
@pytest.mark.parametrize("bad", [0, -2] + BAD, ids=["zero", "negative"] + BAD_IDS)
def test_n_invalid(impl, bad):
    check_raises(lambda: impl.LoopDetector(bad, 5, 2), "n", f"LoopDetector({bad!r}, 5, 2)")


@graded(1, 2, "window smaller than n, a bool, a float, None or a str names window; window == n is valid")
@pytest.mark.parametrize("bad", [2, 0] + BAD, ids=["below-n", "zero"] + BAD_IDS)
def test_window_invalid(impl, bad):
    check_raises(lambda: impl.LoopDetector(3, bad, 2), "window", f"LoopDetector(3, {bad!r}, 2)")
    assert same(impl.LoopDetector(3, 3, 2).tokens_seen, 0)


@graded(1, 2, "threshold below 2, a bool, a float, None or a str names threshold")
@pytest.mark.parametrize("bad", [1, 0] + BAD, ids=["one", "zero"] + BAD_IDS)
def test_threshold_invalid(impl, bad):
    check_raises(lambda: impl.LoopDetector(2, 5, bad), "threshold", f"LoopDetector(2, 5, {bad!r})")


@graded(1, 2, "two invalid arguments: n before window before threshold")
@pytest.mark.parametrize("args, name", [((0, 0, 2), "n"), ((True, 1, 2), "n"), ((0, 5, 1), "n"),
                                        ((3, 2, 1), "window"), ((2, None, None), "window")],
                         ids=["n-window", "bool-n-window", "n-threshold", "window-threshold", "window-None"])
def test_constructor_order(impl, args, name):
    check_raises(lambda: impl.LoopDetector(*args), name, f"LoopDetector{args!r}")


# --- properties ----------------------------------------------------------------------------------


@st.composite
def _streams(draw):
    n = draw(st.integers(1, 4))
    window = draw(st.integers(n, 12))
    threshold = draw(st.integers(2, 4))
    chunks = draw(st.lists(st.lists(st.integers(0, 2), max_size=8), max_size=6))
    return chunks, n, window, threshold


@graded(1, 6, "random streams in random chunks agree with an oracle that recounts the window every time")
@PROPERTY
@given(_streams())
@example(([[1, 2, 1, 2, 1]], 2, 4, 2))
@example(([[0, 0, 0], [0]], 3, 5, 2))
def test_matches_oracle(impl, case):
    chunks, n, window, threshold = case
    d = _feed_all(impl, chunks, n, window, threshold)
    stream = [t for c in chunks for t in c]
    if len(stream) >= n:
        gram = stream[-n:]
        got = d.count(gram)
        want = oracle_count(stream, n, window, gram)
        assert same(got, want), f"After feeding {chunks!r}: count({gram!r}) = {got!r}, expected {want!r}."


@graded(1, 3, "cutting the stream into different chunks never changes the firing positions")
@PROPERTY
@given(st.lists(st.integers(0, 1), max_size=30), st.lists(st.integers(1, 5), min_size=1, max_size=10))
def test_chunking_invariant(impl, stream, cuts):
    whole = impl.LoopDetector(2, 6, 2).feed(list(stream))
    d = impl.LoopDetector(2, 6, 2)
    pieces, i = [], 0
    for k in cuts * 10:
        if i >= len(stream):
            break
        pieces.append(d.feed(stream[i:i + k]))
        i += k
    joined = [p for piece in pieces for p in piece]
    assert same(joined, whole), (
        f"Fed {stream!r} whole: fired {whole!r}; in chunks of sizes {cuts!r} (repeated): fired {joined!r}.")
