"""Hidden suite, level 1: replicas, placement by exact load, waiting, completion, status."""


from hypothesis import example, given
from replica_router_oracle import oracle, queries_up_to

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(60)
BIG = 10**18


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 1, 3, "the prompt's level-1 example", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 1 -> true
        ADD_REPLICA r1 5 -> false
        ROUTE a acme -> r1
        ROUTE b acme -> r2
        ROUTE c beta -> r1
        ROUTE d beta -> queued
        ROUTE a beta -> ''
        COMPLETE b -> true
        STATUS d -> r2
        COMPLETE b -> false
        STATUS b -> ''
    """),
    case("duplicate_replica_keeps_first_capacity", 1, 2,
         "ADD_REPLICA with an id already taken returns false and keeps the first capacity", """
        ADD_REPLICA r1 1 -> true
        ADD_REPLICA r1 5 -> false
        ROUTE a t -> r1
        ROUTE b t -> queued   # still one slot
    """),
    case("capacity_zero_rejected", 1, 2, "capacity 0 is rejected (capacity < 1), and the id stays free", """
        ADD_REPLICA r1 0 -> false
        ROUTE a t -> queued
        ADD_REPLICA r1 1 -> true
        STATUS a -> r1
    """),
    case("negative_capacity_rejected", 1, 1, "a negative capacity is rejected", """
        ADD_REPLICA r1 -3 -> false
        ROUTE a t -> queued
    """),
    case("capacity_one_accepted", 1, 1, "capacity 1, the smallest allowed, is accepted", """
        ADD_REPLICA solo 1 -> true
        ROUTE a t -> solo
        ROUTE b t -> queued
    """),
    case("route_without_replicas_waits", 1, 1, "ROUTE with no replica at all waits", """
        ROUTE a t -> queued
        STATUS a -> queued
        ROUTE b u -> queued
    """),
    case("load_is_a_ratio_not_a_count", 1, 3, "least loaded is running/capacity, not the fewest running requests", """
        ADD_REPLICA big 10 -> true
        ADD_REPLICA small 2 -> true
        ROUTE a t -> big      # 0/10 and 0/2: tie, big < small
        ROUTE b t -> small    # 1/10 against 0/2
        ROUTE c t -> big      # 1/10 against 1/2
        ROUTE d t -> big      # 2/10 against 1/2: big has more requests but less load
    """),
    case("tie_goes_to_smallest_id_not_first_added", 1, 2,
         "equal loads go to the smallest id, not to the replica added first", """
        ADD_REPLICA r2 1 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> r2
    """),
    case("ids_compare_by_code_point", 1, 2, "ids compare by code point: r10 before r9, Z before a", """
        ADD_REPLICA r9 1 -> true
        ADD_REPLICA r10 1 -> true
        ADD_REPLICA a 1 -> true
        ADD_REPLICA Z 1 -> true
        ROUTE q1 t -> Z
        ROUTE q2 t -> a
        ROUTE q3 t -> r10
        ROUTE q4 t -> r9
    """),
    case("equal_fractions_tie", 1, 2,
         "equal loads with different capacities (1/2 and 2/4) tie, so the smaller id wins", """
        ADD_REPLICA x 4 -> true
        ADD_REPLICA w 2 -> true
        ROUTE a t -> w     # 0/4 and 0/2
        ROUTE b t -> x     # 0/4 against 1/2
        ROUTE c t -> x     # 1/4 against 1/2
        ROUTE d t -> w     # 2/4 equals 1/2: w < x
    """),
    case("full_replica_skipped", 1, 2, "a replica with running == capacity is full and skipped", """
        ADD_REPLICA a 1 -> true
        ADD_REPLICA b 3 -> true
        ROUTE q1 t -> a
        ROUTE q2 t -> b    # a is full (1/1), whatever its id
        ROUTE q3 t -> b
        ROUTE q4 t -> b
        ROUTE q5 t -> queued
    """),
    case("exact_load_past_float_precision", 1, 3,
         "loads compared exactly: 1/(10**18 - 1) is more than 1/10**18 (floats call them equal)", f"""
        ADD_REPLICA a {BIG - 1} -> true
        ADD_REPLICA b {BIG} -> true
        ROUTE q1 t -> a
        ROUTE q2 t -> b
        ROUTE q3 t -> b    # a: 1/(10**18 - 1) > b: 1/10**18
    """),
    case("huge_capacities", 1, 1, "capacities up to 10**18 are kept exactly", f"""
        ADD_REPLICA a {BIG} -> true
        ADD_REPLICA b {3 * BIG // 10} -> true
        ROUTE q1 t -> a
        ROUTE q2 t -> b
        ROUTE q3 t -> a    # 1/10**18 against 1/(3 * 10**17)
        ROUTE q4 t -> a    # 2/10**18 is still less
        ROUTE q5 t -> a    # 3/10**18 too
        ROUTE q6 t -> b    # 4/10**18 is more
    """),
    case("duplicate_running_id", 1, 2, "ROUTE with the id of a running request returns '' and changes nothing", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 2 -> true
        ROUTE a t -> r1
        ROUTE a u -> ''
        STATUS a -> r1
        ROUTE b t -> r2     # the refused ROUTE took no slot
        ROUTE c t -> r1
        ROUTE d t -> r2
        ROUTE e t -> queued
    """),
    case("duplicate_waiting_id", 1, 2,
         "ROUTE with the id of a waiting request returns '' and it still waits once, in its place", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        ROUTE c t -> queued
        ROUTE b t -> ''
        COMPLETE a -> true
        STATUS b -> r1
        STATUS c -> queued
        COMPLETE b -> true
        STATUS c -> r1
        COMPLETE c -> true
        ROUTE d t -> r1     # no second copy of b took the slot
    """),
    case("completed_id_reused", 1, 2, "the id of a completed request may be routed again, as a new request", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        COMPLETE a -> true
        ROUTE a u -> r1
        STATUS a -> r1
        COMPLETE a -> true
        STATUS a -> ''
    """),
    case("complete_unknown", 1, 1, "COMPLETE of an unknown request returns false", """
        COMPLETE a -> false
        ADD_REPLICA r1 1 -> true
        COMPLETE r1 -> false   # a replica id is not a request id
    """),
    case("complete_waiting_request", 1, 2, "COMPLETE of a waiting request returns false and it keeps waiting", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        COMPLETE b -> false
        STATUS b -> queued
        COMPLETE a -> true
        STATUS b -> r1
    """),
    case("complete_twice", 1, 1, "a second COMPLETE of the same request returns false", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        COMPLETE a -> true
        COMPLETE a -> false
        ROUTE c t -> r1
        ROUTE d t -> queued    # the second COMPLETE freed nothing
    """),
    case("fifo_across_tenants", 1, 3,
         "a freed slot goes to the earliest-arrived waiting request, whatever its id or tenant", """
        ADD_REPLICA r1 1 -> true
        ROUTE z t1 -> r1
        ROUTE y t2 -> queued
        ROUTE b t1 -> queued
        ROUTE c t2 -> queued
        ROUTE a t3 -> queued
        COMPLETE z -> true
        STATUS y -> r1
        COMPLETE y -> true
        STATUS b -> r1
        STATUS c -> queued
        COMPLETE b -> true
        STATUS c -> r1
        STATUS a -> queued
        COMPLETE c -> true
        STATUS a -> r1
    """),
    case("add_replica_admits_waiting", 1, 2,
         "ADD_REPLICA places waiting requests on the new replica, earliest first, up to its capacity", """
        ROUTE a t -> queued
        ROUTE b t -> queued
        ROUTE c t -> queued
        ADD_REPLICA r1 2 -> true
        STATUS a -> r1
        STATUS b -> r1
        STATUS c -> queued
        ADD_REPLICA r0 5 -> true
        STATUS c -> r0
    """),
    case("admission_uses_placement_rule", 1, 2,
         "waiting requests go to the least-loaded replica with a free slot, one by one", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        ROUTE c t -> queued
        ROUTE d t -> queued
        ADD_REPLICA r2 2 -> true     # b and c go to r2
        STATUS c -> r2
        COMPLETE a -> true           # d takes r1's slot
        STATUS d -> r1
        COMPLETE b -> true
        ROUTE e t -> r2
    """),
    case("status_inactive", 1, 1, "STATUS of an unknown or completed request is ''", """
        STATUS a -> ''
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        COMPLETE a -> true
        STATUS a -> ''
        STATUS r1 -> ''
    """),
    case("namespaces_are_separate", 1, 1,
         "replica ids, request ids and tenant names are separate: a request may be called like a replica", """
        ADD_REPLICA r1 2 -> true
        ROUTE r1 r1 -> r1
        ROUTE r2 r1 -> r1
        STATUS r1 -> r1
        COMPLETE r1 -> true
        STATUS r2 -> r1
    """),
)


@graded(1, 1, "no queries: an empty list")
def test_no_queries(impl):
    run_queries(impl, [], [])


@graded(1, 2, "solution does not modify the queries it is given")
def test_queries_not_modified(impl):
    queries = [["ADD_REPLICA", "r1", "1"], ["ROUTE", "a", "t"], ["ROUTE", "b", "t"],
               ["COMPLETE", "a"], ["STATUS", "b"]]
    run_queries(impl, queries, ["true", "r1", "queued", "true", "r1"], as_given=True)


@graded(1, 2, "each call starts from an empty router: nothing survives between calls")
def test_calls_are_independent(impl):
    first = [["ADD_REPLICA", "r1", "1"], ["ROUTE", "a", "t"], ["ROUTE", "b", "t"]]
    run_queries(impl, first, ["true", "r1", "queued"])
    run_queries(impl, first, ["true", "r1", "queued"])
    run_queries(impl, [["ROUTE", "a", "t"], ["STATUS", "b"]], ["queued", ""])


@graded(1, 2, "a long run: many completions and arrivals keep the order and the loads right")
def test_long_run(impl):
    queries = [["ADD_REPLICA", "r2", "3"], ["ADD_REPLICA", "r1", "2"]]
    queries += [["ROUTE", f"q{i}", f"t{i % 3}"] for i in range(12)]
    queries += [["COMPLETE", f"q{i}"] for i in range(0, 12, 2)]
    queries += [["STATUS", f"q{i}"] for i in range(12)]
    queries += [["ROUTE", f"q{i}", "t"] for i in range(0, 6)]
    run_queries(impl, queries, oracle=oracle)


@graded(1, 8, "random level-1 query streams match a slow oracle")
@PROPERTY
@given(queries=queries_up_to(1))
@example(queries=[["ADD_REPLICA", "r2", "2"], ["ADD_REPLICA", "r10", "1"], ["ROUTE", "a", "t1"],
                  ["ROUTE", "b", "t2"], ["ROUTE", "c", "t1"], ["ROUTE", "d", "t1"],
                  ["COMPLETE", "b"], ["STATUS", "d"], ["COMPLETE", "a"], ["STATUS", "d"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
