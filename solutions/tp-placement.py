"""Reference solution for the kata `tp-placement`.

Level 1 places tensor-parallel groups on a cluster of NVLink domains with some GPUs down: one group
at a time, inside one domain whenever a domain has room (best fit), else across the fewest domains.
Level 2 prices a group's ring all-reduce, where the slowest link of the ring sets the pace, and
the per-layer communication of tensor parallelism. Level 3 diagnoses slow groups from telemetry by
rules applied in a fixed order of precedence. Level 4 splits a model over TP x PP x DP: the
fastest plan that fits in memory, pricing both rings with level 2. Level 5 investigates an
incident from evidence: rank maps before and after a node replacement and per-rank measurements,
then proposes the remap that brings every TP group back inside one domain restarting the fewest ranks.

Times are fractions.Fraction seconds: exact, so two placements that cost the same are a tie that
the rules decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from fractions import Fraction
from numbers import Rational

# --- level 1: placement --------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    num_domains: int  # NVLink domains (nodes), >= 1
    domain_size: int  # GPUs per domain, >= 1
    down: frozenset = field(default_factory=frozenset)  # ids of GPUs that are down

    @property
    def num_gpus(self) -> int:
        return self.num_domains * self.domain_size


def _check_int(name: str, value, minimum: int) -> None:
    if type(value) is not int or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_cluster(cluster: Cluster) -> None:
    _check_int("num_domains", cluster.num_domains, 1)
    _check_int("domain_size", cluster.domain_size, 1)
    down = cluster.down
    if not isinstance(down, (set, frozenset)) or any(
            type(g) is not int or not 0 <= g < cluster.num_gpus for g in down):
        raise ValueError(f"down must be a set of GPU ids in 0..{cluster.num_gpus - 1}, got {down!r}")


def _check_group(cluster: Cluster, group, name: str = "group") -> None:
    if (not isinstance(group, list) or not group
            or any(type(g) is not int or not 0 <= g < cluster.num_gpus for g in group)
            or len(set(group)) != len(group)):
        raise ValueError(f"{name}: a group must be a non-empty list of distinct GPU ids, got {group!r}")


def crossings(cluster: Cluster, group: list[int]) -> int:
    """Domains the group spans, minus one: 0 for a group inside one NVLink domain."""
    _check_cluster(cluster)
    _check_group(cluster, group)
    return len({g // cluster.domain_size for g in group}) - 1


def place_groups(cluster: Cluster, t: int, num_groups: int) -> list[list[int]]:
    _check_cluster(cluster)
    _check_int("t", t, 1)
    _check_int("num_groups", num_groups, 0)
    size = cluster.domain_size
    free = [[g for g in range(d * size, (d + 1) * size) if g not in cluster.down]
            for d in range(cluster.num_domains)]  # each ascending
    if t * num_groups > sum(len(f) for f in free):
        raise ValueError(f"num_groups: {num_groups} groups of {t} need {t * num_groups} GPUs, "
                         f"only {sum(len(f) for f in free)} are up")
    groups = []
    for _ in range(num_groups):
        fits = [d for d in range(len(free)) if len(free[d]) >= t]
        if fits:
            # best fit: the tightest domain that holds the group keeps roomier ones for later
            d = min(fits, key=lambda d: (len(free[d]), d))
            group, free[d] = free[d][:t], free[d][t:]
        else:
            # no domain holds it: the fullest domains first span the fewest domains
            group = []
            for d in sorted(range(len(free)), key=lambda d: (-len(free[d]), d)):
                take = min(t - len(group), len(free[d]))
                group += free[d][:take]
                free[d] = free[d][take:]
                if len(group) == t:
                    break
        groups.append(sorted(group))
    return groups


# --- level 2: what the ring costs --------------------------------------------------------


@dataclass(frozen=True)
class Links:
    nvlink_bandwidth: int  # bytes/s between two GPUs of one domain, >= 1
    network_bandwidth: int  # bytes/s between GPUs of different domains, >= 1
    nvlink_latency: Fraction  # seconds per step on an NVLink hop, rational >= 0
    network_latency: Fraction  # seconds per step on a network hop, rational >= 0


def _check_rational(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, Rational) or value < 0:
        raise ValueError(f"{name} must be a Fraction or an int >= 0, got {value!r}")


def _check_links(links: Links) -> None:
    _check_int("nvlink_bandwidth", links.nvlink_bandwidth, 1)
    _check_int("network_bandwidth", links.network_bandwidth, 1)
    _check_rational("nvlink_latency", links.nvlink_latency)
    _check_rational("network_latency", links.network_latency)


def _check_degraded(cluster: Cluster, degraded) -> None:
    if degraded is None:
        return
    if not isinstance(degraded, dict):
        raise ValueError(f"degraded must be a dict of GPU pair -> bandwidth, got {degraded!r}")
    for pair, bw in degraded.items():
        if (not isinstance(pair, frozenset) or len(pair) != 2
                or any(type(g) is not int or not 0 <= g < cluster.num_gpus for g in pair)):
            raise ValueError(f"degraded has a key that is not a pair of GPU ids: {pair!r}")
        _check_int("degraded", bw, 1)


def ring_links(group: list[int]) -> list[frozenset]:
    """The ring's links in ring order: ascending ids, then back from the last to the first."""
    ring = sorted(group)
    if len(ring) < 2:
        return []
    pairs = [frozenset((a, b)) for a, b in zip(ring, ring[1:])]
    if len(ring) > 2:  # two GPUs share one link both ways
        pairs.append(frozenset((ring[-1], ring[0])))
    return pairs


