"""Hidden suite of `tp-placement`, level 4: TP x PP x DP."""

from __future__ import annotations

from fractions import Fraction as F

from hypothesis import given
from hypothesis import strategies as st
from tp_placement_oracle import LINKS, o_best_plan, o_fits, o_plans, o_step

from kata.checks import check, check_fraction, check_raises, graded, property_settings
from kata.strict import same

PROPERTY = property_settings(40)
JOB68B = (80, 856_000_000, 8192, 4 * 2**20, 8, 16, 80 * 10**9, 989 * 10**12)


def step(impl, cluster, job, plan, spec=LINKS):
    return impl.step_time(impl.Cluster(*cluster), impl.Links(*spec), impl.Job(*job), *plan)


def best(impl, cluster, job, spec=LINKS):
    return impl.best_plan(impl.Cluster(*cluster), impl.Links(*spec), impl.Job(*job))


# --- the prompt, and one rule at a time --------------------------------------------------


@graded(4, 2, "the prompt's example: pure DP is fastest but does not fit; (8, 2, 2) wins")
def test_prompt_example(impl):
    got = best(impl, (4, 8), JOB68B)
    check(got, (8, 2, 2), "best_plan(Cluster(4, 8), .., the 68B job)")
    assert all(type(x) is int for x in got), f"best_plan returned {got!r}: ints expected"
    check_fraction(step(impl, (4, 8), JOB68B, (8, 2, 2)), F(230350732796041, 2781562500000),
                   "step_time(.., 8, 2, 2)")
    check_fraction(step(impl, (4, 8), JOB68B, (1, 1, 32)), o_step(4, 8, LINKS, JOB68B, (1, 1, 32)),
                   "step_time(.., 1, 1, 32)")


@graded(4, 1, "with tp = 1 and dp = 1 there is no communication: the step is compute times the bubble")
def test_no_communication(impl):
    job = (6, 1000, 64, 12, 3, 2, 10**9, 10**6)
    want = F(6 * 6000 * 12, 3 * 10**6) * F(3 + 3 - 1, 3)
    check_fraction(step(impl, (1, 3), job, (1, 3, 1)), want, "step_time(Cluster(1, 3), .., 1, 3, 1)")


@graded(4, 1, "the bubble is (pp + microbatches - 1) / microbatches: with one micro-batch, pp times the compute")
def test_bubble_with_one_microbatch(impl):
    job = (4, 500, 8, 4, 1, 2, 10**9, 10**5)
    check_fraction(step(impl, (1, 4), job, (1, 4, 1)), F(6 * 2000 * 4, 4 * 10**5) * 4,
                   "step_time(Cluster(1, 4), .., 1, 4, 1) with one micro-batch")
    for plan in ((1, 2, 2), (2, 2, 1), (4, 1, 1)):
        check_fraction(step(impl, (1, 4), job, plan), o_step(1, 4, LINKS, job, plan), f"step_time(.., {plan})")


@graded(4, 1, "TP all-reduces 4 times per layer of a stage, on (tokens / dp) * hidden * 2 bytes")
def test_tp_comm(impl):
    job = (8, 1000, 16, 8, 2, 1, 10**9, 10**9)
    for plan in ((2, 1, 4), (2, 2, 2), (4, 2, 1), (8, 1, 1)):
        check_fraction(step(impl, (1, 8), job, plan), o_step(1, 8, LINKS, job, plan), f"step_time(Cluster(1, 8), .., {plan})")


