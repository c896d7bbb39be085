"""Loop detector for generated tokens: your solution goes here. Read PROMPT.md first.

Standard library only. Each token must cost O(n) time however large the window.

Example:
    d = LoopDetector(n=2, window=6, threshold=2)
    d.feed([5, 9, 5, 9])   -> [3]        (5, 9) ends at 1 and at 3
    d.count([9, 5])        -> 1
    d.tokens_seen          -> 4
"""

from __future__ import annotations


class LoopDetector:
    """Fires at each position whose n-gram occurs at least `threshold` times in the last `window`
    tokens (n-grams wholly inside the window, overlapping ones included)."""

    def __init__(self, n: int, window: int, threshold: int) -> None:
        """n: an int >= 1; window: an int >= n; threshold: an int >= 2 (never a bool).

        Raises ValueError whose message begins with the first invalid argument's name.
        """
        # TODO
        raise NotImplementedError

    @property
    def tokens_seen(self) -> int:
        """How many tokens have been added so far."""
        # TODO
        raise NotImplementedError

    def feed(self, tokens: list[int]) -> list[int]:
        """Add the tokens in order; return the positions (ascending) at which the detector fired.

        Raises ValueError beginning with "tokens" unless tokens is a list of ints >= 0; then nothing
        of the chunk is added.
        """
        # TODO
        raise NotImplementedError

    def count(self, ngram: list[int]) -> int:
        """How many n-grams in the current window equal ngram (a list of exactly n ints >= 0).

        Raises ValueError beginning with "ngram" otherwise. Changes nothing.
        """
        # TODO
        raise NotImplementedError