def _link(cluster: Cluster, links: Links, pair: frozenset, degraded) -> tuple[int, Fraction]:
    """(bandwidth, latency) of one link, after any degradation."""
    a, b = sorted(pair)
    same = a // cluster.domain_size == b // cluster.domain_size
    bw = links.nvlink_bandwidth if same else links.network_bandwidth
    latency = links.nvlink_latency if same else links.network_latency
    if degraded and pair in degraded:
        bw = degraded[pair]
    return bw, Fraction(latency)


def allreduce_time(cluster: Cluster, links: Links, group: list[int], num_bytes: int,
                   degraded: dict | None = None) -> Fraction:
    """Ring all-reduce of num_bytes: 2 (n - 1) steps, each moving num_bytes / n over every link at
    once, so the slowest link sets the pace and the slowest hop's latency is paid every step."""
    _check_cluster(cluster)
    _check_links(links)
    _check_group(cluster, group)
    _check_int("num_bytes", num_bytes, 0)
    _check_degraded(cluster, degraded)
    n = len(group)
    if n == 1:
        return Fraction(0)
    hops = [_link(cluster, links, pair, degraded) for pair in ring_links(group)]
    slowest = min(bw for bw, _ in hops)
    latency = max(lat for _, lat in hops)
    return Fraction(2 * (n - 1) * num_bytes, n * slowest) + 2 * (n - 1) * latency


def tp_layer_time(cluster: Cluster, links: Links, group: list[int], tokens: int, hidden: int,
                  dtype_bytes: int, degraded: dict | None = None) -> Fraction:
    """Megatron-style TP all-reduces the activations twice per layer (after attention, after the
    MLP): two all-reduces of tokens * hidden * dtype_bytes bytes."""
    _check_cluster(cluster)
    _check_links(links)
    _check_group(cluster, group)
    _check_int("tokens", tokens, 1)
    _check_int("hidden", hidden, 1)
    _check_int("dtype_bytes", dtype_bytes, 1)
    return 2 * allreduce_time(cluster, links, group, tokens * hidden * dtype_bytes, degraded)


