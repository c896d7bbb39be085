"""Token reorder buffer: your solution goes here. Read PROMPT.md first.

Standard library only. Tokens arrive out of order, tagged with their sequence number; the buffer
passes them on in order, drops duplicates and late tokens, and gives up on a gap (skips it) when it
holds more than `capacity` tokens or when its oldest token has waited `max_wait`.

Example:
    b = ReorderBuffer(capacity=3, max_wait=5)
    b.push(0, "A", 0)   -> ["A"]
    b.push(2, "C", 1)   -> []          (1 is missing)
    b.push(1, "B", 3)   -> ["B", "C"]
"""

from __future__ import annotations


class ReorderBuffer:
    """Passes tokens on in sequence order; see PROMPT.md for every rule."""

    def __init__(self, capacity: int, max_wait: int) -> None:
        """capacity: int >= 1; max_wait: int >= 0 (not bools). ValueError naming the first bad one."""
        # TODO
        raise NotImplementedError

    def push(self, seq: int, token: str, now: int) -> list[str]:
        """A token arrives at time now: place it, then skip while over capacity, then time out.

        Returns the tokens passed to the client during this call, in order.
        Raises RuntimeError after close(); ValueError naming seq, token or now (in that order).
        """
        # TODO
        raise NotImplementedError

    def tick(self, now: int) -> list[str]:
        """Time passes: skip while the oldest buffered token arrived at a time <= now - max_wait."""
        # TODO
        raise NotImplementedError

    def close(self) -> list[str]:
        """End of stream: skip until the buffer is empty. Returns the tokens passed, in order."""
        # TODO
        raise NotImplementedError

    def stats(self) -> dict[str, int]:
        """A new dict with keys next, buffered, released, duplicates, late, lost."""
        # TODO
        raise NotImplementedError
