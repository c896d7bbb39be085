"""Hidden suite, level 1: time and memory at scale.

* memory: tracemalloc's peak of memory allocated while feeding must stay below the prompt's 4 MiB,
  traced from the first feed to the return of finish() and checked after every chunk, so a counter
  that buffers fails as soon as it crosses the bound. The 5 MB token is what any buffer of bytes or
  text crosses (kept whole, as bytes or as a str, it is a quarter over the bound, and no token ever
  ends to empty a buffer cut at token boundaries). The 1.3 MB stream (2-byte Latin letters) and the
  1 MiB one (4-byte characters) carry hundreds of thousands of short tokens, so a list of tokens is
  several times the bound; each size is the smallest that keeps its margin, as every megabyte costs
  the verdict's time.
  The 32 KiB stream is fed one byte at a time.
* time: linear. The implementation is timed against a baseline measured in the same process on
  the same chunks: the slower of the reference solution and the grader's own plain per-character
  counter (stc_oracle.StreamingOracleCounter). So a linear per-character solution is never failed
  for not being as fast as the reference's str.translate trick; a quadratic one is, at 10x.
"""

from __future__ import annotations

import functools
import random
import time
import tracemalloc

import pytest

import stc_oracle as oracle
from stc_oracle import reference
from kata import checks
from kata.checks import graded
from kata.strict import same

MIB = 1024 * 1024
MEMORY_BOUND = 4 * MIB  # the prompt's bound for level 1
BLOCK = 64 * 1024
FACTOR = 10



# the oracle's count of a block: the same blocks recur in two tests
_count = functools.cache(oracle.count_stream)