def best_placement(cluster: Cluster, links: Links, placements: list, num_bytes: int,
                   degraded: dict | None = None) -> int:
    """Index of the placement whose slowest group all-reduces fastest (groups run at once, so a
    step waits for the slowest); the lowest index on a tie."""
    _check_cluster(cluster)
    _check_links(links)
    if not isinstance(placements, list) or not placements or any(
            not isinstance(p, list) or not p for p in placements):
        raise ValueError("placements must be a non-empty list of non-empty lists of groups")
    for placement in placements:
        for group in placement:
            _check_group(cluster, group, "placements")
    _check_int("num_bytes", num_bytes, 0)
    _check_degraded(cluster, degraded)
    costs = [max(allreduce_time(cluster, links, g, num_bytes, degraded) for g in p) for p in placements]
    return costs.index(min(costs))


# --- level 3: why is this group slow? ----------------------------------------------------


@dataclass(frozen=True)
class GPUStats:
    step_time: Fraction  # seconds per training step, rational > 0
    busy: Fraction  # fraction of the step the GPU computed, rational in [0, 1]


def diagnose(cluster: Cluster, links: Links, groups: list[list[int]], stats: dict,
             measured: dict) -> list[tuple[str, object]]:
    """One (cause, detail) per group, by the first rule that applies:

    1. ("data_loader", None): every GPU of the group is busy less than half its step.
    2. ("slow_link", pair): a ring link measured below half its nominal bandwidth; the pair
       whose ratio measured / nominal is the lowest (ties: the smaller sorted pair).
    3. ("cross_domain", crossings): the group spans more than one domain.
    4. ("throttled_gpu", gpu): a GPU computes (step_time * busy) more than 6/5 of the group's
       median compute time; the one computing longest (ties: the lowest id).
    5. ("healthy", None).
    """
    _check_cluster(cluster)
    _check_links(links)
    if not isinstance(groups, list):
        raise ValueError("groups must be a list of groups")
    for group in groups:
        _check_group(cluster, group, "groups")
    seen = [g for group in groups for g in group]
    if len(set(seen)) != len(seen):
        raise ValueError("groups must not share a GPU")
    if not isinstance(stats, dict) or any(g not in stats for g in seen):
        raise ValueError("stats must hold a GPUStats for every GPU of every group")
    for g in seen:
        s = stats[g]
        if (not isinstance(s, GPUStats) or isinstance(s.step_time, bool)
                or not isinstance(s.step_time, Rational) or s.step_time <= 0
                or isinstance(s.busy, bool) or not isinstance(s.busy, Rational) or not 0 <= s.busy <= 1):
            raise ValueError(f"stats[{g}] must be a GPUStats with step_time > 0 and busy in [0, 1]")
    if not isinstance(measured, dict):
        raise ValueError("measured must be a dict of GPU pair -> bytes/s")
    for group in groups:
        for pair in ring_links(group):
            bw = measured.get(pair)
            if type(bw) is not int or bw < 0:
                raise ValueError(f"measured must hold an int >= 0 for ring link {sorted(pair)}")

    out = []
    for group in groups:
        if all(stats[g].busy < Fraction(1, 2) for g in group):
            out.append(("data_loader", None))
            continue
        slow = []
        for pair in ring_links(group):
            nominal, _ = _link(cluster, links, pair, None)
            ratio = Fraction(measured[pair], nominal)
            if ratio < Fraction(1, 2):
                slow.append((ratio, sorted(pair)))
        if slow:
            out.append(("slow_link", min(slow)[1]))
            continue
        spans = crossings(cluster, group)
        if spans:
            out.append(("cross_domain", spans))
            continue
        compute = {g: stats[g].step_time * stats[g].busy for g in group}
        ordered = sorted(compute.values())
        n = len(ordered)
        median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
        worst = min(group, key=lambda g: (-compute[g], g))
        if compute[worst] > Fraction(6, 5) * median:
            out.append(("throttled_gpu", worst))
        else:
            out.append(("healthy", None))
    return out


# --- level 4: TP x PP x DP ----------------------------------------------------------------


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


def _check_job(job) -> None:
    if not isinstance(job, Job):
        raise ValueError(f"job must be a Job, got {job!r}")
    for name in ("num_layers", "layer_params", "hidden", "tokens", "microbatches",
                 "bytes_per_param", "gpu_memory", "gpu_flops"):
        _check_int(name, getattr(job, name), 1)