@graded(4, 1, "DP gradient bytes are ceil(2 * P / (tp * pp)): rounded up, not down, when they do not divide")
def test_gradient_bytes_round_up(impl):
    job = (1, 7, 4, 4, 1, 1, 10**9, 10**9)  # P = 7; tp * pp = 2 -> 7 bytes; tp * pp = 1 -> 14
    plan = (2, 1, 2)
    check_fraction(step(impl, (1, 4), job, plan), o_step(1, 4, LINKS, job, plan), "step_time(.., 2, 1, 2)")
    job = (1, 5, 4, 4, 1, 1, 10**9, 10**9)  # 2 * 5 / 4 = 2.5 -> 3 bytes
    plan = (4, 1, 2)
    check_fraction(step(impl, (2, 4), job, plan), o_step(2, 4, LINKS, job, plan), "step_time(Cluster(2, 4), .., 4, 1, 2)")


@graded(4, 1, "DP gradient bytes are an exact integer ceiling past 2**53, where a float division loses the last byte")
def test_gradient_bytes_exact_past_2_53(impl):
    for cluster, params, plan in (((1, 4), 2**53 + 1, (2, 1, 2)), ((2, 4), 2**54 + 1, (4, 1, 2)), ((2, 4), 10**18 + 1, (4, 1, 2))):
        job = (1, params, 4, 4, 1, 1, 10**9, 10**9)
        check_fraction(step(impl, cluster, job, plan), o_step(*cluster, LINKS, job, plan),
                       f"step_time(Cluster{cluster}, .., Job{job}, {plan})")


@graded(4, 1, "the DP ring is GPUs 0, tp*pp, 2*tp*pp, ...: it crosses domains (network) unless it fits in one")
def test_dp_ring_crosses_domains(impl):
    job = (2, 10**6, 32, 16, 4, 1, 10**9, 10**12)
    for cluster, plan in (((2, 4), (1, 1, 8)), ((2, 4), (4, 2, 1)), ((2, 4), (2, 1, 4)), ((1, 8), (1, 1, 8))):
        check_fraction(step(impl, cluster, job, plan), o_step(*cluster, LINKS, job, plan), f"step_time(Cluster{cluster}, .., {plan})")
    assert o_step(2, 4, LINKS, job, (1, 1, 8)) > o_step(1, 8, LINKS, job, (1, 1, 8))  # the network costs


@graded(4, 1, "exactly full memory fits; one byte short does not, and the next best plan wins")
def test_memory_boundary(impl):
    job = [4, 1000, 8, 8, 2, 10, 40_000, 10**6]  # 40,000 bytes of model: (1, 1, n) fits exactly
    assert o_fits(job, (1, 1, 4))
    check(best(impl, (1, 4), job), o_best_plan(1, 4, LINKS, job), "best_plan(Cluster(1, 4), gpu_memory exactly full)")
    job[6] = 39_999
    want = o_best_plan(1, 4, LINKS, job)
    assert want is not None and want[0] * want[1] > 1
    check(best(impl, (1, 4), job), want, "best_plan(Cluster(1, 4), gpu_memory one byte short)")


@graded(4, 1, "nothing fits: None")
def test_nothing_fits(impl):
    check(best(impl, (1, 4), (4, 1000, 8, 8, 2, 10, 9_999, 10**6)), None, "best_plan(.., a model 4x too big for the cluster)")


@graded(4, 1, "a tie goes to the smaller tp, even with the larger pp")
def test_tie_smaller_tp_first(impl):
    spec, job = (1, 1, 0, 0), (2, 16, 1, 2, 2, 1, 10**9, 3)
    assert same(o_step(1, 2, spec, job, (1, 2, 1)), o_step(1, 2, spec, job, (2, 1, 1)))  # a tie
    check(best(impl, (1, 2), job, spec), (1, 2, 1), "best_plan(Cluster(1, 2), .., tie between (1, 2, 1) and (2, 1, 1))")


@graded(4, 1, "a tie with the same tp goes to the smaller pp")
def test_tie_smaller_pp(impl):
    spec, job = (2, 2, 0, 0), (2, 8, 64, 2, 2, 1, 10**9, 3)
    assert same(o_step(1, 2, spec, job, (1, 1, 2)), o_step(1, 2, spec, job, (1, 2, 1)))  # a tie
    check(best(impl, (1, 2), job, spec), (1, 1, 2), "best_plan(Cluster(1, 2), .., tie between (1, 1, 2) and (1, 2, 1))")


