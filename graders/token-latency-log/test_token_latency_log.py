"""Hidden suite for token-latency-log, level 1: strict parsing, classification, exact percentiles.

Results are compared as plain tuples (`_flat`) in which every count and TTFT must be an `int` and
every TPOT a `Fraction`, so a float that happens to be equal is a mistake and a dataclass's own
`==` never decides.
"""

import random
import re
from fractions import Fraction

import pytest
from hypothesis import example, given, strategies as st

from kata.checks import check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(40)
F = Fraction


# --- helpers ----------------------------------------------------------------------


def _typed(x, kind):
    return x if x is None or type(x) is kind else f"<{type(x).__name__} {x!r}>"


def _flat(r):
    counts = tuple(_typed(v, int) for v in (r.measured, r.incomplete, r.missing_first_token, r.skewed,
                                             r.malformed))
    return counts + (_typed(r.ttft_p50, int), _typed(r.ttft_p99, int),
                     _typed(r.tpot_p50, Fraction), _typed(r.tpot_p99, Fraction))


_LINE = re.compile(r"([0-9]+) ([^\s]+) (?:(start|end)|(token) ([0-9]+))")


def oracle(lines):
    """A regex per line, every timestamp of every (request, event, index) kept, minima taken at
    the end, percentiles by counting. Returns _flat's shape."""
    seen = {}  # request -> {(event, index): [ts, ...]}
    malformed = 0
    for line in lines:
        m = _LINE.fullmatch(line)
        if m is None:
            malformed += 1
            continue
        ts, rid = int(m.group(1)), m.group(2)
        key = (m.group(3), None) if m.group(3) else ("token", int(m.group(5)))
        seen.setdefault(rid, {}).setdefault(key, []).append(ts)
    counts = {"incomplete": 0, "missing": 0, "skewed": 0}
    ttfts, tpots = [], []
    for events in seen.values():
        first = {k: min(v) for k, v in events.items()}
        tokens = [k[1] for k in first if k[0] == "token"]
        if ("start", None) not in first or ("end", None) not in first:
            counts["incomplete"] += 1
        elif ("token", 0) not in first:
            counts["missing"] += 1
        else:
            top = max(tokens)
            t0, tk, start = first[("token", 0)], first[("token", top)], first[("start", None)]
            if t0 < start or tk < t0:
                counts["skewed"] += 1
            else:
                ttfts.append(t0 - start)
                if top >= 1:
                    tpots.append(Fraction(tk - t0) / top)

    def pct(values, p):
        if not values:
            return None
        values = sorted(values)
        rank = next(r for r in range(1, len(values) + 1) if r * 100 >= p * len(values))
        return values[rank - 1]

    return (len(ttfts), counts["incomplete"], counts["missing"], counts["skewed"], malformed,
            pct(ttfts, 50), pct(ttfts, 99), pct(tpots, 50), pct(tpots, 99))


def _check(impl, lines, expected=None, what=None):
    got = _flat(impl.latency_report(list(lines)))
    want = oracle(lines)
    if expected is not None:
        assert same(want, expected), "grader self-check: the oracle disagrees with the stated answer"
    call = what or f"latency_report({lines!r})"
    assert same(got, want), (
        f"Called {call}. Returned (measured, incomplete, missing_first_token, skewed, malformed, ttft_p50, "
        f"ttft_p99, tpot_p50, tpot_p99) = {got!r}, expected {want!r}.")
    return got


def _req(rid, start, tokens, end, first=None):
    """Lines of one request: start and end timestamps (None: no line), tokens {index: ts}."""
    lines = [] if start is None else [f"{start} {rid} start"]
    lines += [f"{ts} {rid} token {i}" for i, ts in tokens.items()]
    return lines + ([] if end is None else [f"{end} {rid} end"])


EXAMPLE = [
    "100 r1 start", "130 r2 start", "160 r1 token 0", "175 r1 token 1", "150 r2 token 0",
    "190 r1 token 2", "205 r1 token 3", "210 r1 end", "199 r2 token 2", "240 r2 end",
    "170 r2 token 1", "300 r3 start", "340 r3 token 1", "360 r3 end", "150 r2 token 0",
    "400 r4 start", "390 r4 token 0", "420 r4 end", "500 r5 start", "520 r5 token 0",
    "9 r1 token  4", "510 r6 start", "515 r6 token 0", "abc r6 end", "x",
    "600 r7 start", "601 r7 token 0", "601 r7 end"]