def _block(piece: str, size: int = BLOCK, head: bytes = b"", tail: bytes = b".") -> bytes:
    """`size` bytes: head, then piece repeated (cut wherever the size falls), then tail."""
    body = piece.encode() * (size // len(piece.encode()) + 1)
    return head + body[: size - len(head) - len(tail)] + tail


# Blocks of exactly 64 KiB. Each starts with a letter (or the rest of a character cut by the
# previous block) and ends with ".", so consecutive blocks never merge into one token and the
# count of a stream of blocks is the sum of the blocks' counts (computed by the oracle).
ASCII_BLOCK = _block("streaming tokens   12345678, counted exactly\t\n" + "x" * 40 + "!   ")
CJK_BLOCK = _block("流式令牌计数器在每个边界都必须精确，内存也不能增长。 第2024号请求 ok, 123456 。\r\n")
ASTRAL_BLOCK = _block("\U00020000\U00020001\U00020002\U00020003\U00020004 😀🚀🎉 \U00020005\U00020006, 42 "
                      "\U00020007\U00020008\U00020009\n")  # 4 bytes a character: CJK Extension B, emoji
LATIN_BLOCK = _block("éàü ößñçè ëêï, 12345 îôûÿ déjà-vu ÀÉÎ æœ!\n")  # 2 bytes a character, mostly
SPLIT_BLOCK_1 = _block("straße Ωmega € 1234567, é" + "é" * 20 + " ", tail=b".\xf0\x9f")  # ends inside 😀
SPLIT_BLOCK_2 = _block("ж中文 😀 ٣٣٣٣ ½ 42 e\u0301 ", head=b"\x98\x80", tail=b".")  # ...which ends here


def _split_pair_chunks() -> list[bytes]:
    """SPLIT_BLOCK_1 + SPLIT_BLOCK_2 as chunks, the bytes around the cut emoji one at a time."""
    b1, b2 = SPLIT_BLOCK_1, SPLIT_BLOCK_2
    return [b1[:-3], b1[-3:-2], b1[-2:-1], b1[-1:], b"", b2[:1], b2[1:2], b2[2:3], b2[3:]]


def feed_measuring_peak(counter, chunks, what: str) -> int:
    """Feed every chunk under tracemalloc and finish; fails as soon as the traced peak passes the bound."""
    tracemalloc.start()
    try:
        for i, chunk in enumerate(chunks):
            counter.feed(chunk)
            peak = tracemalloc.get_traced_memory()[1]
            if peak > MEMORY_BOUND:
                fed = sum(len(c) for c in chunks[: i + 1])
                pytest.fail(f"Fed {what}: after {fed:,} bytes the peak traced memory was {peak:,} bytes, "
                            f"expected it to stay below {MEMORY_BOUND:,} (4 MiB).")
        count = counter.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= MEMORY_BOUND, (
        f"Fed {what} and called finish(). Peak traced memory was {peak:,} bytes, expected below {MEMORY_BOUND:,}.")
    return count


# --- memory ---------------------------------------------------------------------


@graded(1, 2, "a 1.3 MB stream in chunks from 1 byte to 64 KiB: exact count, traced peak below 4 MiB")
def test_megabyte_stream_traced(impl):
    # mostly 2-byte Latin letters: under tracemalloc the cheapest bytes for a per-character loop;
    # 378 050 tokens, so a list of them is over 20 MB
    data = b"".join(([LATIN_BLOCK] * 6 + [ASCII_BLOCK, CJK_BLOCK, SPLIT_BLOCK_1, SPLIT_BLOCK_2]) * 2)  # 1.3 MB
    sizes = [65536, 1, 3, 40000, 7, 65536, 2, 65536, 12345, 1, 1, 65535]  # cuts fall anywhere
    chunks = []
    i = 0
    while i < len(data):
        size = sizes[len(chunks) % len(sizes)]
        chunks.append(data[i:i + size])
        i += size
    expected = 2 * (6 * _count(LATIN_BLOCK) + _count(ASCII_BLOCK)
                    + _count(CJK_BLOCK) + _count(SPLIT_BLOCK_1 + SPLIT_BLOCK_2))
    got = feed_measuring_peak(impl.TokenCounter(), chunks, f"a {len(data):,}-byte stream in 1-byte to 64 KiB chunks")
    assert same(got, expected), f"Fed a {len(data):,}-byte stream and called finish(). Returned {got!r}, expected {expected}."


@graded(1, 3, "a 1 MiB stream of 4-byte characters in chunks from 1 byte to 64 KiB: exact count, traced peak "
              "below 4 MiB")
def test_megabyte_wide_stream(impl):
    # Mostly 4-byte characters (rare CJK ideographs and emoji: the fewest characters per byte,
    # so the cheapest bytes for a per-character loop), one block of common Chinese in 16, and
    # one emoji cut across a block boundary, fed a byte at a time: 232 936 tokens.
    chunks = [ASTRAL_BLOCK] * 13 + [CJK_BLOCK] + _split_pair_chunks()
    total = sum(map(len, chunks))  # 16 blocks of 64 KiB
    got = feed_measuring_peak(impl.TokenCounter(), chunks, f"a {total:,}-byte stream of mostly 4-byte characters")
    expected = 13 * _count(ASTRAL_BLOCK) + _count(CJK_BLOCK) + _count(SPLIT_BLOCK_1 + SPLIT_BLOCK_2)
    assert same(got, expected), f"Fed a {total:,}-byte stream and called finish(). Returned {got!r}, expected {expected}."


@graded(1, 3, "a single 5 MB token, cut inside a character at every chunk boundary: traced peak below 4 MiB")
def test_five_megabyte_token(impl):
    # letters and marks: one token. Each chunk of BLOCK - 1 bytes ends on the first byte of an "é",
    # so every cut falls inside a character. Kept whole, the token is 5.2 MB as bytes and as a str
    # (one byte a character until the marks at its end): a quarter over the bound.
    size = BLOCK - 1
    token = ("a" * (size - 2) + "é").encode() * 80 + "e\u0301".encode() * 10
    data = b"(" + token + b")"
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    assert all(chunk[-1:] == "é".encode()[:1] for chunk in chunks[:-1])
    got = feed_measuring_peak(impl.TokenCounter(), chunks, f"a {len(data):,}-byte stream holding one 5 MB token")
    assert same(got, 3), f"Fed b'(' + 5 MB of letters + b')' in {size}-byte chunks and called finish(). Returned {got!r}, expected 3."


@graded(1, 2, "a 32 KiB mixed stream fed one byte at a time: exact count, traced peak below 4 MiB")
def test_one_byte_chunks(impl):
    rng = random.Random(7)
    pieces = ["word", " ", "12345", "é", "😀", "\r\n", "e\u0301", "!", "\xff", "٣٣"]
    data = b"".join(p.encode("latin-1") if p == "\xff" else p.encode()
                    for p in rng.choices(pieces, k=6000))[: 32 * 1024]
    chunks = [data[i:i + 1] for i in range(len(data))]
    got = feed_measuring_peak(impl.TokenCounter(), chunks, f"a {len(data):,}-byte stream one byte at a time")
    expected = oracle.count_stream(data)
    assert same(got, expected), f"Fed a {len(data):,}-byte mixed stream one byte at a time and called finish(). Returned {got!r}, expected {expected}."


# --- time -----------------------------------------------------------------------


def _feed(make, chunks):
    """A counter from make() fed every chunk: its finish()."""
    counter = make()
    for chunk in chunks:
        counter.feed(chunk)
    return counter.finish()


def _cpu_seconds(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


@pytest.mark.complexity
@graded(1, 2, "linear time: 300 KB in 1- to 64-byte chunks, within 10x of the slower of two linear baselines")
def test_linear_time_many_small_chunks(impl):
    rng = random.Random(11)
    words = ["token", "stream", " ", "  ", "1234567", "é", "ж", "😀", ",", "\n", "e\u0301"]
    data = "".join(rng.choices(words, k=60_000)).encode()[:300_000]
    chunks = []
    i = 0
    while i < len(data):
        size = rng.randint(1, 64)
        chunks.append(data[i:i + size])
        i += size
    expected = _count(data)
    # the bound is 10x the slower of the reference (timed where it runs: in a batch, apart) and the
    # grader's plain per-character counter (timed here), plus 50 ms
    plain = _cpu_seconds(lambda: _feed(oracle.StreamingOracleCounter, chunks))
    got, _ = checks.compare_speed(
        f"TokenCounter().feed on {len(data):,} bytes in {len(chunks):,} chunks of 1-64 bytes, then finish()",
        lambda: _feed(impl.TokenCounter, chunks), lambda: _feed(reference().TokenCounter, chunks), factor=FACTOR,
        slack=0.05, floor=FACTOR * plain + 0.05, confirm=True,
        hint=f"the floor is {FACTOR}x a plain per-character counter's {plain:.2f} s; handle each byte once")
    assert same(got, expected), f"Fed {len(data):,} bytes in small chunks and called finish(). Returned {got!r}, expected {expected}."