def _check_whole_cluster(cluster: Cluster) -> None:
    _check_cluster(cluster)
    if cluster.down:
        raise ValueError(f"down must be empty: a plan uses every GPU, got {set(cluster.down)}")


def _valid_plan(cluster: Cluster, job: Job, tp: int, pp: int, dp: int) -> bool:
    return (tp * pp * dp == cluster.num_gpus and cluster.domain_size % tp == 0
            and job.num_layers % pp == 0 and job.tokens % dp == 0)


def _fits(job: Job, tp: int, pp: int) -> bool:
    return job.num_layers * job.layer_params * job.bytes_per_param <= job.gpu_memory * tp * pp


def _step_time(cluster: Cluster, links: Links, job: Job, tp: int, pp: int, dp: int) -> Fraction:
    """Compute with the pipeline's bubble, TP's all-reduces inside a stage, DP's gradient ring."""
    params = job.num_layers * job.layer_params
    m = job.microbatches
    compute = Fraction(6 * params * job.tokens, cluster.num_gpus * job.gpu_flops)
    compute *= Fraction(pp + m - 1, m)
    activations = job.tokens // dp * job.hidden * 2
    tp_comm = 4 * (job.num_layers // pp) * allreduce_time(cluster, links, list(range(tp)),
                                                          activations)
    grads = -(-2 * params // (tp * pp))
    dp_comm = allreduce_time(cluster, links, [d * tp * pp for d in range(dp)], grads)
    return compute + tp_comm + dp_comm


def step_time(cluster: Cluster, links: Links, job: Job, tp: int, pp: int, dp: int) -> Fraction:
    """Seconds per training step of a (tp, pp, dp) plan; memory is not checked here."""
    _check_whole_cluster(cluster)
    _check_links(links)
    _check_job(job)
    _check_int("tp", tp, 1)
    _check_int("pp", pp, 1)
    _check_int("dp", dp, 1)
    if not _valid_plan(cluster, job, tp, pp, dp):
        raise ValueError(f"plan ({tp}, {pp}, {dp}) needs tp * pp * dp == {cluster.num_gpus}, tp "
                         "dividing domain_size, pp dividing num_layers and dp dividing tokens")
    return _step_time(cluster, links, job, tp, pp, dp)


def best_plan(cluster: Cluster, links: Links, job: Job) -> tuple[int, int, int] | None:
    """The valid plan that fits in memory with the shortest step; ties to the smaller tp, then
    the smaller pp. None when no plan fits."""
    _check_whole_cluster(cluster)
    _check_links(links)
    _check_job(job)
    n = cluster.num_gpus
    best = None
    for tp in range(1, n + 1):
        for pp in range(1, n // tp + 1):
            dp, rest = divmod(n, tp * pp)
            if rest or not _valid_plan(cluster, job, tp, pp, dp) or not _fits(job, tp, pp):
                continue
            key = (_step_time(cluster, links, job, tp, pp, dp), tp, pp)
            if best is None or key < best:
                best = key
    return None if best is None else (best[1], best[2], n // (best[1] * best[2]))


# --- level 5: debugging from evidence ------------------------------------------------------


@dataclass(frozen=True)
class Triage:
    crossing: list  # TP groups (by index) that cross a domain boundary in `after`, ascending
    moved: list  # ranks whose GPU changed from `before` to `after`, ascending
    suspects: list  # groups whose measured / nominal bus bandwidth is < 1/2, lowest ratio first
    slowest: int  # the group whose slowest rank has the longest step time (ties: the lower index)
    remap: dict | None  # rank -> GPU for every rank that restarts; None if no remap fixes every group
    tie: bool  # another choice of domains restarts as few ranks


def _check_rank_map(cluster: Cluster, ranks, name: str, size: int | None, tp: int) -> None:
    if (not isinstance(ranks, list) or not ranks or len(ranks) % tp
            or (size is not None and len(ranks) != size)
            or any(type(g) is not int or not 0 <= g < cluster.num_gpus for g in ranks)
            or len(set(ranks)) != len(ranks)):
        raise ValueError(f"{name} must be a list of distinct GPU ids, one per rank, in whole TP groups")


def _check_samples(busbw, step_times, size: int) -> None:
    if not isinstance(busbw, list) or len(busbw) != size or any(type(b) is not int or b < 0 for b in busbw):
        raise ValueError(f"busbw must be a list of {size} ints >= 0, one per rank")
    if (not isinstance(step_times, list) or len(step_times) != size
            or any(isinstance(t, bool) or not isinstance(t, Rational) or t <= 0 for t in step_times)):
        raise ValueError(f"step_times must be a list of {size} rationals > 0, one per rank")


def _remap(cluster: Cluster, tp: int, after: list[int], crossing: list[int]):
    """Move each crossing group whole into one domain; the other groups stay. Returns
    (remap, tie): the choice of domains with the fewest restarted ranks, ties to the
    lexicographically smallest tuple of domains, and whether another choice ties."""
    size = cluster.domain_size
    moving = {r for i in crossing for r in range(i * tp, (i + 1) * tp)}
    held = {after[r] for r in range(len(after)) if r not in moving}  # GPUs of groups that stay
    room = [sum(1 for g in range(d * size, (d + 1) * size) if g not in cluster.down and g not in held)
            for d in range(cluster.num_domains)]
    best, count = None, 0
    for choice in product(range(cluster.num_domains), repeat=len(crossing)):
        if any(choice.count(d) * tp > room[d] for d in set(choice)):
            continue
        cost = sum(1 for i, d in zip(crossing, choice)
                   for r in range(i * tp, (i + 1) * tp) if after[r] // size != d)
        if best is None or cost < best[0]:
            best, count = (cost, choice), 1
        elif cost == best[0]:
            count += 1
    if best is None:
        return None, False
    # ranks already in their group's domain stay; the others take the lowest free GPUs there
    stay = {r for i, d in zip(crossing, best[1]) for r in range(i * tp, (i + 1) * tp) if after[r] // size == d}
    used = held | {after[r] for r in stay}
    remap = {}
    for i, d in zip(crossing, best[1]):
        free = (g for g in range(d * size, (d + 1) * size) if g not in cluster.down and g not in used)
        for r in range(i * tp, (i + 1) * tp):
            if r not in stay:
                remap[r] = next(free)
                used.add(remap[r])
    return remap, count > 1


def triage(cluster: Cluster, links: Links, tp: int, before: list[int], after: list[int],
           busbw: list[int], step_times: list) -> Triage:
    """Read an incident's evidence. Rank r ran on GPU before[r] and now runs on after[r]; TP
    group i is ranks i*tp .. i*tp + tp - 1. busbw[r] is the bus bandwidth rank r measured for its
    group's all-reduce, step_times[r] its step time, both after the replacement."""
    _check_cluster(cluster)
    _check_links(links)
    _check_int("tp", tp, 2)
    _check_rank_map(cluster, before, "before", None, tp)
    _check_rank_map(cluster, after, "after", len(before), tp)
    if any(g in cluster.down for g in after):
        raise ValueError("after must not place a rank on a GPU that is down")
    _check_samples(busbw, step_times, len(before))

    groups = [after[i:i + tp] for i in range(0, len(after), tp)]
    crossing = [i for i, group in enumerate(groups) if crossings(cluster, group)]
    moved = [r for r in range(len(after)) if before[r] != after[r]]
    ratios = []
    for i, group in enumerate(groups):
        nominal = min(_link(cluster, links, pair, None)[0] for pair in ring_links(group))
        ratio = Fraction(min(busbw[i * tp:(i + 1) * tp]), nominal)  # its slowest rank, per nominal
        if ratio < Fraction(1, 2):
            ratios.append((ratio, i))
    slowest = max(range(len(groups)), key=lambda i: (max(step_times[i * tp:(i + 1) * tp]), -i))
    remap, tie = _remap(cluster, tp, after, crossing)
    return Triage(crossing, moved, [i for _, i in sorted(ratios)], slowest, remap, tie)
