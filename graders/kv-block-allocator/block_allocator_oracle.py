"""Shared helpers of the kv-block-allocator hidden suite: a slow model written from PROMPT.md, the
reference loaded for side-by-side timing, and small assertion helpers.

`Model` shares no code with the reference: it keeps only the block tables and token counts, and
derives everything else from them on every call (a block's count is the number of live tables that
hold it; the free blocks are those with count 0; the next block is the smallest free id). Slow and
obviously right, for the property tests.
"""

from __future__ import annotations


from kata.checks import check, reference_at  # noqa: F401 - check: the suite imports it from here


class ModelOutOfBlocks(Exception):
    pass


class Model:
    def __init__(self, num_blocks: int, block_size: int):
        self.n, self.size = num_blocks, block_size
        self.tables: dict[int, list[int]] = {}
        self.tokens: dict[int, int] = {}

    def count(self, block: int) -> int:
        return sum(table.count(block) for table in self.tables.values())

    def free_ids(self) -> list[int]:
        return [b for b in range(self.n) if self.count(b) == 0]

    def allocate(self, seq, num_tokens):
        if seq in self.tables:
            raise ValueError("seq_id")
        need = 0
        while need * self.size < num_tokens:
            need += 1
        free = self.free_ids()
        if need > len(free):
            raise ModelOutOfBlocks()
        self.tables[seq] = free[:need]
        self.tokens[seq] = num_tokens
        return list(self.tables[seq])

    def fork(self, parent, child):
        if parent not in self.tables:
            raise KeyError(parent)
        if child in self.tables:
            raise ValueError("child_id")
        self.tables[child] = list(self.tables[parent])
        self.tokens[child] = self.tokens[parent]
        return list(self.tables[child])

    def append(self, seq):
        if seq not in self.tables:
            raise KeyError(seq)
        table, tokens = self.tables[seq], self.tokens[seq]
        last_is_full = len(table) * self.size == tokens
        shared = self.count(table[-1]) > 1
        result = None
        if last_is_full or shared:
            free = self.free_ids()
            if not free:
                raise ModelOutOfBlocks()
            if last_is_full:
                table.append(free[0])
            else:
                result = (table[-1], free[0])
                table[-1] = free[0]
        self.tokens[seq] = tokens + 1
        return result

    def free(self, seq):
        if seq not in self.tables:
            raise KeyError(seq)
        table = self.tables.pop(seq)
        del self.tokens[seq]
        return [b for b in table if self.count(b) == 0]

    def snapshot(self):
        return {"tables": {s: list(t) for s, t in sorted(self.tables.items())},
                "tokens": dict(sorted(self.tokens.items())),
                "counts": [self.count(b) for b in range(self.n)],
                "free": len(self.free_ids())}


def snapshot(alloc, seq_ids, num_blocks):
    """The same view of an implementation, read through its inspection methods."""
    live = [s for s in seq_ids]
    return {"tables": {s: alloc.block_table(s) for s in live},
            "tokens": {s: alloc.num_tokens(s) for s in live},
            "counts": [alloc.ref_count(b) for b in range(num_blocks)],
            "free": alloc.num_free_blocks()}


def outcome(fn):
    """('ok', value) or ('raise', kind) with kind one of ValueError, KeyError, OutOfBlocks, or the
    unexpected exception's type name."""
    try:
        return ("ok", fn())
    except KeyError:
        return ("raise", "KeyError")
    except ValueError:
        return ("raise", "ValueError")
    except Exception as exc:  # noqa: BLE001 - OutOfBlocks of either module, or a learner's mistake
        name = type(exc).__name__
        return ("raise", "OutOfBlocks" if name in ("OutOfBlocks", "ModelOutOfBlocks") else name)


# --- the reference, for side-by-side timing -------------------------------------

# what a solution too slow for the timing test most likely does
SLOW_HINT = "is a free block found by a scan of the pool, or counted by one?"


reference = reference_at(__file__, "solutions/kv-block-allocator.py")  # call only inside a baseline measure
