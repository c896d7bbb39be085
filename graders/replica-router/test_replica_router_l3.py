"""Hidden suite, level 3: priorities, preemption and draining, with the queries of levels 1 and 2
mixed in."""

from hypothesis import example, given
from replica_router_oracle import oracle, queries_up_to

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(80)


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 3, 3, "the prompt's level-3 example", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t1 2 -> r1
        ROUTE b t1 2 -> r1
        ROUTE c t2 -> queued
        ROUTE d t2 7 -> r1
        STATUS b -> queued
        ADD_REPLICA r2 1 -> true
        STATUS b -> r2
        DRAIN r1 -> true
        COMPLETE a -> true
        STATUS c -> queued
        COMPLETE d -> true
        LOAD r1 -> ''
        ADD_REPLICA r1 1 -> true
        STATUS c -> r1
    """),
    case("default_priority_is_zero", 3, 2, "a ROUTE without a priority has priority 0, the same as an explicit 0", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t 0 -> queued    # 0 does not beat 0
        ROUTE c t 1 -> r1        # 1 beats the default
        STATUS a -> queued
        TENANT_REQUESTS t -> a@queued,b@queued,c@r1
    """),
    case("priority_nine_valid", 3, 2, "priority 9 is valid and beats 8", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t 8 -> r1
        ROUTE b t 9 -> r1
        STATUS a -> queued
    """),
    case("priority_ten_rejected", 3, 2, "priority 10 is out of range: '' and nothing changes (the id stays free)", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t 3 -> r1
        ROUTE b t 10 -> ''
        STATUS a -> r1
        STATUS b -> ''
        TOP_TENANTS 5 -> t(1)
        ROUTE b t 4 -> r1
    """),
    case("negative_priority_rejected", 3, 2, "a negative priority is out of range: '' and nothing changes", """
        ROUTE a t -1 -> ''
        STATUS a -> ''
        ADD_REPLICA r1 1 -> true
        ROUTE a t 0 -> r1
    """),
    case("waiting_order_priority_then_arrival", 3, 3,
         "a freed slot goes to the highest priority first, then to the earliest arrival", """
        ADD_REPLICA r1 1 -> true
        ROUTE x t 9 -> r1
        ROUTE a t 1 -> queued
        ROUTE b u 5 -> queued
        ROUTE c t 5 -> queued
        ROUTE d u -> queued
        COMPLETE x -> true
        STATUS b -> r1
        COMPLETE b -> true
        STATUS c -> r1
        COMPLETE c -> true
        STATUS a -> r1
        COMPLETE a -> true
        STATUS d -> r1
    """),
    case("priority_beats_longer_wait_across_tenants", 3, 3,
         "a higher priority of another tenant goes before a lower priority that has waited longer", """
        ADD_REPLICA r1 1 -> true
        ROUTE x t 9 -> r1
        ROUTE a t 1 -> queued
        ROUTE b u 5 -> queued
        STATUS x -> r1
        COMPLETE x -> true
        STATUS b -> r1
        STATUS a -> queued
    """),
    case("add_replica_priority_order", 3, 2, "ADD_REPLICA places several waiting requests in priority order", """
        ROUTE a t 1 -> queued
        ROUTE b t 3 -> queued
        ROUTE c u 3 -> queued
        ROUTE d u -> queued
        ADD_REPLICA r1 3 -> true
        TENANT_REQUESTS t -> a@r1,b@r1
        TENANT_REQUESTS u -> c@r1,d@queued
    """),
    case("victim_lowest_priority_any_replica", 3, 3,
         "the victim is the lowest priority on any replica; ROUTE returns the victim's replica", """
        ADD_REPLICA r1 1 -> true
        ADD_REPLICA r2 1 -> true
        ROUTE a t 3 -> r1
        ROUTE b t 1 -> r2
        ROUTE c t 2 -> r2
        STATUS b -> queued
        STATUS a -> r1
        LOAD r2 -> 1/1
    """),
    case("victim_lowest_not_latest", 3, 2,
         "the victim is the lowest priority, not the most recently placed request", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t 1 -> r1
        ROUTE b t 4 -> r1
        ROUTE c t 5 -> r1
        STATUS a -> queued
        STATUS b -> r1
    """),
    case("victim_tie_most_recent", 3, 3, "equal lowest priorities: the request placed most recently is preempted", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        ROUTE c t 1 -> r1
        STATUS a -> r1
        STATUS b -> queued
    """),
    case("victim_tie_across_replicas", 3, 2,
         "equal lowest priorities on two replicas: the most recent placement, whichever replica it is on", """
        ADD_REPLICA r1 1 -> true
        ADD_REPLICA r2 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> r2
        COMPLETE a -> true
        ROUTE c t -> r1
        ROUTE d t 2 -> r1
        STATUS c -> queued
        STATUS b -> r2
    """),
    case("victim_tie_within_one_query", 3, 2,
         "placements within one query count in order: the second admitted is the most recent", """
        ROUTE a t -> queued
        ROUTE b t -> queued
        ADD_REPLICA r1 2 -> true
        ROUTE c t 1 -> r1
        STATUS b -> queued
        STATUS a -> r1
    """),
    case("equal_priority_does_not_preempt", 3, 3, "equal priority never preempts (strictly lower only)", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t 4 -> r1
        ROUTE b t 4 -> queued
        ROUTE c t 3 -> queued
        STATUS a -> r1
        LOAD r1 -> 1/1
    """),
    case("free_slot_no_preemption", 3, 2, "a free slot is taken without preempting anybody, whatever the priority", """
        ADD_REPLICA r1 1 -> true
        ADD_REPLICA r2 1 -> true
        ROUTE a t -> r1
        ROUTE b t 9 -> r2
        STATUS a -> r1
        TOP_REPLICAS 2 -> r1(1/1),r2(1/1)
    """),
    case("preempted_keeps_arrival", 3, 3,
         "a preempted request keeps its arrival: it goes before later requests of its priority", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        ROUTE c t 5 -> r1
        STATUS a -> queued
        COMPLETE c -> true
        STATUS a -> r1
        STATUS b -> queued
    """),
    case("preempted_keeps_priority", 3, 2,
         "a preempted request keeps its priority: it goes before waiting requests of lower priority", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t 3 -> r1
        ROUTE b t 1 -> queued
        ROUTE c t 2 -> queued
        ROUTE d t 7 -> r1
        COMPLETE d -> true
        STATUS a -> r1
        COMPLETE a -> true
        STATUS c -> r1
        COMPLETE c -> true
        STATUS b -> r1
    """),
    case("preempted_is_waiting", 3, 2,
         "a preempted request is waiting: COMPLETE is false, a new ROUTE with its id is ''", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b u 1 -> r1
        COMPLETE a -> false
        ROUTE a u 5 -> ''
        TENANT_REQUESTS t -> a@queued
        TOP_TENANTS 2 -> t(1),u(1)
        COMPLETE b -> true
        STATUS a -> r1
    """),
    case("preempted_moves_replica", 3, 2,
         "a preempted request is placed again by the placement rule, possibly on another replica", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE x t 5 -> r1
        ADD_REPLICA r2 1 -> true
        STATUS a -> r2
        ROUTE y t 6 -> r2     # a is the only lower priority, on r2 now
        STATUS a -> queued
    """),
    case("drain_unknown", 3, 1, "DRAIN of an unknown replica is false", """
        DRAIN r1 -> false
        ROUTE r1 t -> queued
        DRAIN r1 -> false
    """),
    case("drain_twice", 3, 2, "DRAIN of a replica already draining is false", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        DRAIN r1 -> true
        DRAIN r1 -> false
        LOAD r1 -> 1/1
    """),
    case("drain_empty_removes_at_once", 3, 3,
         "DRAIN of an empty replica removes it at once: LOAD '', TOP_REPLICAS leaves it out, its id is free", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 2 -> true
        DRAIN r1 -> true
        LOAD r1 -> ''
        TOP_REPLICAS 5 -> r2(0/2)
        DRAIN r1 -> false
        ADD_REPLICA r1 3 -> true
        LOAD r1 -> 0/3
    """),
    case("drain_removed_after_last_complete", 3, 3,
         "a draining replica stays until its last request completes: listed, its id taken; then removed", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        DRAIN r1 -> true
        ADD_REPLICA r1 5 -> false
        TOP_REPLICAS 5 -> r1(2/2)
        COMPLETE a -> true
        LOAD r1 -> 1/2
        STATUS b -> r1
        TENANT_REQUESTS t -> b@r1
        COMPLETE b -> true
        LOAD r1 -> ''
        TOP_REPLICAS 5 -> ''
        ADD_REPLICA r1 5 -> true
    """),
    case("drain_after_removal_by_complete", 3, 2,
         "a replica removed by its last COMPLETE is unknown: DRAIN of it is false, its id is free", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        DRAIN r1 -> true
        COMPLETE a -> true     # r1 is empty: removed
        DRAIN r1 -> false
        LOAD r1 -> ''
        ADD_REPLICA r1 2 -> true
        DRAIN r1 -> true
    """),
    case("draining_not_placed", 3, 3, "no request is placed on a draining replica, even one with the lowest load", """
        ADD_REPLICA r1 10 -> true
        ADD_REPLICA r2 1 -> true
        ROUTE a t -> r1
        DRAIN r1 -> true
        ROUTE b t -> r2
        ROUTE c t -> queued
        LOAD r1 -> 1/10
    """),
    case("draining_slot_not_reused", 3, 3, "a slot freed on a draining replica is not given to a waiting request", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        ROUTE c t -> queued
        DRAIN r1 -> true
        COMPLETE a -> true
        STATUS c -> queued
        LOAD r1 -> 1/2
        COMPLETE b -> true
        STATUS c -> queued
        ADD_REPLICA r2 1 -> true
        STATUS c -> r2
    """),
    case("draining_requests_not_preempted", 3, 3, "requests on a draining replica are never preempted", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        DRAIN r1 -> true
        ROUTE b t 9 -> queued
        STATUS a -> r1
        ADD_REPLICA r2 1 -> true
        STATUS b -> r2
    """),
    case("victim_skips_draining", 3, 2,
         "the victim comes from an accepting replica even when a draining one runs lower priorities", """
        ADD_REPLICA r1 1 -> true
        ADD_REPLICA r2 1 -> true
        ROUTE a t -> r1
        ROUTE b t 3 -> r2
        DRAIN r1 -> true
        ROUTE c t 5 -> r2
        STATUS a -> r1
        STATUS b -> queued
    """),
    case("queries_with_preemption_and_drain", 3, 2,
         "level 2 during preemption and draining: loads, busiest replicas and tenants stay exact", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 4 -> true
        ROUTE a t1 -> r1
        ROUTE b t1 -> r2
        ROUTE c t2 -> r2
        ROUTE d t2 -> r1
        ROUTE e t3 -> r2
        ROUTE f t3 -> r2
        ROUTE g t1 5 -> r2
        TENANT_REQUESTS t3 -> e@r2,f@queued
        TOP_TENANTS 3 -> t1(3),t2(2),t3(2)
        DRAIN r1 -> true
        TOP_REPLICAS 2 -> r1(2/2),r2(4/4)
        COMPLETE a -> true
        COMPLETE d -> true
        TOP_REPLICAS 2 -> r2(4/4)
        COMPLETE c -> true
        STATUS f -> r2
    """),
)


