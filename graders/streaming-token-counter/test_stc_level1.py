"""Hidden suite, level 1: the pre-tokenizer and the streaming token counter.

Every expected count comes from stc_oracle (whole-stream decode, one character at a time) or is
written out by hand; nothing is taken from the reference solution.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import stc_oracle as oracle

from kata.checks import graded
from kata.strict import same


def count_chunks(impl, chunks) -> int:
    counter = impl.TokenCounter()
    for chunk in chunks:
        counter.feed(chunk)
    return counter.finish()


def check_tokens(impl, text, expected):
    got = impl.pre_tokenize(text)
    assert same(got, expected), f"Called pre_tokenize({text!r}). Returned {got!r}, expected {expected!r}."


def check_count(impl, chunks, expected):
    got = count_chunks(impl, chunks)
    assert same(got, expected), f"Fed chunks {chunks!r} then called finish(). Returned {got!r}, expected {expected}."


# --- the pre-tokenizer ---------------------------------------------------------


@graded(1, 1, "empty text and empty stream: no tokens")
def test_empty_text_and_stream(impl):
    check_tokens(impl, "", [])
    check_count(impl, [], 0)
    check_count(impl, [b""], 0)


@graded(1, 1, "a maximal run of letters is one token, whatever the script or case")
def test_letter_runs(impl):
    check_tokens(impl, "Hello", ["Hello"])
    check_tokens(impl, "abcDEF", ["abcDEF"])
    check_tokens(impl, "жизнь 中文ß", ["жизнь", " ", "中文ß"])


@graded(1, 2, "combining marks are letters: they join a letter run, or start one after a digit/space/other")
def test_marks_are_letters(impl):
    check_tokens(impl, "e\u0301te\u0301", ["e\u0301te\u0301"])
    check_tokens(impl, "\u0301", ["\u0301"])
    check_tokens(impl, "1\u0301", ["1", "\u0301"])
    check_tokens(impl, " \u0301a", [" ", "\u0301a"])
    check_tokens(impl, "!\u20dd", ["!", "\u20dd"])  # U+20DD is an enclosing mark (Me)


@graded(1, 2, "digit runs are cut into groups of three from the start of the run")
def test_digit_groups_of_three(impl):
    check_tokens(impl, "12", ["12"])
    check_tokens(impl, "123", ["123"])
    check_tokens(impl, "1234", ["123", "4"])
    check_tokens(impl, "123456", ["123", "456"])
    check_tokens(impl, "1234567", ["123", "456", "7"])
    check_tokens(impl, "a12345b", ["a", "123", "45", "b"])


@graded(1, 1, "any Nd character is a digit: Arabic-Indic and fullwidth digits group with ASCII ones")
def test_non_ascii_decimal_digits(impl):
    check_tokens(impl, "٣٣٣٣", ["٣٣٣", "٣"])
    check_tokens(impl, "12３4", ["12３", "4"])


@graded(1, 1, "numbers that are not Nd (superscripts, fractions, Roman numerals) are single 'other' tokens")
def test_other_numbers_are_single_tokens(impl):
    check_tokens(impl, "²½Ⅻ", ["²", "½", "Ⅻ"])
    check_tokens(impl, "x²2", ["x", "²", "2"])


@graded(1, 1, "a maximal run of mixed whitespace (str.isspace) is one token")
def test_whitespace_runs(impl):
    check_tokens(impl, " \t\n\r\x0b\x0c\xa0\u3000\u2028\x85\x1c\x1f", [" \t\n\r\x0b\x0c\xa0\u3000\u2028\x85\x1c\x1f"])
    check_tokens(impl, "a \r\n b", ["a", " \r\n ", "b"])


@graded(1, 1, "punctuation, symbols, controls and format characters are one token each")
def test_other_characters_are_single(impl):
    check_tokens(impl, "!!,_$", ["!", "!", ",", "_", "$"])
    check_tokens(impl, "a\x00b\u200bc", ["a", "\x00", "b", "\u200b", "c"])  # U+200B is Cf, not space


@graded(1, 2, "emoji: each symbol is a token; U+FE0F is a mark (a letter run); ZWJ is an 'other'")
def test_emoji_and_variation_selector(impl):
    check_tokens(impl, "❤️", ["❤", "\ufe0f"])
    check_tokens(impl, "👍🏽", ["👍", "🏽"])
    check_tokens(impl, "a\ufe0f", ["a\ufe0f"])
    check_tokens(impl, "👨\u200d👩", ["👨", "\u200d", "👩"])


@graded(1, 1, "pre_tokenize of a non-str raises TypeError naming text")
def test_pre_tokenize_rejects_non_str(impl):
    for bad in (b"abc", None, 5, ["a"]):
        with pytest.raises(TypeError, match="text"):
            impl.pre_tokenize(bad)


# --- decoding ---------------------------------------------------------------------


@graded(1, 2, "invalid UTF-8 becomes U+FFFD exactly as bytes.decode(errors='replace'); each is a token")
def test_invalid_bytes_become_replacement_tokens(impl):
    for data, expected in [
        (b"ab\xffcd", 3),  # ab, U+FFFD, cd
        (b"\xff\xfe", 2),
        (b"\xc3(", 2),  # a lead byte followed by ASCII: one U+FFFD, then "("
        (b"\xed\xa0\x80", 3),  # an encoded surrogate: three U+FFFD
        (b"\xc0\xaf", 2),  # an overlong encoding
        (b"\xf4\x90\x80\x80", 4),  # above U+10FFFF
    ]:
        assert same(oracle.count_stream(data), expected)  # the rule is bytes.decode's
        check_count(impl, [data], expected)


@graded(1, 2, "a character cut off by the end of the stream is one U+FFFD")
def test_truncated_character_at_end_of_stream(impl):
    check_count(impl, [b"a\xe2\x82"], 2)
    check_count(impl, [b"a", b"\xe2", b"\x82"], 2)
    check_count(impl, [b"\xf0\x9f\x98"], 1)
    check_count(impl, [b"\xc3"], 1)


@graded(1, 3, "a chunk boundary inside a 4-byte character, at every cut point")
def test_cut_inside_four_byte_character(impl):
    data = "a😀b".encode()
    for i in range(1, len(data)):
        check_count(impl, [data[:i], data[i:]], 3)
    check_count(impl, [data[i:i + 1] for i in range(len(data))], 3)
    emoji = "😀".encode()
    check_count(impl, [emoji[:1], b"", emoji[1:3], b"", emoji[3:]], 1)


@graded(1, 1, "chunk boundaries inside 2- and 3-byte characters")
def test_cut_inside_two_and_three_byte_characters(impl):
    data = "é€ab".encode()  # é is 2 bytes, € is 3
    expected = 3  # "é" is a letter, "€" an other, "ab" letters: é | € | ab
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            check_count(impl, [data[:i], data[i:j], data[j:]], expected)


@graded(1, 2, "an invalid sequence split across chunks is replaced as in the whole stream")
def test_invalid_sequence_split_across_chunks(impl):
    check_count(impl, [b"\xe2", b"\x82", b"x"], 2)  # E2 82 78: one U+FFFD, then "x"
    check_count(impl, [b"\xf0\x9f", b"\x98a"], 2)
    check_count(impl, [b"\xed", b"\xa0\x80"], 3)


# --- boundaries of tokens across chunks ------------------------------------------


@graded(1, 2, "a letter or whitespace run that spans chunks is still one token")
def test_token_split_across_chunks(impl):
    check_count(impl, [b"hel", b"lo"], 1)
    check_count(impl, [b"hello ", b" world"], 3)
    check_count(impl, [b"a", b"", b"b", b"", b"c"], 1)
    check_count(impl, [b"a\r", b"\nb"], 3)


@graded(1, 3, "digit groups keep counting from the start of the run across chunks")
def test_digit_groups_across_chunks(impl):
    check_count(impl, [b"12", b"345"], 2)  # 123 | 45
    check_count(impl, [b"1", b"2", b"3", b"4"], 2)  # 123 | 4
    check_count(impl, [b"123", b"456"], 2)
    check_count(impl, [b"12", b"", b"3456789"], 3)  # 123 | 456 | 789
    check_count(impl, [b"1234", b"56", b"7"], 3)  # 123 | 456 | 7
    check_count(impl, [b"12", b"34", b"56", b"78"], 3)  # 123 | 456 | 78


@graded(1, 1, "a bytearray chunk is accepted like bytes")
def test_bytearray_chunks_accepted(impl):
    check_count(impl, [bytearray(b"ab"), bytearray(b"c d"), b""], 3)


@graded(1, 1, "feed of anything but bytes/bytearray raises TypeError naming chunk")
def test_feed_rejects_non_bytes(impl):
    counter = impl.TokenCounter()
    for bad in ("text", memoryview(b"ab"), None, 7, [1, 2]):
        with pytest.raises(TypeError, match="chunk"):
            counter.feed(bad)
    counter.feed(b"ok")
    got = counter.finish()
    assert same(got, 1), f"Fed b'ok' after rejected chunks, then called finish(). Returned {got!r}, expected 1."


@graded(1, 1, "feed after finish raises RuntimeError, checked before the chunk's type")
def test_feed_after_finish_raises(impl):
    counter = impl.TokenCounter()
    counter.feed(b"a b")
    counter.finish()
    with pytest.raises(RuntimeError):
        counter.feed(b"c")
    with pytest.raises(RuntimeError):
        counter.feed("not bytes")


@graded(1, 1, "finish called twice returns the same count")
def test_finish_twice_returns_same_count(impl):
    counter = impl.TokenCounter()
    counter.feed(b"one two\xe2\x82")  # ends inside a character: one U+FFFD at finish
    first = counter.finish()
    second = counter.finish()
    assert same((first, second), (4, 4)), f"Called finish() twice after b'one two\\xe2\\x82'. Returned {first!r} then {second!r}, expected 4 then 4."


# --- properties against the oracle ------------------------------------------------

PIECES = [
    "a", "Z", "é", "e\u0301", "\u0301", "ß", "ж", "中", "ا", "1", "9", "٣", "３", "²", "Ⅻ", "½",
    " ", "\t", "\n", "\r", "\r\n", "\xa0", "\u3000", "\x1c", "\x85", "\u2028",
    "!", ",", "_", "😀", "👍🏽", "❤\ufe0f", "\u200d", "\ufffd", "\x00", "\ufeff",
]
INVALID = [b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80",
           b"\xf4\x90\x80\x80", b"\xef\xbb"]

# Any code point but a surrogate. Named explicitly: a bare st.text() checks every character
# against the UTF-8 codec first, a second of start-up in each fresh grading run.
CHARACTERS = st.characters()

piece = st.one_of(
    st.sampled_from(PIECES).map(str.encode),
    st.sampled_from(INVALID),
    st.text(CHARACTERS, max_size=4).map(str.encode),
    st.sampled_from(["1", "22", "333", "4444"]).map(str.encode),
)


@st.composite
def chunked_streams(draw):
    data = b"".join(draw(st.lists(piece, max_size=30)))
    cuts = draw(st.lists(st.integers(0, len(data)), max_size=10))
    return data, cuts


texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(CHARACTERS, max_size=5)), max_size=25).map("".join)


@graded(1, 3, "property: pre_tokenize equals an independent per-character tokenizer")
@settings(max_examples=100)
@given(text=texts)
@example(text="Hello, wörld!  12345 ❤️\n")
@example(text="1\u0301234567 ²")
@example(text="\ufeff\u200d\x1c\x1d a")
def test_property_pre_tokenize_matches_oracle(impl, text):
    check_tokens(impl, text, oracle.tokens_of(text))


@graded(1, 5, "property: every chunking of random bytes (multi-byte, emoji, marks, digits, invalid) counts like the whole stream")
@settings(max_examples=150)
@given(case=chunked_streams())
@example(case=("😀".encode(), [1, 3]))
@example(case=(b"12345678", [2, 2, 5]))
@example(case=(b"ab\xe2\x82", [3]))
@example(case=(b"\xe2\x82x", [1, 2]))
@example(case=("e\u0301\u0301 1".encode(), [1, 2, 3]))
def test_property_every_chunking_matches_whole_stream(impl, case):
    data, cuts = case
    chunks = oracle.chunked(data, cuts)
    check_count(impl, chunks, oracle.count_stream(data))
