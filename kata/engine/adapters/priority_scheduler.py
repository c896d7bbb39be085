"""Loader for the priority-scheduler kata: a learner's level-2 policy as the engine's scheduler policy.

    policy = load("workspace/priority_scheduler.py")
    LLMEngine(config, scheduler_policy=policy).run(trace)

The kata's level 1 and 2 define two decision functions, and they map onto the two choices the
engine lets a SchedulerPolicy make (see kata/engine/policy.py):

    pick_next(waiting: list[Request]) -> Request
        becomes the waiting-queue order. The engine wants a sortable key per request; the key made
        here compares two requests by asking pick_next which of the pair goes first, so the queue
        follows the learner's order exactly, whatever it is based on.
    pick_victim(running: list[Request], incoming: Request) -> Request | None
        becomes the memory-preemption choice. In the engine a sequence is preempted because the KV
        pool ran out of blocks, not because an urgent request arrived; the learner's rule picks the
        least urgent running request when `incoming` is strictly more urgent than it, so the
        adapter passes a stand-in `incoming` one priority level above the least urgent running
        request (priority - 1; -1 when all run at priority 0).

Each engine request (a RequestView) is shown to the learner's code as the kata's own
`Request(id, arrival, priority, duration)`: id = seq_id, arrival = arrival_time in whole
microseconds (the kata's times are ints), priority as is, duration = max_tokens.

Left out: levels 3 and 4 of the kata (checkpoint cost and aging belong to the engine's own
mechanics and to the kata's simulation, not to this plug-in point).
"""

from __future__ import annotations

from functools import total_ordering
from pathlib import Path

from kata.engine.adapters import import_learner_module
from kata.engine.policy import PolicyError, RequestView

MODULE_NAME = "priority_scheduler_plugin"  # the learner's file is imported under this name
MICROSECONDS = 1_000_000


@total_ordering
class _Key:
    """A waiting-queue key that orders two requests by asking the learner's pick_next."""

    __slots__ = ("request", "policy")

    def __init__(self, request, policy: LearnerSchedulerPolicy) -> None:
        self.request = request  # the learner module's Request
        self.policy = policy

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.request.id == self.request.id

    def __lt__(self, other: _Key) -> bool:
        if other.request.id == self.request.id:
            return False
        first = self.policy.call("pick_next", [self.request, other.request])
        if first is self.request or first == self.request:
            return True
        if first is other.request or first == other.request:
            return False
        raise PolicyError(f"pick_next([{self.request!r}, {other.request!r}]) returned {first!r}, "
                          "which is neither of them")

    def __hash__(self) -> int:
        return hash(self.request.id)

    def __repr__(self) -> str:
        return f"_Key({self.request!r})"


class LearnerSchedulerPolicy:
    """The engine's SchedulerPolicy (key, pick_victim) backed by a learner's kata module."""

    def __init__(self, module, path: Path) -> None:
        self.module = module
        self.name = f"priority-scheduler: {path.name}"

    # --- translation ---------------------------------------------------------------------

    def request(self, view: RequestView):
        """The kata's Request for an engine request. Example: RequestView(seq_id=3,
        arrival_time=0.25, priority=1, max_tokens=40, ...) -> Request(3, 250000, 1, 40)."""
        return self.module.Request(view.seq_id, round(view.arrival_time * MICROSECONDS),
                                   view.priority, view.max_tokens)

    def call(self, name: str, *args):
        """Call the learner's function; anything it raises becomes a PolicyError naming it."""
        try:
            return getattr(self.module, name)(*args)
        except NotImplementedError:
            raise PolicyError(f"{name}() is not implemented yet in {self.name.split(': ')[1]} "
                              "(levels 1 and 2 of the priority-scheduler kata)") from None
        except PolicyError:
            raise
        except Exception as exc:
            raise PolicyError(f"{name}() raised {type(exc).__name__}: {exc}") from exc

    # --- the SchedulerPolicy protocol --------------------------------------------------------

    def key(self, request: RequestView) -> _Key:
        return _Key(self.request(request), self)

    def pick_victim(self, running: list[RequestView]) -> int:
        # Ask "which running request would a more urgent arrival preempt?" with valid requests:
        # every running priority shifted up by one (their order is unchanged) and an incoming
        # request of priority 0 with an unused id, so it outranks all of them.
        requests = []
        for v in running:
            r = self.request(v)
            requests.append(self.module.Request(r.id, r.arrival, r.priority + 1, r.duration))
        incoming = self.module.Request(max(r.id for r in requests) + 1, 0, 0, 0)
        victim = self.call("pick_victim", requests, incoming)
        if victim is None:
            raise PolicyError("pick_victim(running, a request more urgent than all of them) "
                              "returned None; expected the least urgent running request")
        for r in requests:
            if victim is r or victim == r:
                return r.id
        raise PolicyError(f"pick_victim returned {victim!r}, which is not one of the running "
                          "requests it was given")


def _import(path: Path):
    return import_learner_module(path, MODULE_NAME, "priority-scheduler")


def load(path: str | Path) -> LearnerSchedulerPolicy:
    """Import the learner's priority_scheduler.py and wrap its level-2 policy for the engine.

    Raises PolicyError (one line, saying what to do) when the file is missing, does not import,
    lacks Request / pick_next / pick_victim, or has not implemented them yet.
    """
    path = Path(path)
    module = _import(path)
    missing = [name for name in ("Request", "pick_next", "pick_victim")
               if not callable(getattr(module, name, None))]
    if missing:
        raise PolicyError(f"{path.name} has no {', '.join(missing)}: the engine plugs in the "
                          "kata's level-1 pick_next and level-2 pick_victim")
    policy = LearnerSchedulerPolicy(module, path)
    # a quick trial on two requests, so that an unfinished file fails now with a clear message
    # rather than in the middle of a run
    a = RequestView(0, "a", 0.0, 1, 8, 0, 8, 0, 0)
    b = RequestView(1, "b", 0.0, 0, 8, 0, 8, 0, 0)
    policy.key(a) < policy.key(b)  # noqa: B015 - called for its checks
    policy.pick_victim([a, b])
    return policy


__all__ = ["load", "LearnerSchedulerPolicy"]
