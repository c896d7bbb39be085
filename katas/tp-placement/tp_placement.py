"""TP placement: TP groups on NVLink domains, their ring all-reduce, diagnosis, TP x PP x DP.

Read PROMPT.md for the rules. Times are fractions.Fraction seconds; a float is never accepted
where a rational is asked for. Invalid input raises ValueError whose message begins with the
offending field's or argument's name. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

# --- level 1: placement --------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    num_domains: int  # NVLink domains, an int >= 1
    domain_size: int  # GPUs per domain, an int >= 1
    down: frozenset = field(default_factory=frozenset)  # ids of GPUs that are down

    @property
    def num_gpus(self) -> int:
        return self.num_domains * self.domain_size


def crossings(cluster: Cluster, group: list[int]) -> int:
    """Distinct domains of the group, minus one. Example: Cluster(2, 8), [6, 7, 8, 9] -> 1."""
    # TODO
    raise NotImplementedError


def place_groups(cluster: Cluster, t: int, num_groups: int) -> list[list[int]]:
    """num_groups groups of t free GPUs, one at a time: best-fit domain, else the fullest first.

    Example: place_groups(Cluster(2, 8, frozenset({3, 9, 10})), 4, 3)
             -> [[8, 11, 12, 13], [0, 1, 2, 4], [5, 6, 7, 14]]
    """
    # TODO
    raise NotImplementedError


# --- level 2: what the ring costs (opens at level 2) ------------------------------------


@dataclass(frozen=True)
class Links:
    nvlink_bandwidth: int  # bytes/s between two GPUs of one domain, an int >= 1
    network_bandwidth: int  # bytes/s between GPUs of different domains, an int >= 1
    nvlink_latency: Fraction  # seconds per step on an NVLink hop, a rational >= 0
    network_latency: Fraction  # seconds per step on a network hop, a rational >= 0


def ring_links(group: list[int]) -> list[frozenset]:
    """The ring's links in order. Example: [5, 1, 3] -> [{1, 3}, {3, 5}, {5, 1}] (frozensets)."""
    # TODO
    raise NotImplementedError


def allreduce_time(cluster: Cluster, links: Links, group: list[int], num_bytes: int,
                   degraded: dict | None = None) -> Fraction:
    """2 (n - 1) num_bytes / (n * slowest bandwidth) + 2 (n - 1) * largest latency."""
    # TODO
    raise NotImplementedError


def tp_layer_time(cluster: Cluster, links: Links, group: list[int], tokens: int, hidden: int,
                  dtype_bytes: int, degraded: dict | None = None) -> Fraction:
    """Two all-reduces of tokens * hidden * dtype_bytes bytes."""
    # TODO
    raise NotImplementedError


def best_placement(cluster: Cluster, links: Links, placements: list, num_bytes: int,
                   degraded: dict | None = None) -> int:
    """The index of the placement whose slowest group is fastest; the lowest index on a tie."""
    # TODO
    raise NotImplementedError


# --- level 3: why is this group slow? (opens at level 3) ----------------------------------


@dataclass(frozen=True)
class GPUStats:
    step_time: Fraction  # seconds per training step, a rational > 0
    busy: Fraction  # fraction of the step spent computing, a rational in [0, 1]


def diagnose(cluster: Cluster, links: Links, groups: list[list[int]], stats: dict,
             measured: dict) -> list[tuple[str, object]]:
    """One (cause, detail) per group: data_loader, slow_link, cross_domain, throttled_gpu, healthy."""
    # TODO
    raise NotImplementedError


# --- level 4: TP x PP x DP (opens at level 4) ----------------------------------------------


@dataclass(frozen=True)
class Job:
    num_layers: int  # >= 1
    layer_params: int  # parameters per layer, >= 1
    hidden: int  # >= 1
    tokens: int  # tokens per training step (the global batch), >= 1
    microbatches: int  # pipeline micro-batches per step, >= 1
    bytes_per_param: int  # training memory per parameter (weights, grads, optimizer), >= 1
    gpu_memory: int  # bytes per GPU, >= 1
    gpu_flops: int  # FLOP/s per GPU, >= 1


def step_time(cluster: Cluster, links: Links, job: Job, tp: int, pp: int, dp: int) -> Fraction:
    """compute (with the pipeline bubble) + TP all-reduces + DP gradient all-reduce, in seconds."""
    # TODO
    raise NotImplementedError


def best_plan(cluster: Cluster, links: Links, job: Job) -> tuple[int, int, int] | None:
    """The valid (tp, pp, dp) that fits in memory with the shortest step; None if none fits."""
    # TODO
    raise NotImplementedError


# --- level 5: debugging from evidence (opens at level 5) -------------------------------------


@dataclass(frozen=True)
class Triage:
    crossing: list  # TP groups (by index) that cross a domain boundary in `after`, ascending
    moved: list  # ranks whose GPU changed from `before` to `after`, ascending
    suspects: list  # groups measuring below half their nominal bus bandwidth, worst first
    slowest: int  # the group with the longest step time (ties: the lower index)
    remap: dict | None  # rank -> new GPU for every rank that restarts; None if no fix is possible
    tie: bool  # whether another choice of domains restarts as few ranks


def triage(cluster: Cluster, links: Links, tp: int, before: list[int], after: list[int],
           busbw: list[int], step_times: list) -> Triage:
    """The incident from its evidence: crossing groups, moved ranks, suspects by measured /
    nominal bus bandwidth, the slowest group, and the remap restarting the fewest ranks.

    Example (PROMPT.md, level 5): ... -> Triage([3], [8, ..., 15], [1], 3, {12: 27}, False)
    """
    # TODO
    raise NotImplementedError
