"""Slow, obviously-correct oracles for levels 1 and 2, written from PROMPT.md alone.

They share no code with the reference solution and favour literal over fast: level 1 recomputes
every footprint from scratch; level 2 keeps real physical block ids per request and scans every
request every step. Results are plain tuples/dicts so the tests can compare field by field.
"""

from __future__ import annotations

import math

from kata.strict import same

# --- level 1 --------------------------------------------------------------------


def oracle_plan(requests, max_batch_size, max_batch_tokens, window):
    """-> (batches, rejected, waste); batches = [(ids, dispatch, reason, padded, useful)]."""
    indexed = list(enumerate(requests))
    indexed.sort(key=lambda pair: (pair[1].arrival, pair[0]))
    batches = []
    rejected = {}
    open_batch = []

    def footprint(members):
        return len(members) * max(m.prompt_tokens + m.output_tokens for m in members)

    def emit(dispatch, reason):
        ids = [m.id for m in open_batch]
        useful = sum(m.prompt_tokens + m.output_tokens for m in open_batch)
        batches.append((ids, dispatch, reason, footprint(open_batch), useful))
        open_batch.clear()

    for _, r in indexed:
        if r.prompt_tokens + r.output_tokens > max_batch_tokens:
            rejected[r.id] = "exceeds_batch_tokens"
            continue
        if open_batch:
            first = open_batch[0].arrival
            if not (r.arrival <= first + window):
                emit(first + window, "window")
            elif footprint(open_batch + [r]) > max_batch_tokens:
                emit(r.arrival, "budget")
        open_batch.append(r)
        if len(open_batch) >= max_batch_size:
            emit(r.arrival, "full")
    if open_batch:
        emit(open_batch[0].arrival + window, "window")
    waste = sum(b[3] - b[4] for b in batches)
    return batches, rejected, waste


# --- level 2 --------------------------------------------------------------------


class _Req:
    def __init__(self, r, order):
        self.r = r
        self.order = order  # position in arrival order
        self.table = []  # physical block ids, in order
        self.tokens = 0  # tokens in cache
        self.out = 0  # generated so far
        self.admitted_step = None
        self.first_token_step = None
        self.finish_step = None
        self.preemptions = 0
        self.admit_counter = None  # larger = admitted more recently


def oracle_continuous(requests, num_blocks, block_size, max_running):
    """-> (stats, rejected, steps, peak).

    stats: id -> (admitted_step, first_token_step, finish_step, num_preemptions)
    steps: [(step, admitted, preempted, finished, blocks_in_use)] for steps where something ran.
    """
    indexed = sorted(enumerate(requests), key=lambda p: (p[1].arrival, p[0]))
    rejected = {}
    reqs = []
    for order, (_, r) in enumerate(indexed):
        if math.ceil((r.prompt_tokens + r.output_tokens) / block_size) > num_blocks:
            rejected[r.id] = "exceeds_cache"
        else:
            reqs.append(_Req(r, order))

    free_ids = list(range(num_blocks))  # physical blocks not held by anyone
    queue = []  # waiting queue, front first
    running = []
    arrived = set()
    counter = 0
    steps = []
    step = 0
    done = 0
    # the largest step anything could still happen at, for the idle jump
    while done < len(reqs):
        # arrivals: scan every request (slow on purpose)
        for q in reqs:
            if q.r.arrival <= step and q.order not in arrived:
                arrived.add(q.order)
                queue.append(q)
        if not running and not queue:
            step = min(q.r.arrival for q in reqs if q.order not in arrived)
            continue

        preempted = []
        for q in sorted(running, key=lambda x: x.admit_counter):
            if q not in running:  # already preempted this step
                continue
            need = math.ceil((q.tokens + 1) / block_size)
            while len(q.table) < need and not free_ids:
                victim = max(running, key=lambda x: x.admit_counter)
                running.remove(victim)
                free_ids.extend(victim.table)
                victim.table = []
                victim.tokens = 0
                victim.preemptions += 1
                preempted.append(victim)
                if victim is q:
                    break
            if q not in running:
                continue
            while len(q.table) < need:
                q.table.append(free_ids.pop())
            q.tokens += 1
            q.out += 1
        # preempted go to the front; the last one preempted ends up first
        for victim in preempted:
            queue.insert(0, victim)

        admitted = []
        while queue and len(running) < max_running:
            q = queue[0]
            target = q.r.prompt_tokens + q.out + (1 if q.out < q.r.output_tokens else 0)
            need = math.ceil(target / block_size)
            if need > len(free_ids):
                break
            queue.pop(0)
            for _ in range(need):
                q.table.append(free_ids.pop())
            q.tokens = target
            if q.out < q.r.output_tokens:
                q.out += 1
            if q.admitted_step is None:
                q.admitted_step = step
                q.first_token_step = step
            counter += 1
            q.admit_counter = counter
            running.append(q)
            admitted.append(q.r.id)

        if running:
            in_use = num_blocks - len(free_ids)
            assert same(in_use, sum(len(q.table) for q in running))
            order = sorted(running, key=lambda x: x.admit_counter)
            finished = [q for q in order if q.out == q.r.output_tokens]
            for q in finished:
                free_ids.extend(q.table)
                q.table = []
                q.finish_step = step
                running.remove(q)
                done += 1
            steps.append(
                (step, admitted, [v.r.id for v in preempted], [q.r.id for q in finished], in_use)
            )
        step += 1

    stats = {
        q.r.id: (q.admitted_step, q.first_token_step, q.finish_step, q.preemptions) for q in reqs
    }
    peak = max((s[4] for s in steps), default=0)
    return stats, rejected, steps, peak
