"""The safety-interceptor kata on the engine: a learner's level-1 gateway and level-3 tenant cache
in front of the reference engine, through its public API only (add_request, step, abort_request,
cache_salt).

    kata engine run --interceptor workspace/safety_interceptor.py

What runs, on the trace `kata engine run` builds:

* **A classifier racing chunked prefill.** A seeded classifier gives every request a verdict
  latency (5-60 ms) and flags about one in ten. The learner's `run_gateway(requests,
  prefill_cost)` (level 1, times in whole milliseconds) decides which requests are refused and
  when: its `refused_time`. The engine serves the trace with chunked prefill; between steps, every
  request refused by then is cancelled with `abort_request`, and the KV blocks it held return to
  the pool at once (counted). A served request's first token leaves at max(the engine's first
  token, the verdict): the classifier's latency is hidden by prefill wherever prefill is longer.
* **Per-tenant prefix caching.** Requests are spread over three tenants; each carries its tenant
  as `cache_salt`, so a tenant's prefix hits come only from its own earlier prompts.
* **The side channel.** Tenant beta sends tenant acme's system prompt as a probe. With one shared
  cache the probe's TTFT drops when acme sent that prompt (a hit), so beta learns what acme sends;
  with salted keys a hit is impossible and the probe's TTFT is the same as for a prompt nobody
  sent. The learner's `TenantPrefixCache` replays the same two admissions: it must find 0 hits.

The reference run ("without") is the same trace with no classifier: every request is served and
its TTFT is the engine's alone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from kata.engine.arith import cdiv
from kata.engine.adapters import import_learner_module
from kata.engine.policy import PolicyError

MODULE_NAME = "safety_interceptor"
TENANTS = ("acme", "beta", "gamma")
FLAG_RATE = 0.1  # the share of requests the simulated classifier flags
CLASSIFY_MS = (5, 60)  # its latency, uniform in whole milliseconds
PREFILL_COST_MS = 1  # what the learner's gateway is told a prompt token costs (level 1's unit)
PROBE_TOKENS = 512  # the system prompt beta probes


@dataclass(slots=True)
class InterceptedRun:
    """What one trace did with and without the interceptor (times in simulated seconds)."""

    ttft_without: list[float]  # every request, no classifier
    ttft_with: list[float]  # served requests: max(first token, verdict) - arrival
    ttft_served_without: list[float] = field(default_factory=list)  # the same served requests, no classifier
    refused: int = 0
    cancelled_mid_prefill: int = 0  # refused after some of its prompt was computed
    blocks_freed: int = 0  # returned to the pool by the cancellations, at the moment of each
    wasted_prefill_tokens: int = 0  # prompt tokens computed for requests that were refused
    probe: dict = field(default_factory=dict)  # the side channel: name -> TTFT or hits


def load(path: str | Path):
    """Import the learner's safety_interceptor.py; PolicyError (one line) when it is missing, does
    not import, or lacks level 1's run_gateway or level 3's TenantPrefixCache."""
    path = Path(path)
    module = import_learner_module(path, MODULE_NAME, "safety-interceptor")
    missing = [n for n in ("Request", "run_gateway", "TenantPrefixCache") if not callable(getattr(module, n, None))]
    if missing:
        raise PolicyError(f"{path.name} has no {', '.join(missing)}: the interceptor runs the kata's "
                          "level-1 run_gateway and level-3 TenantPrefixCache")
    return module


def classify(trace, seed: int) -> dict[str, tuple[int, bool]]:
    """The simulated classifier: request_id -> (latency in ms, flagged). Seeded, so the same
    trace and seed always flag the same requests."""
    rng = random.Random(seed)
    return {r.request_id: (rng.randint(*CLASSIFY_MS), rng.random() < FLAG_RATE) for r in trace}


def with_tenants(trace) -> list:
    """The trace with each request's tenant as its cache salt (round robin, in trace order)."""
    return [replace(r, cache_salt=TENANTS[i % len(TENANTS)]) for i, r in enumerate(trace)]