GOOD = ["10 a start", "15 a token 0", "25 a token 2", "30 a end"]  # TTFT 5, TPOT 5


# --- the worked example -----------------------------------------------------------------


@graded(1, 3, "the prompt's worked example, every field")
def test_prompt_example(impl):
    _check(impl, EXAMPLE, (3, 2, 1, 1, 3, 20, 60, F(15), F(49, 2)), "latency_report(the prompt's example)")


@graded(1, 1, "no lines: every count 0, every percentile None")
def test_empty(impl):
    _check(impl, [], (0, 0, 0, 0, 0, None, None, None, None))


# --- parsing --------------------------------------------------------------------------------


MALFORMED = {
    "double space": "12 z token  1",
    "leading space": " 12 z start",
    "trailing space": "12 z end ",
    "tab": "12\tz start",
    "newline": "12 z start\n",
    "empty": "",
    "spaces only": "   ",
    "plus sign": "+12 z start",
    "minus sign": "-12 z start",
    "underscore": "1_2 z start",
    "float ts": "12.0 z start",
    "arabic-indic digit": "\u0663 z start",
    "superscript digit": "1\u00b2 z start",
    "fullwidth digit": "\uff11 z start",
    "uppercase event": "12 z START",
    "unknown event": "12 z stop",
    "token without index": "12 z token",
    "start with index": "12 z start 0",
    "end with index": "12 z end 3",
    "negative index": "12 z token -1",
    "float index": "12 z token 1.0",
    "unicode index": "12 z token \u0661",
    "five fields": "12 z token 1 2",
    "two fields": "12 start",
    "no-break space": "12\u00a0z start",
}


@graded(1, 6, "each kind of malformed line is counted in malformed and creates no request")
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_malformed_line(impl, kind):
    line = MALFORMED[kind]
    _check(impl, GOOD + [line], (1, 0, 0, 0, 1, 5, 5, F(5), F(5)), f"latency_report(a good request + [{line!r}])")


@graded(1, 2, "a request seen only in malformed lines does not exist (not counted incomplete)")
def test_malformed_creates_no_request(impl):
    _check(impl, GOOD + ["x1 r9 start", "5 r9 token 0.5"], (1, 0, 0, 0, 2, 5, 5, F(5), F(5)))


@graded(1, 1, "leading zeros in timestamps and indices are allowed ('007' is 7)")
def test_leading_zeros(impl):
    _check(impl, ["007 a start", "0010 a token 00", "0016 a token 002", "20 a end"],
           (1, 0, 0, 0, 0, 3, 3, F(3), F(3)))


@graded(1, 1, "a request id may be any non-whitespace field, even 'start' or 'token'")
def test_ids_that_look_like_events(impl):
    lines = _req("start", 0, {0: 4}, 9) + _req("token", 1, {0: 3, 1: 5}, 9)
    _check(impl, lines, (2, 0, 0, 0, 0, 2, 4, F(2), F(2)))


@graded(1, 1, "request ids are compared exactly: 'A' and 'a' are two requests")
def test_ids_case_sensitive(impl):
    _check(impl, ["0 a start", "3 A token 0", "9 a end"], (0, 1, 1, 0, 0, None, None, None, None))


@graded(1, 2, "whitespace inside the request id field, not only between fields, makes the line malformed")
@pytest.mark.parametrize("kind", ["tab", "no-break space", "em space", "newline", "vertical tab"])
def test_whitespace_inside_id(impl, kind):
    char = {"tab": "\t", "no-break space": "\u00a0", "em space": "\u2003", "newline": "\n",
            "vertical tab": "\x0b"}[kind]
    assert same(char.isspace(), True), "grader self-check"
    lines = GOOD + [f"0 r{char}x start", f"2 r{char}x token 0", f"3 r{char}x token 1", f"5 r{char}x end"]
    _check(impl, lines, (1, 0, 0, 0, 4, 5, 5, F(5), F(5)),
           f"latency_report(a good request + 4 lines of request id {'r' + char + 'x'!r})")


# --- classification ----------------------------------------------------------------------


