"""Token latency from a merged log: your solution goes here. Read PROMPT.md first.

Standard library only. Keep the dataclass as it is.

Example:
    latency_report(["0 a start", "40 a token 0", "100 a token 3", "120 a end"])
    -> LatencyReport(measured=1, incomplete=0, missing_first_token=0, skewed=0, malformed=0,
                     ttft_p50=40, ttft_p99=40, tpot_p50=Fraction(20), tpot_p99=Fraction(20))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class LatencyReport:
    measured: int  # requests with a TTFT
    incomplete: int  # no start line or no end line
    missing_first_token: int  # complete, but no token 0 line
    skewed: int  # token 0 before start, or the highest-index token before token 0
    malformed: int  # lines, not requests
    ttft_p50: int | None  # nearest-rank percentiles; None with no values
    ttft_p99: int | None
    tpot_p50: Fraction | None
    tpot_p99: Fraction | None


def latency_report(lines: list[str]) -> LatencyReport:
    """Classify every request in the log and report TTFT and TPOT percentiles (nearest rank).

    Lines are "<ts> <id> start", "<ts> <id> token <index>" or "<ts> <id> end"; any other line is
    counted as malformed. Duplicated events count at their earliest timestamp. Raises ValueError
    whose message begins with "lines" if lines is not a list of str.
    """
    # TODO
    raise NotImplementedError