@graded(4, 1, "exact beyond 2**53: a float anywhere rounds the step time")
def test_exact_large(impl):
    job = (96, 2_000_000_001, 12288, 16 * 2**20 + 64, 16, 18, 141 * 10**9, 989 * 10**12)
    for plan in ((8, 4, 4), (8, 2, 8), (4, 8, 4)):
        check_fraction(step(impl, (16, 8), job, plan), o_step(16, 8, LINKS, job, plan), f"step_time(Cluster(16, 8), 96-layer job, {plan})")
    check(best(impl, (16, 8), job), o_best_plan(16, 8, LINKS, job), "best_plan(Cluster(16, 8), 96-layer job)")


@graded(4, 1, "a plan is valid only if tp*pp*dp is every GPU, tp divides domain_size, pp divides num_layers, dp divides tokens")
def test_invalid_plans(impl):
    job = (6, 100, 8, 6, 2, 1, 10**9, 10**6)
    for plan, why in (((8, 1, 1), "tp across domains"), ((3, 1, 4), "tp = 3 does not divide 4, and 12 GPUs of 16"),
                      ((1, 4, 4), "pp = 4 does not divide 6 layers"), ((1, 1, 16), "dp = 16 does not divide 6 tokens"),
                      ((2, 2, 2), "8 GPUs of 16"), ((4, 2, 3), "24 GPUs of 16")):
        check_raises(lambda: step(impl, (4, 4), job, plan), "plan", f"step_time(Cluster(4, 4), .., {plan}): {why}")
    check(best(impl, (4, 4), job), o_best_plan(4, 4, LINKS, job), "best_plan(Cluster(4, 4), 6 layers, 6 tokens)")
    # 4 GPUs fit in a domain of 6, but 4 does not divide 6: the second TP group would cross
    check_raises(lambda: step(impl, (2, 6), job, (4, 1, 3)), "plan", "step_time(Cluster(2, 6), .., 4, 1, 3)")
    big = (6, 10**9, 8, 12, 2, 16, 25 * 10**9, 10**15)  # only tp * pp >= 4 fits; (4, 3, 1) would win
    want = o_best_plan(2, 6, LINKS, big)
    assert want is not None and want[0] in (1, 2, 3, 6)
    check(best(impl, (2, 6), big), want, "best_plan(Cluster(2, 6), a model that needs tp * pp >= 4)")


@graded(4, 1, "a plan must use every GPU: down must be empty")
def test_down_rejected(impl):
    c = impl.Cluster(2, 4, frozenset({3}))
    check_raises(lambda: impl.best_plan(c, impl.Links(*LINKS), impl.Job(*JOB68B)), "down", "best_plan(a cluster with GPU 3 down)")
    check_raises(lambda: impl.step_time(c, impl.Links(*LINKS), impl.Job(*JOB68B), 4, 1, 2), "down", "step_time(a cluster with GPU 3 down)")


@graded(4, 1, "Job fields: ints >= 1 and not bools, named in declaration order; a non-Job names job")
def test_job_fields(impl):
    c, L = impl.Cluster(1, 2), impl.Links(*LINKS)
    names = ("num_layers", "layer_params", "hidden", "tokens", "microbatches", "bytes_per_param", "gpu_memory", "gpu_flops")
    for i, name in enumerate(names):
        for bad in (0, True, 2.0, None):
            job = list(JOB68B)
            job[i] = bad
            if i + 1 < len(job):
                job[i + 1] = 0  # a later field is also bad: the earlier one is named
            check_raises(lambda: impl.best_plan(c, L, impl.Job(*job)), name, f"best_plan(.., Job with {name}={bad!r})")
    check_raises(lambda: impl.best_plan(c, L, JOB68B), "job", "best_plan(.., a tuple instead of a Job)")
    check_raises(lambda: impl.step_time(c, L, None, 1, 1, 2), "job", "step_time(.., None, 1, 1, 2)")


