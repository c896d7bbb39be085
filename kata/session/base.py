"""The session package's clock and store: `now()` (the machine's time; $KATA_NOW in kata's own
tests only) and one store connection per command.
"""

from __future__ import annotations

import os
import time

from kata.catalog import CatalogError, Workbook
from kata.store import Store

# On only in kata's own tests: then $KATA_NOW sets the clock. Off, the time is the machine's.
TEST_CLOCK = False


def fake_clock() -> bool:
    """Whether a test has set the clock (then no deadline keeper starts: it keeps real time)."""
    return TEST_CLOCK and bool(os.environ.get("KATA_NOW"))


def now() -> float:
    if TEST_CLOCK:
        fake = os.environ.get("KATA_NOW")
        if fake:
            try:
                return float(fake)
            except ValueError:
                raise CatalogError(f"$KATA_NOW={fake!r}: must be seconds since the epoch") from None
    return time.time()


_STORES: dict[tuple[str, int], Store] = {}  # (store path, thread) -> the command's one connection


def open_store(wb: Workbook) -> Store:
    """The store of `wb`: one connection per command (and thread), closed by `close_stores`."""
    import threading

    key = (str(wb.kata_dir / "kata.db"), threading.get_ident())
    store = _STORES.get(key)
    if store is None or store.db is None or not store.path.exists():
        if store is not None:
            store.close()
        store = _STORES[key] = Store(wb.kata_dir / "kata.db")
    return store


def close_stores() -> None:
    """Close every connection `open_store` made (the CLI calls this as each command ends)."""
    while _STORES:
        _, store = _STORES.popitem()
        store.close()


def _clock(seconds: float) -> str:
    from kata.views import clock

    return clock(seconds)