def gateway_refusals(module, trace, verdicts) -> dict[str, float]:
    """request_id -> the time (s) the learner's run_gateway refuses it, for refused requests."""
    requests = [module.Request(r.request_id, round(r.arrival_time * 1000), r.num_prompt_tokens, *verdicts[r.request_id])
                for r in trace]
    try:
        outcomes = module.run_gateway(requests, PREFILL_COST_MS)
    except NotImplementedError:
        raise PolicyError("run_gateway is not implemented yet (level 1 of the kata)") from None
    except Exception as e:  # the learner's code failed on the trace
        raise PolicyError(f"run_gateway raised {type(e).__name__}: {e}") from None
    if not isinstance(outcomes, dict) or set(outcomes) != {r.request_id for r in trace}:
        raise PolicyError("run_gateway must return a dict with one Outcome per request id")
    refused = {}
    for rid, out in outcomes.items():
        if getattr(out, "status", None) == "refused":
            if not isinstance(getattr(out, "refused_time", None), int):
                raise PolicyError(f"run_gateway: request {rid} is refused but its refused_time is not an int")
            refused[rid] = out.refused_time / 1000
    return refused


def run_intercepted(engine_factory, trace, verdicts, refuse_at: dict[str, float]) -> InterceptedRun:
    """Serve the trace twice on fresh engines: without the interceptor, and with every refused
    request aborted at the first step boundary at or after its refusal time."""
    plain = engine_factory()
    plain.add_trace(trace)
    while plain.has_unfinished():
        plain.step()
    without = {s.request_id: s.first_token_time - s.arrival_time for s in plain.finished_seqs}
    run = InterceptedRun(ttft_without=list(without.values()), ttft_with=[])
    engine = engine_factory()
    engine.add_trace(trace)
    pending = sorted(refuse_at.items(), key=lambda kv: (kv[1], kv[0]))
    while engine.has_unfinished():
        while pending and pending[0][1] <= engine.clock:
            rid, _ = pending.pop(0)
            free = engine.block_manager.num_free_blocks
            if engine.abort_request(rid):
                run.refused += 1
                run.blocks_freed += engine.block_manager.num_free_blocks - free
        engine.step()
    for seq in engine.aborted:
        run.wasted_prefill_tokens += seq.num_computed_tokens
        run.cancelled_mid_prefill += 0 < seq.num_computed_tokens < seq.num_prompt_tokens
    for seq in engine.finished_seqs:
        verdict = seq.arrival_time + verdicts[seq.request_id][0] / 1000
        run.ttft_with.append(max(seq.first_token_time, verdict) - seq.arrival_time)
        run.ttft_served_without.append(without[seq.request_id])
    return run