@graded(1, 1, "no start line: incomplete")
def test_incomplete_no_start(impl):
    _check(impl, _req("a", None, {0: 5, 1: 6}, 9), (0, 1, 0, 0, 0, None, None, None, None))


@graded(1, 1, "no end line: incomplete, even with every token")
def test_incomplete_no_end(impl):
    _check(impl, _req("a", 0, {0: 5, 1: 6}, None), (0, 1, 0, 0, 0, None, None, None, None))


@graded(1, 1, "only token lines: incomplete")
def test_incomplete_only_tokens(impl):
    _check(impl, _req("a", None, {0: 5}, None), (0, 1, 0, 0, 0, None, None, None, None))


@graded(1, 2, "incomplete is checked before missing first token")
def test_incomplete_before_missing(impl):
    _check(impl, _req("a", 0, {1: 5}, None), (0, 1, 0, 0, 0, None, None, None, None))


@graded(1, 2, "incomplete is checked before skewed: a request that is both is counted incomplete only")
def test_incomplete_before_skewed(impl):
    lines = (_req("a", 10, {0: 9, 1: 12}, None) + _req("b", None, {0: 9, 2: 5}, 20)
             + _req("c", 10, {0: 12, 3: 11}, None))
    _check(impl, lines, (0, 3, 0, 0, 0, None, None, None, None))


@graded(1, 2, "start and end but no token 0 (later tokens present): missing first token")
def test_missing_first_token(impl):
    _check(impl, _req("a", 0, {1: 5, 2: 7}, 9) + _req("b", 0, {}, 9), (0, 0, 2, 0, 0, None, None, None, None))


@graded(1, 2, "token 0 earlier than start: skewed; equal: a TTFT of 0")
def test_skew_at_start(impl):
    _check(impl, _req("a", 10, {0: 9}, 20) + _req("b", 10, {0: 10}, 20), (1, 0, 0, 1, 0, 0, 0, None, None))


@graded(1, 2, "the highest-index token earlier than token 0: skewed; equal: a TPOT of 0")
def test_skew_at_last_token(impl):
    _check(impl, _req("a", 0, {0: 5, 3: 4}, 20) + _req("b", 0, {0: 5, 3: 5}, 20),
           (1, 0, 0, 1, 0, 5, 5, F(0), F(0)))


@graded(1, 1, "every skewed request is counted: three skewed, one measured")
def test_several_skewed(impl):
    lines = _req("s1", 10, {0: 9}, 20) + _req("s2", 10, {0: 12, 1: 11}, 20) + _req("s3", 5, {0: 1}, 9) + GOOD
    _check(impl, lines, (1, 0, 0, 3, 0, 5, 5, F(5), F(5)))


@graded(1, 1, "only the highest-index token is compared with token 0: a middle token out of order is not skew")
def test_middle_token_out_of_order_not_skew(impl):
    _check(impl, _req("a", 0, {0: 5, 1: 2, 2: 9}, 20), (1, 0, 0, 0, 0, 5, 5, F(2), F(2)))


@graded(1, 1, "the end timestamp is used only for presence: an end before the tokens is fine")
def test_end_time_ignored(impl):
    _check(impl, _req("a", 10, {0: 15, 1: 19}, 0), (1, 0, 0, 0, 0, 5, 5, F(4), F(4)))


@graded(1, 1, "a token line before its start line in the log is fine: order of lines never matters")
def test_line_order_irrelevant(impl):
    lines = _req("a", 10, {0: 15, 2: 25}, 30)
    _check(impl, list(reversed(lines)), (1, 0, 0, 0, 0, 5, 5, F(5), F(5)))


# --- duplicates ----------------------------------------------------------------------------


@graded(1, 2, "a duplicated start counts at its earliest timestamp, even when logged later")
def test_duplicate_start_earliest(impl):
    _check(impl, ["12 a start", "20 a token 0", "30 a end", "10 a start"], (1, 0, 0, 0, 0, 10, 10, None, None))


@graded(1, 2, "a duplicated token 0 counts at its earliest timestamp, for TTFT and TPOT")
def test_duplicate_first_token_earliest(impl):
    _check(impl, ["0 a start", "18 a token 0", "14 a token 0", "24 a token 1", "30 a end"],
           (1, 0, 0, 0, 0, 14, 14, F(10), F(10)))


