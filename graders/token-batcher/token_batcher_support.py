"""Helpers shared by the token-batcher hidden suite's test files."""

from __future__ import annotations

from kata.checks import check_speed, graded


def build(mod, rows):
    """impl.Request objects from plain tuples."""
    return [mod.Request(*row) for row in rows]


def cached(runs, mod, key, compute):
    """compute() once per (implementation, key) in `runs`, the test module's `runs` fixture (a
    dict that starts empty in every pytest session: a module-level dict here would outlive the
    session, e.g. into mutmut's runs forked after a clean run, and hand back stale results).
    A raised exception is cached and re-raised."""
    k = (mod.__name__, id(mod), key)
    if k not in runs:
        try:
            runs[k] = ("ok", compute(), None)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            runs[k] = ("error", exc, exc.__traceback__)
    kind, value, tb = runs[k]
    if kind == "error":
        # restore the original traceback: re-raising would otherwise grow it test after test
        raise value.with_traceback(tb)
    return value


def bulk_requests(runs, mod, n=100_000):
    """n requests built with mod.Request, once per test module: 16 arrive per time unit, prompts of
    1-40 tokens, outputs of 0-2. Every implementation reads only the fields, so the reference runs
    on the very same objects (building 100k frozen dataclasses costs more than batching them)."""
    def make():
        return [mod.Request(f"q{i}", i // 16, 1 + (i * 7919) % 40, (i * 104729) % 3)
                for i in range(n)]
    return cached(runs, mod, ("bulk", n), make)


def complexity_check(call, make_ref, call_impl, sizes, answer, what):
    """kata.checks.check_speed on each size in turn, the small one first (it keeps a quadratic
    implementation from spending minutes on the large input), with the garbage collector paused (a
    collection pass over 100k live objects would otherwise land in one run and not the other).
    make_ref() loads the reference and builds its input (untimed, and only where the reference
    runs) and returns call_ref; call_ref(n) / call_impl(n) run on the input of size n. Returns the
    implementation's result on the last size."""
    __tracebackhide__ = True
    for n in sizes:
        got = check_speed(f"{call}({n:,} requests)", lambda n=n: call_impl(n), lambda call_ref, n=n: call_ref(n),
                          what, ref_setup=make_ref, answer=answer, floor=0.0, slack=0.05, pause_gc=True)
    return got


# --- levels 3 and 4: seeded traces, run once per implementation ----------------------

# The configs PROMPT.md announces for the graded traces.
SLO_CONFIG = dict(num_blocks=160, block_size=16, max_running=24, prefill_cost=1, decode_cost=20)
CHUNKED_CONFIG = dict(SLO_CONFIG, token_budget=256)
SLO_SEEDS = (11, 12, 13)
CHUNKED_SEEDS = (21, 22, 23)
TRACE_SIZE = 160


def slo_case(runs, mod, level, seed):
    """(requests, config, schedule) of mod's level-3 or level-4 scheduler on a seeded trace."""
    from token_batcher_traces import slo_trace

    def run():
        chunked = level == 4
        rows = slo_trace(seed, n=TRACE_SIZE, mean_gap=90, long_prompts=chunked)
        requests = build(mod, rows)
        config = mod.EngineConfig(**(CHUNKED_CONFIG if chunked else SLO_CONFIG))
        fn = mod.schedule_chunked if chunked else mod.schedule_slo
        return requests, config, fn(requests, config)

    return cached(runs, mod, ("slo", level, seed), run)


def slo_report(runs, mod, level, seed):
    """The replay's report on slo_case(runs, mod, level, seed)."""
    from token_batcher_replay import replay_schedule

    def run():
        requests, config, schedule = slo_case(runs, mod, level, seed)
        return replay_schedule(requests, config, schedule, chunked=level == 4)

    return cached(runs, mod, ("report", level, seed), run)


def assert_clean(rep, where, categories=None):
    """The replay `rep` of a schedule found no broken rule among `categories` (default: every rule
    and every claim)."""
    __tracebackhide__ = True
    from token_batcher_replay import CLAIMS, PHYSICS

    problem = rep.first(*(categories or PHYSICS + CLAIMS))
    assert problem is None, f"Called {where}. The replay of the returned schedule found: {problem}."


def trace_tests(level, invariants) -> dict:
    """One test per rule the replay checks on the level's seeded traces, test_traces_<rule>, for the
    test module's globals(): invariants are (rule, points, edge)."""
    seeds, name = (SLO_SEEDS, "schedule_slo") if level == 3 else (CHUNKED_SEEDS, "schedule_chunked")

    def make(category, points, edge):
        @graded(level, points, edge + " (seeded traces)")
        def test(impl, runs):
            for seed in seeds:
                problem = slo_report(runs, impl, level, seed).first(category)
                assert problem is None, f"Called {name}(seeded trace {seed}). The replay found: {problem}."
        test.__name__ = test.__qualname__ = f"test_traces_{category}"
        return test

    return {f"test_traces_{category}": make(category, points, edge) for category, points, edge in invariants}
