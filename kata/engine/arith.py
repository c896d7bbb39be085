"""Integer arithmetic the engine shares: `cdiv`, the one ceiling division.

    cdiv(17, 16) -> 2     # blocks of 16 slots that 17 tokens fill
"""

from __future__ import annotations


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) in exact integer arithmetic (no float rounding on large values)."""
    return -(a // -b)