@graded(1, 2, "a duplicated highest-index token counts at its earliest timestamp")
def test_duplicate_last_token_earliest(impl):
    _check(impl, ["0 a start", "10 a token 0", "40 a token 3", "31 a token 3", "28 a token 3", "50 a end"],
           (1, 0, 0, 0, 0, 10, 10, F(6), F(6)))


@graded(1, 2, "a duplicated highest-index token logged first at its earliest time keeps that time, not a later one")
def test_duplicate_last_token_earliest_first(impl):
    _check(impl, ["0 a start", "10 a token 0", "16 a token 2", "30 a token 2", "22 a token 2", "50 a end"],
           (1, 0, 0, 0, 0, 10, 10, F(3), F(3)))


@graded(1, 1, "a duplicated end line changes nothing")
def test_duplicate_end(impl):
    _check(impl, GOOD + ["31 a end", "1 a end"], (1, 0, 0, 0, 0, 5, 5, F(5), F(5)))


# --- TPOT ------------------------------------------------------------------------------------


@graded(1, 2, "TPOT divides by the highest index, whatever indices are missing in between")
def test_tpot_with_gaps(impl):
    _check(impl, _req("a", 0, {0: 10, 7: 31}, 40), (1, 0, 0, 0, 0, 10, 10, F(3), F(3)))


@graded(1, 2, "TPOT is an exact Fraction (49/2, not 24.5), and a Fraction even when whole")
def test_tpot_fraction_types(impl):
    _check(impl, _req("a", 0, {0: 1, 2: 50}, 60) + _req("b", 0, {0: 1, 3: 10}, 60),
           (2, 0, 0, 0, 0, 1, 1, F(3), F(49, 2)))


@graded(1, 1, "TPOT keeps thirds exactly (1/3 is not 0.333...)")
def test_tpot_thirds(impl):
    _check(impl, _req("a", 0, {0: 5, 3: 6}, 9), (1, 0, 0, 0, 0, 5, 5, F(1, 3), F(1, 3)))


@graded(1, 2, "requests with only token 0 have a TTFT but no TPOT: TPOT percentiles None")
def test_only_first_token_no_tpot(impl):
    _check(impl, _req("a", 0, {0: 5}, 9) + _req("b", 2, {0: 4}, 9), (2, 0, 0, 0, 0, 2, 5, None, None))


# --- percentiles -------------------------------------------------------------------------------


def _many(ttfts):
    lines = []
    for k, t in enumerate(ttfts):
        lines += _req(f"q{k}", 1000, {0: 1000 + t}, 5000)
    return lines


@graded(1, 2, "P50 of an even count is the lower middle value (rank n/2)")
def test_p50_even(impl):
    _check(impl, _many([40, 10, 30, 20]), (4, 0, 0, 0, 0, 20, 40, None, None))


@graded(1, 2, "P99 of 100 values is the 99th smallest, not the largest")
def test_p99_of_100(impl):
    values = list(range(100))
    random.Random(5).shuffle(values)
    _check(impl, _many(values), (100, 0, 0, 0, 0, 49, 98, None, None), "latency_report(100 requests, TTFT 0..99)")


@graded(1, 1, "P99 of 101 values is rank 100; P50 of 101 is rank 51")
def test_p99_of_101(impl):
    _check(impl, _many(list(range(101))), (101, 0, 0, 0, 0, 50, 99, None, None),
           "latency_report(101 requests, TTFT 0..100)")


@graded(1, 2, "TPOT P99 of 100 values is the 99th smallest, and P50 the 50th")
def test_tpot_p99_of_100(impl):
    lines = []
    for k in range(100):  # TPOT k / 2 for k = 0..99, TTFT 1
        lines += _req(f"t{k}", 0, {0: 1, 2: 1 + k}, 500)
    _check(impl, lines, (100, 0, 0, 0, 0, 1, 1, F(49, 2), F(98, 2)), "latency_report(100 requests, TPOT k/2)")


@graded(1, 1, "one measured request: both percentiles are its value")
def test_single_value(impl):
    _check(impl, GOOD, (1, 0, 0, 0, 0, 5, 5, F(5), F(5)))


