"""Detecting a generation stuck in a loop: repeated n-grams in a sliding window of tokens.

The n-grams that lie entirely inside the window are kept in a deque (oldest first) and counted in
a dict; each new token adds one n-gram and removes at most one, so a token costs O(n) however
large the window.

Example:
    d = LoopDetector(n=2, window=6, threshold=2)
    d.feed([5, 9, 5, 9])   -> [3]        (5, 9) ends at 1 and at 3
    d.count([9, 5])        -> 1
"""

from __future__ import annotations

from collections import deque


def _is_int(x) -> bool:
    return type(x) is int  # a bool is not an int here


def _check_ids(values, name: str) -> None:
    if not isinstance(values, list) or not all(_is_int(v) and v >= 0 for v in values):
        raise ValueError(f"{name} must be a list of ints >= 0")


class LoopDetector:
    def __init__(self, n: int, window: int, threshold: int) -> None:
        if not _is_int(n) or n < 1:
            raise ValueError(f"n must be an int >= 1, got {n!r}")
        if not _is_int(window) or window < n:
            raise ValueError(f"window must be an int >= n ({n}), got {window!r}")
        if not _is_int(threshold) or threshold < 2:
            raise ValueError(f"threshold must be an int >= 2, got {threshold!r}")
        self.n, self.window, self.threshold = n, window, threshold
        self._recent: deque[int] = deque(maxlen=n)  # the last n tokens
        self._grams: deque[tuple[int, ...]] = deque()  # n-grams inside the window, oldest first
        self._counts: dict[tuple[int, ...], int] = {}  # n-gram -> occurrences inside the window
        self._seen = 0  # tokens fed so far

    @property
    def tokens_seen(self) -> int:
        return self._seen

    def feed(self, tokens: list[int]) -> list[int]:
        _check_ids(tokens, "tokens")  # the whole chunk first: a bad chunk changes nothing
        fired = []
        for token in tokens:
            position = self._seen
            self._seen += 1
            self._recent.append(token)
            if len(self._recent) < self.n:
                continue
            gram = tuple(self._recent)
            self._grams.append(gram)
            self._counts[gram] = self._counts.get(gram, 0) + 1
            if len(self._grams) > self.window - self.n + 1:  # its first token left the window
                old = self._grams.popleft()
                self._counts[old] -= 1
                if not self._counts[old]:
                    del self._counts[old]
            if self._counts[gram] >= self.threshold:
                fired.append(position)
        return fired

    def count(self, ngram: list[int]) -> int:
        _check_ids(ngram, "ngram")
        if len(ngram) != self.n:
            raise ValueError(f"ngram must hold exactly n = {self.n} tokens, got {len(ngram)}")
        return self._counts.get(tuple(ngram), 0)