@graded(4, 1, "tp, pp, dp: ints >= 1 (not bools, not floats), each named, checked after job and before the plan")
def test_plan_arguments(impl):
    c, L, job = impl.Cluster(1, 2), impl.Links(*LINKS), impl.Job(2, 10, 4, 2, 1, 1, 10**9, 10**6)
    for plan, name in (((0, 1, 2), "tp"), ((True, 1, 2), "tp"), ((1.0, 1, 2), "tp"), ((1, 0, 2), "pp"),
                       ((1, 2.0, 1), "pp"), ((1, 1, True), "dp"), ((1, 1, -2), "dp"), ((0, 0, 0), "tp")):
        check_raises(lambda: impl.step_time(c, L, job, *plan), name, f"step_time(Cluster(1, 2), .., {plan})")
    check_raises(lambda: impl.step_time(c, L, impl.Job(0, 10, 4, 2, 1, 1, 10**9, 10**6), 0, 1, 2), "num_layers",
                 "step_time(.., Job(num_layers=0), tp=0)")


@graded(4, 1, "arguments are checked in order: cluster, links, job")
def test_check_order(impl):
    bad_links = impl.Links(0, 1, 0, 0)
    check_raises(lambda: impl.best_plan(impl.Cluster(0, 2), bad_links, None), "num_domains", "best_plan(Cluster(0, 2), bad links, None)")
    check_raises(lambda: impl.best_plan(impl.Cluster(1, 2), bad_links, None), "nvlink_bandwidth", "best_plan(.., bad links, None)")
    check_raises(lambda: impl.step_time(impl.Cluster(1, 2), bad_links, None, 0, 0, 0), "nvlink_bandwidth", "step_time(.., bad links, ..)")


# --- properties against the oracle --------------------------------------------------------


@st.composite
def setups(draw):
    num_domains, size = draw(st.integers(1, 3)), draw(st.sampled_from([1, 2, 3, 4, 6, 8]))
    job = (draw(st.sampled_from([1, 2, 3, 4, 6, 8])), draw(st.integers(1, 10**9)), draw(st.integers(1, 2**14)),
           draw(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24])), draw(st.integers(1, 8)), draw(st.integers(1, 20)),
           draw(st.integers(1, 10**11)), draw(st.integers(1, 10**15)))
    spec = (draw(st.integers(1, 10**12)), draw(st.integers(1, 10**12)),
            draw(st.fractions(0, F(1, 1000), max_denominator=10**6)), draw(st.fractions(0, F(1, 1000), max_denominator=10**6)))
    return (num_domains, size), job, spec


@graded(4, 2, "property: step_time of every valid plan equals a literal reading of the prompt")
@PROPERTY
@given(setup=setups(), pick=st.integers(0, 10**6))
def test_step_time_matches_oracle(impl, setup, pick):
    cluster, job, spec = setup
    plans = o_plans(*cluster, job)
    if not plans:
        return
    plan = plans[pick % len(plans)]
    check_fraction(step(impl, cluster, job, plan, spec), o_step(*cluster, spec, job, plan),
                   f"step_time(Cluster{cluster}, Links{spec}, Job{job}, {plan})")


@graded(4, 2, "property: best_plan equals the oracle's on random clusters and jobs")
@PROPERTY
@given(setup=setups())
def test_best_plan_matches_oracle(impl, setup):
    cluster, job, spec = setup
    got = best(impl, cluster, job, spec)
    want = o_best_plan(*cluster, spec, job)
    check(got, want, f"best_plan(Cluster{cluster}, Links{spec}, Job{job})")
    if got is not None:
        assert type(got) is tuple and all(type(x) is int for x in got), (
            f"best_plan returned {got!r}, expected a tuple of three ints")