@graded(1, 2, "timestamps past 2**53 stay exact")
def test_huge_timestamps(impl):
    big = 2**59  # 18 digits, like big + 9
    _check(impl, _req("a", big, {0: big + 1, 3: big + 2}, big + 9), (1, 0, 0, 0, 0, 1, 1, F(1, 3), F(1, 3)))


@graded(1, 2, "a TPOT whose time span is past 2**53 is an exact Fraction, not a float turned into one")
def test_huge_tpot_span_exact(impl):
    span = 2**59 + 1  # a float rounds it to 2**59; 18 digits at most in every line
    lines = _req("a", 0, {0: 1, 1: 1 + span}, span + 9) + _req("b", 0, {0: 2, 3: 2 + span}, span + 9)
    _check(impl, lines, (2, 0, 0, 0, 0, 1, 2, F(span, 3), F(span)))


@graded(1, 1, "18-digit fields, the longest a line holds: the largest timestamp, and leading zeros up to 18 digits")
def test_eighteen_digit_fields(impl):
    top = 10**18 - 1  # 18 nines
    lines = [f"{top - 10} a start", f"{top - 7} a token 0", f"{top - 1} a token 000000000000000003",
             f"{top} a end", "000000000000000004 b start", "000000000000000009 b token 0",
             "000000000000000012 b end"]
    assert same(max(len(field) for line in lines for field in line.split(" ")), 18), "grader self-check"
    _check(impl, lines, (2, 0, 0, 0, 0, 3, 5, F(2), F(2)))


@graded(1, 1, "the result is a LatencyReport and lines is not modified")
def test_type_and_input_unchanged(impl):
    lines = list(EXAMPLE)
    got = impl.latency_report(lines)
    assert same((type(got) is impl.LatencyReport, lines), (True, EXAMPLE)), (
        f"Called latency_report(the prompt's example). Returned {got!r} (or changed lines).")


# --- property ----------------------------------------------------------------------------------


@st.composite
def _logs(draw):
    lines = []
    for k in range(draw(st.integers(0, 5))):
        rid = f"r{k}"
        if draw(st.booleans()):
            lines.append(f"{draw(st.integers(0, 30))} {rid} start")
        for _ in range(draw(st.integers(0, 4))):
            lines.append(f"{draw(st.integers(0, 40))} {rid} token {draw(st.integers(0, 4))}")
        if draw(st.integers(0, 4)):
            lines.append(f"{draw(st.integers(0, 50))} {rid} end")
        if draw(st.integers(0, 3)) == 0:  # a duplicate of one of its lines at another time
            if lines:
                ts, rest = draw(st.sampled_from(lines)).split(" ", 1)
                lines.append(f"{draw(st.integers(0, 40))} {rest}")
    lines += draw(st.lists(st.sampled_from(sorted(MALFORMED.values())), max_size=2))
    return draw(st.permutations(lines))


@graded(1, 6, "random shuffled logs with duplicates and malformed lines agree with a regex oracle")
@PROPERTY
@given(_logs())
@example(["0 a start", "5 a token 0", "3 a token 2", "9 a end", "4 a token 2"])
@example(["0 a start", "5 a token 0", "9 a end", "2 a start", "1 a token 0"])
def test_matches_oracle(impl, lines):
    _check(impl, lines)


# --- invalid input --------------------------------------------------------------------------------


@graded(1, 2, "lines that is not a list (a str, a tuple, None, a generator) raises ValueError naming lines")
@pytest.mark.parametrize("kind", ["str", "tuple", "None", "generator"])
def test_lines_not_a_list(impl, kind):
    value = {"str": "0 a start", "tuple": tuple(GOOD), "None": None, "generator": (x for x in GOOD)}[kind]
    check_raises(lambda: impl.latency_report(value), "lines", f"latency_report(a {kind})")


@graded(1, 2, "an item that is not a str (bytes, None, int, bool, float) raises ValueError naming lines, even late in the list")
@pytest.mark.parametrize("bad", [b"0 a start", None, 7, True, 1.5], ids=["bytes", "None", "int", "bool", "float"])
def test_item_not_str(impl, bad):
    check_raises(lambda: impl.latency_report(GOOD * 500 + [bad]), "lines",
                 f"latency_report(2,000 good lines then {bad!r})")