def side_channel(engine_factory, module, block_size: int) -> dict:
    """Tenant beta probes tenant acme's system prompt, on a shared cache and on salted keys; a
    probe of a prompt nobody sent is the baseline. Also the learner's TenantPrefixCache's hits."""
    secret = [(7 * i + 3) % 250 + 1 for i in range(PROBE_TOKENS)]
    unseen = [(11 * i + 5) % 250 + 1 for i in range(PROBE_TOKENS)]

    def probe_ttft(prompt, salted: bool) -> float:
        engine = engine_factory()
        engine.add_request(secret + [1], _params(), request_id="acme", cache_salt="acme" if salted else None)
        engine.add_request(prompt + [2], _params(), request_id="probe", arrival_time=1.0,
                           cache_salt="beta" if salted else None)
        while engine.has_unfinished():
            engine.step()
        seq = next(s for s in engine.finished_seqs if s.request_id == "probe")
        return seq.first_token_time - seq.arrival_time

    try:
        cache = module.TenantPrefixCache(block_size, {"acme": 1 << 20, "beta": 1 << 20})
        cache.admit("acme", secret + [1])
        hits = cache.admit("beta", secret + [2])[0]
    except NotImplementedError:
        hits = None  # level 3 not written yet: the engine's half still runs
    except Exception as e:
        raise PolicyError(f"TenantPrefixCache raised {type(e).__name__}: {e}") from None
    return {"shared_hit": probe_ttft(secret, False), "shared_miss": probe_ttft(unseen, False),
            "salted_hit": probe_ttft(secret, True), "salted_miss": probe_ttft(unseen, True),
            "your_cache_hits": hits, "probe_blocks": PROBE_TOKENS // block_size}


def _params():
    from kata.engine.sequence import SamplingParams

    return SamplingParams(max_tokens=2, ignore_eos=True)


def intercept(config, trace, path: str | Path, seed: int) -> InterceptedRun:
    """The whole experiment for `kata engine run --interceptor PATH`."""
    from kata.engine.llm_engine import LLMEngine

    module = load(path)
    trace = with_tenants(trace)
    verdicts = classify(trace, seed)
    refuse_at = gateway_refusals(module, trace, verdicts)
    run = run_intercepted(lambda: LLMEngine(config), trace, verdicts, refuse_at)
    sim = replace(config, compute=False)  # the probe is about time: simulate it
    run.probe = side_channel(lambda: LLMEngine(sim), module, config.cache.block_size)
    return run


# --- the report --------------------------------------------------------------------------------


def _pct(values: list[float], q: int) -> float:
    """Nearest-rank percentile (q an integer in 0..100) of non-empty values, in milliseconds."""
    v = sorted(values)
    return 1000 * v[min(len(v) - 1, max(0, cdiv(len(v) * q, 100) - 1))]


def to_dict(run: InterceptedRun) -> dict:
    """The figures the table shows, as plain numbers (for --json)."""
    return {"ttft_ms_without": {f"p{q}": _pct(run.ttft_without, q) for q in (50, 90, 99)},
            "ttft_ms_with": {f"p{q}": _pct(run.ttft_with, q) for q in (50, 90, 99)} if run.ttft_with else {},
            "ttft_ms_served_without": ({f"p{q}": _pct(run.ttft_served_without, q) for q in (50, 90, 99)}
                                       if run.ttft_with else {}),
            "served": len(run.ttft_with), "refused": run.refused,
            "cancelled_mid_prefill": run.cancelled_mid_prefill, "blocks_freed": run.blocks_freed,
            "wasted_prefill_tokens": run.wasted_prefill_tokens,
            "probe_ttft_ms": {k: 1000 * v for k, v in run.probe.items() if k.startswith(("shared", "salted"))},
            "your_cache_probe_hits": run.probe.get("your_cache_hits")}


def render(console, run: InterceptedRun) -> None:
    """Print the run as two small tables and a verdict on the side channel."""
    from rich.table import Table

    t = Table(title="TTFT with and without the interceptor (ms)")
    for col in ("", "p50", "p90", "p99", "requests"):
        t.add_column(col, justify="right" if col else "left")
    rows = [("without: every request", run.ttft_without)]  # short labels: one line each at 80 columns
    if run.ttft_with:
        rows += [("without: the served ones", run.ttft_served_without),
                 ("with: max(token, verdict)", run.ttft_with)]
    for name, values in rows:
        t.add_row(name, *(f"{_pct(values, q):.1f}" for q in (50, 90, 99)), str(len(values)))
    console.print(t)
    console.print(f"refused {run.refused} (cancelled mid-prefill: {run.cancelled_mid_prefill}); KV blocks freed "
                  f"by the cancellations: {run.blocks_freed}; prompt tokens computed for refused requests: "
                  f"{run.wasted_prefill_tokens}")
    p = run.probe
    console.print(f"side channel: beta sends acme's {PROBE_TOKENS}-token system prompt as a probe. Probe TTFT, "
                  f"acme's prompt vs one nobody sent: shared cache {1000 * p['shared_hit']:.2f} vs "
                  f"{1000 * p['shared_miss']:.2f} ms (a hit: beta learns what acme sent); salted keys "
                  f"{1000 * p['salted_hit']:.2f} vs {1000 * p['salted_miss']:.2f} ms (no difference)")
    hits = p["your_cache_hits"]
    verdict = "no channel" if hits == 0 else "a leak: one tenant hit another tenant's blocks"
    console.print("your TenantPrefixCache: " + ("not implemented yet (level 3)" if hits is None else
                  f"beta's probe hits {hits} of {p['probe_blocks']} blocks ({verdict})"))


__all__ = ["load", "intercept", "to_dict", "render", "classify", "with_tenants", "gateway_refusals", "run_intercepted",
           "side_channel", "InterceptedRun"]
