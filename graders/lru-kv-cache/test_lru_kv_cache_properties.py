"""Hidden suite, all levels: hypothesis stateful tests against a slow model written from PROMPT.md.

Each level has its own state machine: level 1 drives put/get only, level 2 adds pins, get_block and
remove, level 3 adds get_or_put (from one thread; the threaded tests are in the level 3 file).
After every step the machine compares keys(), used_blocks, len() and stats() with the model.
"""

from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from lru_kv_cache_model import ModelCache, outcome, outcome_within, show

from kata.checks import graded
from kata.strict import same

KEYS = st.sampled_from(["a", "b", "c", "d", ""])
# mostly small entries, so that several fit; now and then one larger than the cache
BLOCK_LISTS = st.lists(st.integers(0, 9), min_size=1, max_size=3) | st.lists(st.integers(0, 9), min_size=1, max_size=8)
# No shrinking: a failure reports the sequence as found (its last steps are in the message), in
# well under a second, rather than spending the grading time limit on a minimal example.
RUN = settings(max_examples=30, stateful_step_count=25, phases=[Phase.explicit, Phase.reuse, Phase.generate])


def _machine(impl, level):
    """A state machine class bound to `impl`, with the rules of `level` and below."""

    class Machine(RuleBasedStateMachine):
        @initialize(capacity=st.integers(1, 7))
        def start(self, capacity):
            self.cache = impl.KVBlockCache(capacity)
            self.model = ModelCache(capacity)
            self.log = [f"cache = KVBlockCache({capacity})"]

        def key(self, data):
            """A key drawn from the entries present most of the time, else any key."""
            present = self.model.keys()
            if present and data.draw(st.integers(0, 3), label="present?"):
                return data.draw(st.sampled_from(present), label="key")
            return data.draw(KEYS, label="key")

        def check(self, text, got, want):
            # the log replays: what a call raises, and what the test then did to a list, are in it
            self.log.append(text + (f" ({show(want)})" if isinstance(want, type) else ""))
            assert same(got, want), (
                f"Called {text}. It {show(got)}, expected it {show(want)}. "
                f"The calls before it: {'; '.join(self.log[:-1][-8:])}."
            )

        @rule(key=KEYS, blocks=BLOCK_LISTS)
        def put(self, key, blocks):
            argument = list(blocks)
            got = outcome(lambda: self.cache.put(key, argument))
            self.check(f"put({key!r}, {blocks!r})", got, self.model.put(key, blocks))
            argument.append(99)  # the cache keeps its own copy: this must change nothing
            self.log[-1] += ", then the list passed in is changed (.append(99))"

        @rule(data=st.data())
        def get(self, data):
            key = self.key(data)
            got = outcome(lambda: self.cache.get(key))
            self.check(f"get({key!r})", got, self.model.get(key))
            if isinstance(got, list):
                got.append(99)  # a new list: changing it must change nothing
                self.log[-1] += ", then the list it returned is changed (.append(99))"

        @rule(data=st.data())
        def contains(self, data):
            key = self.key(data)
            got = outcome(lambda: key in self.cache)
            self.check(f"{key!r} in cache", got, self.model._find(key) is not None)

        if level >= 2:

            @rule(data=st.data())
            def pin(self, data):
                key = self.key(data)
                got = outcome(lambda: self.cache.pin(key))
                self.check(f"pin({key!r})", got, self.model.pin(key))

            @rule(data=st.data())
            def unpin(self, data):
                key = self.key(data)
                got = outcome(lambda: self.cache.unpin(key))
                self.check(f"unpin({key!r})", got, self.model.unpin(key))

            @rule(data=st.data())
            def pin_count(self, data):
                key = self.key(data)
                got = outcome(lambda: self.cache.pin_count(key))
                self.check(f"pin_count({key!r})", got, self.model.pin_count(key))

            @rule(data=st.data(), index=st.integers(-2, 4))
            def get_block(self, data, index):
                key = self.key(data)
                got = outcome(lambda: self.cache.get_block(key, index))
                self.check(f"get_block({key!r}, {index})", got, self.model.get_block(key, index))

            @rule(data=st.data())
            def remove(self, data):
                key = self.key(data)
                got = outcome(lambda: self.cache.remove(key))
                self.check(f"remove({key!r})", got, self.model.remove(key))

        if level >= 3:

            @rule(data=st.data(), blocks=st.none() | BLOCK_LISTS)
            def get_or_put(self, data, blocks):
                key = self.key(data)

                def factory():
                    if blocks is None:
                        raise RuntimeError("factory failed")
                    return list(blocks)

                got = outcome_within(lambda: self.cache.get_or_put(key, factory))
                what = "a raising factory" if blocks is None else f"f -> {blocks!r}"
                self.check(f"get_or_put({key!r}, {what})", got, self.model.get_or_put(key, blocks))

        @invariant()
        def views_agree(self):
            if not hasattr(self, "cache"):
                return
            got = (self.cache.keys(), self.cache.used_blocks, len(self.cache), self.cache.stats())
            model = self.model
            want = (model.keys(), model.used_blocks(), len(model.entries), model.stats())
            assert same(got, want), (
                f"Called (keys(), used_blocks, len(cache), stats()). Returned {got!r}, expected {want!r}. "
                f"The calls before it: {'; '.join(self.log[-8:])}."
            )

    Machine.TestCase.settings = RUN
    return Machine


@graded(1, 5, "random put/get/in sequences agree with a simple list-based model at every step")
def test_stateful_level1(impl):
    run_state_machine_as_test(_machine(impl, 1), settings=RUN)


@graded(2, 5, "random sequences with pin/unpin/get_block/remove agree with the model at every step")
def test_stateful_level2(impl):
    run_state_machine_as_test(_machine(impl, 2), settings=RUN)


@graded(3, 3, "random sequences with get_or_put (including failing factories) agree with the model")
def test_stateful_level3(impl):
    run_state_machine_as_test(_machine(impl, 3), settings=RUN)
