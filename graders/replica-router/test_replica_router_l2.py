"""Hidden suite, level 2: LOAD, TOP_REPLICAS, TENANT_REQUESTS, TOP_TENANTS, with level 1 around
them."""

from hypothesis import example, given
from replica_router_oracle import oracle, queries_up_to

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(60)
BIG = 10**18


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 2, 3, "the prompt's level-2 example", """
        ADD_REPLICA r1 4 -> true
        ADD_REPLICA r2 2 -> true
        ROUTE q1 acme -> r1
        ROUTE q2 acme -> r2
        ROUTE q3 beta -> r1
        ROUTE q10 acme -> r1
        LOAD r1 -> 3/4
        TOP_REPLICAS 5 -> r1(3/4),r2(1/2)
        ROUTE q4 beta -> r2
        TOP_REPLICAS 1 -> r2(2/2)
        ROUTE q5 beta -> r1
        ROUTE q6 beta -> queued
        TENANT_REQUESTS beta -> q3@r1,q4@r2,q5@r1,q6@queued
        TENANT_REQUESTS acme -> q1@r1,q10@r1,q2@r2
        TOP_TENANTS 5 -> beta(4),acme(3)
        LOAD r9 -> ''
    """),
    case("load_unknown", 2, 1, "LOAD of an unknown replica is ''", """
        LOAD r1 -> ''
        ROUTE r1 t -> queued
        LOAD r1 -> ''     # a request id is not a replica id
    """),
    case("load_not_reduced", 2, 2, "LOAD is not reduced: 2/4, never 1/2; an idle replica is 0/capacity", """
        ADD_REPLICA r1 4 -> true
        LOAD r1 -> 0/4
        ROUTE a t -> r1
        ROUTE b t -> r1
        LOAD r1 -> 2/4
    """),
    case("load_after_rejected_adds", 2, 1,
         "a rejected ADD_REPLICA leaves no replica, and a duplicate keeps the first capacity", """
        ADD_REPLICA r1 0 -> false
        LOAD r1 -> ''
        ADD_REPLICA r2 3 -> true
        ADD_REPLICA r2 7 -> false
        LOAD r2 -> 0/3
    """),
    case("load_counts_running_only", 2, 2,
         "LOAD counts running requests only, never waiting ones, and drops with COMPLETE", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        ROUTE c t -> queued
        LOAD r1 -> 1/1
        COMPLETE a -> true
        LOAD r1 -> 1/1     # b took the slot at once
        COMPLETE b -> true
        COMPLETE c -> true
        LOAD r1 -> 0/1
    """),
    case("load_huge_capacity", 2, 1, "LOAD prints a capacity of 10**18 in full", f"""
        ADD_REPLICA r1 {BIG} -> true
        ROUTE a t -> r1
        LOAD r1 -> 1/{BIG}
    """),
    case("top_replicas_zero", 2, 1, "TOP_REPLICAS 0 is ''", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        TOP_REPLICAS 0 -> ''
    """),
    case("top_replicas_none", 2, 1, "TOP_REPLICAS with no replicas is ''", """
        TOP_REPLICAS 3 -> ''
        ROUTE a t -> queued
        TOP_REPLICAS 1 -> ''
    """),
    case("top_replicas_n_larger", 2, 2,
         "TOP_REPLICAS lists every replica, idle ones too, when n is larger than their number", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 3 -> true
        ADD_REPLICA r3 1 -> true
        ROUTE a t -> r1
        TOP_REPLICAS 10 -> r1(1/2),r2(0/3),r3(0/1)
        TOP_REPLICAS 2 -> r1(1/2),r2(0/3)
    """),
    case("top_replicas_by_load", 2, 2, "busiest means highest load (running/capacity), not most running requests", """
        ADD_REPLICA big 10 -> true
        ADD_REPLICA small 2 -> true
        ROUTE a t -> big
        ROUTE b t -> small
        ROUTE c t -> big
        ROUTE d t -> big
        TOP_REPLICAS 1 -> small(1/2)
        TOP_REPLICAS 2 -> small(1/2),big(3/10)
    """),
    case("top_replicas_ties_smaller_id_first", 2, 3,
         "equal loads: smaller id first, by code point (r10 before r9), not the reverse", """
        ADD_REPLICA r9 2 -> true
        ADD_REPLICA r10 4 -> true
        ADD_REPLICA s 1 -> true
        ROUTE a t -> r10
        ROUTE b t -> r9
        TOP_REPLICAS 3 -> r9(1/2),r10(1/4),s(0/1)
        ROUTE c t -> s
        ROUTE d t -> r10     # 1/4 against 1/2 and a full s
        TOP_REPLICAS 3 -> s(1/1),r10(2/4),r9(1/2)
        TOP_REPLICAS 2 -> s(1/1),r10(2/4)
    """),
    case("top_replicas_exact", 2, 2, "TOP_REPLICAS compares loads exactly past 2**53", f"""
        ADD_REPLICA a {BIG} -> true
        ADD_REPLICA b {BIG - 1} -> true
        ROUTE q1 t -> a
        ROUTE q2 t -> b
        TOP_REPLICAS 2 -> b(1/{BIG - 1}),a(1/{BIG})
    """),
    case("tenant_requests_sorted_by_id", 2, 2,
         "TENANT_REQUESTS is sorted by request id by code point (q10 before q2), not by arrival", """
        ADD_REPLICA r1 5 -> true
        ROUTE q2 t -> r1
        ROUTE q10 t -> r1
        ROUTE Q t -> r1
        ROUTE b t -> r1
        TENANT_REQUESTS t -> Q@r1,b@r1,q10@r1,q2@r1
    """),
    case("tenant_requests_waiting", 2, 2,
         "TENANT_REQUESTS writes a waiting request as id@queued, among the running ones", """
        ADD_REPLICA r2 1 -> true
        ROUTE b t -> r2
        ROUTE a t -> queued
        ROUTE c u -> queued
        TENANT_REQUESTS t -> a@queued,b@r2
        COMPLETE b -> true
        TENANT_REQUESTS t -> a@r2
        TENANT_REQUESTS u -> c@queued
    """),
    case("tenant_requests_none", 2, 1, "TENANT_REQUESTS of a tenant with no active request is ''", """
        TENANT_REQUESTS t -> ''
        ADD_REPLICA r1 1 -> true
        ROUTE a t -> r1
        COMPLETE a -> true
        TENANT_REQUESTS t -> ''
        TENANT_REQUESTS r1 -> ''
    """),
    case("duplicate_route_keeps_tenant", 2, 2,
         "a refused duplicate ROUTE does not move the request to the other tenant", """
        ADD_REPLICA r1 2 -> true
        ROUTE a t1 -> r1
        ROUTE a t2 -> ''
        TENANT_REQUESTS t1 -> a@r1
        TENANT_REQUESTS t2 -> ''
        TOP_TENANTS 5 -> t1(1)
    """),
    case("reused_id_new_tenant", 2, 2, "a reused id belongs to the tenant of its new ROUTE", """
        ADD_REPLICA r1 1 -> true
        ROUTE a t1 -> r1
        COMPLETE a -> true
        ROUTE a t2 -> r1
        TENANT_REQUESTS t1 -> ''
        TENANT_REQUESTS t2 -> a@r1
    """),
    case("top_tenants_counts_waiting", 2, 3, "TOP_TENANTS counts waiting requests as well as running ones", """
        ADD_REPLICA r1 2 -> true
        ROUTE a1 a -> r1
        ROUTE a2 a -> r1
        ROUTE b1 b -> queued
        ROUTE b2 b -> queued
        ROUTE b3 b -> queued
        TOP_TENANTS 2 -> b(3),a(2)
    """),
    case("top_tenants_ties", 2, 2, "TOP_TENANTS: equal counts, smaller name first, by code point", """
        ADD_REPLICA r1 9 -> true
        ROUTE x1 t2 -> r1
        ROUTE x2 t10 -> r1
        ROUTE x3 T -> r1
        ROUTE x4 t2 -> r1
        TOP_TENANTS 4 -> t2(2),T(1),t10(1)
        TOP_TENANTS 2 -> t2(2),T(1)
    """),
    case("top_tenants_drop_finished", 2, 2, "a tenant whose requests all completed is not listed by TOP_TENANTS", """
        ADD_REPLICA r1 3 -> true
        ROUTE a t1 -> r1
        ROUTE b t2 -> r1
        COMPLETE a -> true
        TOP_TENANTS 5 -> t2(1)
        COMPLETE b -> true
        TOP_TENANTS 5 -> ''
    """),
    case("top_tenants_zero", 2, 1, "TOP_TENANTS 0 is ''", """
        ROUTE a t -> queued
        TOP_TENANTS 0 -> ''
        TOP_TENANTS 1 -> t(1)
    """),
    case("top_tenants_n_larger", 2, 1, "TOP_TENANTS with n larger than the number of tenants lists them all", """
        ADD_REPLICA r1 1 -> true
        ROUTE a u -> r1
        ROUTE b t -> queued
        ROUTE c u -> queued
        TOP_TENANTS 9 -> u(2),t(1)
    """),
    case("tenant_requests_across_replicas", 2, 2,
         "TENANT_REQUESTS names each request's own replica, and follows a request placed after waiting", """
        ADD_REPLICA r2 1 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE c t -> r1
        ROUTE a t -> r2
        ROUTE b t -> queued
        TENANT_REQUESTS t -> a@r2,b@queued,c@r1
        COMPLETE c -> true
        TENANT_REQUESTS t -> a@r2,b@r1
        LOAD r1 -> 1/1
    """),
    case("queries_change_nothing", 2, 1,
         "query answers change nothing: asking twice gives the same answer and the same routing", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 2 -> true
        ROUTE a t -> r1
        TOP_REPLICAS 2 -> r1(1/2),r2(0/2)
        TOP_REPLICAS 2 -> r1(1/2),r2(0/2)
        TOP_TENANTS 1 -> t(1)
        TENANT_REQUESTS t -> a@r1
        LOAD r2 -> 0/2
        ROUTE b t -> r2
    """),
    case("level1_rules_with_queries", 2, 2,
         "level 1 still holds around the queries: admission order and exact loads", """
        ADD_REPLICA r1 1 -> true
        ROUTE z t1 -> r1
        ROUTE y t2 -> queued
        ROUTE x t1 -> queued
        TOP_TENANTS 3 -> t1(2),t2(1)
        ADD_REPLICA r0 2 -> true
        TENANT_REQUESTS t1 -> x@r0,z@r1
        TENANT_REQUESTS t2 -> y@r0
        TOP_REPLICAS 3 -> r0(2/2),r1(1/1)
        COMPLETE z -> true
        TOP_REPLICAS 3 -> r0(2/2),r1(0/1)
    """),
)


@graded(2, 2, "a long run with every query of levels 1 and 2")
def test_long_run(impl):
    queries = [["ADD_REPLICA", f"r{i}", str(i)] for i in range(1, 5)]
    for i in range(20):
        queries.append(["ROUTE", f"q{i}", f"t{i % 4}"])
        if i % 3 == 2:
            queries.append(["COMPLETE", f"q{i - 2}"])
        queries.append(["TOP_REPLICAS", "3"])
    queries += [["TOP_TENANTS", "4"], ["TENANT_REQUESTS", "t1"], ["TENANT_REQUESTS", "t3"],
                ["LOAD", "r4"], ["LOAD", "r3"]]
    run_queries(impl, queries, oracle=oracle)


@graded(2, 8, "random query streams of levels 1 and 2 match a slow oracle")
@PROPERTY
@given(queries=queries_up_to(2))
@example(queries=[["ADD_REPLICA", "r2", "2"], ["ADD_REPLICA", "r10", "1"], ["ROUTE", "a", "t1"],
                  ["ROUTE", "b", "t2"], ["ROUTE", "c", "t1"], ["TOP_REPLICAS", "5"],
                  ["TOP_TENANTS", "5"], ["TENANT_REQUESTS", "t1"], ["LOAD", "r2"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
