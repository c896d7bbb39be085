"""Suite versions: every grade knows which hidden suite made it.

A hidden suite changes (a test added after a wrong solution slipped through, an unfair test
fixed); a score earned on the old suite is then not comparable with one earned on the new. So each
hidden-suite submission records its `suite_version`: a short hash of the files the kata's manifest
covers (the hidden suite and the reference), exactly what `kata validate` rewrites when they change.

`kata regrade SESSION` (session.regrade_session) grades a session's recorded submissions again on
today's suite and keeps the old result beside the new (the new row's `regrade_of` names the old
one; scores then count the new one). `kata regrade --batch GRADEBOOK` (cohort.regrade_batch) does
the same for a grade-batch: each student's file is read again, checked against the hash the
gradebook recorded for it, and graded on today's suites.

Example:
    suite_version(wb.kata("lru-kv-cache"))   -> '3f9c2a71d0be'
"""

from __future__ import annotations

import hashlib
import json

from kata.catalog import Kata

VERSION_CHARS = 12


def suite_version(kata: Kata) -> str:
    """A short hash of the hidden suite and the reference (the files the manifest covers)."""
    from kata.grading import compute_manifest

    files = compute_manifest(kata)["files"]
    text = json.dumps(files, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:VERSION_CHARS]


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