@graded(3, 2, "a long run of every operation of levels 1-3")
def test_long_run(impl):
    queries = [["ADD_REPLICA", "r1", "2"], ["ADD_REPLICA", "r2", "3"]]
    for i in range(24):
        queries.append(["ROUTE", f"q{i}", f"t{i % 3}", str((i * 7) % 10)])
        if i % 4 == 3:
            queries.append(["COMPLETE", f"q{i - 3}"])
        if i == 10:
            queries += [["DRAIN", "r1"], ["ADD_REPLICA", "r3", "2"]]
        queries.append(["TOP_TENANTS", "3"])
    queries += [["STATUS", f"q{i}"] for i in range(24)] + [["TOP_REPLICAS", "3"], ["LOAD", "r1"]]
    run_queries(impl, queries, oracle=oracle)


@graded(3, 8, "random query streams of levels 1-3 match a slow oracle")
@PROPERTY
@given(queries=queries_up_to(3))
@example(queries=[["ADD_REPLICA", "r1", "2"], ["ROUTE", "a", "t1", "3"], ["ROUTE", "b", "t2", "3"],
                  ["ROUTE", "c", "t1", "5"], ["DRAIN", "r1"], ["ROUTE", "d", "t2", "9"],
                  ["ADD_REPLICA", "r2", "1"], ["COMPLETE", "a"], ["STATUS", "b"], ["STATUS", "d"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
