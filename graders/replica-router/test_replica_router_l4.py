"""Hidden suite, level 4: tenant weights (weighted wait) and limits, with every earlier level's
operations mixed in. The level-1 to level-3 suites run again on a level-4 solution, so a
refactor that breaks an earlier rule fails there too."""

from hypothesis import example, given
from replica_router_oracle import oracle, queries_up_to

from kata.checks import case, graded, property_settings, run_queries, scenarios

PROPERTY = property_settings(100)


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 4, 3, "the prompt's level-4 example", """
        ADD_REPLICA r1 1 -> true
        SET_WEIGHT gold 3 -> true
        ROUTE x free -> r1
        ROUTE f1 free -> queued
        ROUTE g1 gold -> queued
        COMPLETE x -> true
        STATUS g1 -> r1
        ROUTE g2 gold -> queued
        COMPLETE g1 -> true
        STATUS f1 -> r1
        SET_LIMIT free 1 -> true
        ROUTE f2 free -> queued
        ADD_REPLICA r2 2 -> true
        ROUTE f3 free -> queued
        SET_LIMIT free 2 -> true
        STATUS f3 -> queued
        TENANT_REQUESTS free -> f1@r1,f2@r2,f3@queued
    """),
    case("set_weight_bounds_accepted", 4, 2, "SET_WEIGHT accepts 1 and 100, the bounds", """
        SET_WEIGHT t 1 -> true
        SET_WEIGHT t 100 -> true
        SET_WEIGHT nobody 7 -> true
    """),
    case("set_weight_out_of_range", 4, 2, "SET_WEIGHT rejects 0, 101 and negatives", """
        SET_WEIGHT t 0 -> false
        SET_WEIGHT t 101 -> false
        SET_WEIGHT t -5 -> false
    """),
    case("rejected_weight_changes_nothing", 4, 2, "a rejected SET_WEIGHT keeps the weight set before", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 3 -> true        # 2
        SET_WEIGHT g 0 -> false       # 3
        ROUTE x t -> r1               # 4
        ROUTE f1 f -> queued          # 5
        ROUTE g1 g -> queued          # 6
        COMPLETE x -> true            # 7: f1 (7-5)*1 = 2, g1 (7-6)*3 = 3
        STATUS g1 -> r1
    """),
    case("weighted_wait_beats_arrival", 4, 3,
         "the largest weighted wait (now - arrival) * weight is placed first, not the earliest arrival", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 2 -> true        # 2
        ROUTE x t -> r1               # 3
        ROUTE f1 f -> queued          # 4
        STATUS x -> r1                # 5
        ROUTE g1 g -> queued          # 6
        LOAD r1 -> 1/1                # 7
        TOP_TENANTS 1 -> f(1)         # 8
        COMPLETE x -> true            # 9: f1 (9-4)*1 = 5, g1 (9-6)*2 = 6
        STATUS g1 -> r1
        STATUS f1 -> queued
    """),
    case("now_is_the_query_number", 4, 3,
         "now is the number of the current query (every query counts, not only ROUTEs)", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 3 -> true        # 2
        ROUTE x t -> r1               # 3
        ROUTE f1 f -> queued          # 4
        ROUTE g1 g -> queued          # 5
        STATUS f1 -> queued           # 6
        STATUS g1 -> queued           # 7
        LOAD r1 -> 1/1                # 8
        COMPLETE x -> true            # 9: f1 (9-4)*1 = 5, g1 (9-5)*3 = 12
        STATUS g1 -> r1
    """),
    case("weighted_wait_uses_current_query", 4, 3,
         "weighted wait at this very query: with now one lower the other request would win", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 2 -> true        # 2
        ROUTE x t -> r1               # 3
        ROUTE f1 f -> queued          # 4
        STATUS x -> r1                # 5
        ROUTE g1 g -> queued          # 6
        STATUS f1 -> queued           # 7
        STATUS g1 -> queued           # 8
        COMPLETE x -> true            # 9: f1 5, g1 6 (at 8 they would tie at 4)
        STATUS g1 -> r1
    """),
    case("weighted_tie_earliest_arrival", 4, 3,
         "equal weighted waits: the earliest arrival, not the larger weight or the smaller tenant name", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 2 -> true        # 2
        ROUTE x t -> r1               # 3
        ROUTE z1 z -> queued          # 4
        STATUS z1 -> queued           # 5
        STATUS x -> r1                # 6
        ROUTE g1 g -> queued          # 7
        LOAD r1 -> 1/1                # 8
        LOAD r2 -> ''                 # 9
        COMPLETE x -> true            # 10: z1 (10-4)*1 = 6, g1 (10-7)*2 = 6
        STATUS z1 -> r1
        STATUS g1 -> queued
    """),
    case("priority_before_weight", 4, 3,
         "priority comes before weight: a higher priority goes first whatever the weighted waits", """
        ADD_REPLICA r1 1 -> true
        SET_WEIGHT g 100 -> true
        ROUTE x t 9 -> r1
        ROUTE g1 g -> queued
        ROUTE f1 f 1 -> queued
        STATUS g1 -> queued
        COMPLETE x -> true
        STATUS f1 -> r1
    """),
    case("within_tenant_priority_order", 4, 3, "inside one tenant: highest priority first, then earliest arrival", """
        ADD_REPLICA r1 1 -> true      # 1
        SET_WEIGHT g 5 -> true        # 2
        ROUTE x t 9 -> r1             # 3
        ROUTE g1 g 0 -> queued        # 4
        ROUTE f1 f 2 -> queued        # 5
        ROUTE g2 g 2 -> queued        # 6
        ROUTE g3 g 2 -> queued        # 7
        COMPLETE x -> true            # 8: priority 2: f1 3*1, g2 2*5: g2
        STATUS g2 -> r1
        COMPLETE g2 -> true           # 10: f1 5*1, g3 3*5: g3
        STATUS g3 -> r1
        COMPLETE g3 -> true           # 12: f1 is the only priority 2
        STATUS f1 -> r1
        COMPLETE f1 -> true
        STATUS g1 -> r1
    """),
    case("weight_changed_while_waiting", 4, 2,
         "the weight used is the tenant's weight at the moment of placing, for the whole wait", """
        ADD_REPLICA r1 1 -> true      # 1
        ROUTE x t -> r1               # 2
        ROUTE f1 f -> queued          # 3
        ROUTE g1 g -> queued          # 4
        SET_WEIGHT g 4 -> true        # 5
        COMPLETE x -> true            # 6: f1 3*1, g1 2*4
        STATUS g1 -> r1
        SET_WEIGHT g 1 -> true        # 8
        ROUTE g2 g -> queued          # 9
        COMPLETE g1 -> true           # 10: f1 7*1, g2 1*1
        STATUS f1 -> r1
    """),
    case("equal_weights_fifo", 4, 2, "equal weights other than 1 keep level 3's order: earliest arrival first", """
        SET_WEIGHT a 5 -> true
        SET_WEIGHT b 5 -> true
        SET_WEIGHT c 5 -> true
        ROUTE b1 b -> queued
        ROUTE a1 a -> queued
        ROUTE c1 c -> queued
        ROUTE a2 a -> queued
        ADD_REPLICA r1 1 -> true
        STATUS b1 -> r1
        COMPLETE b1 -> true
        STATUS a1 -> r1
        COMPLETE a1 -> true
        STATUS c1 -> r1
    """),
    case("weights_do_not_change_placement_or_victim", 4, 2,
         "weights change neither the replica chosen nor the victim of a preemption", """
        SET_WEIGHT heavy 100 -> true
        ADD_REPLICA r2 2 -> true
        ADD_REPLICA r1 2 -> true
        ROUTE a heavy -> r1
        ROUTE b light -> r2
        ROUTE c heavy -> r1
        ROUTE d light -> r2
        ROUTE e light 3 -> r2     # the victim is d, placed last among priority 0
        STATUS d -> queued
        STATUS c -> r1
    """),
    case("set_limit_bounds", 4, 2, "SET_LIMIT accepts 0 and rejects a negative limit, which changes nothing", """
        SET_LIMIT t 2 -> true
        SET_LIMIT t -1 -> false
        SET_LIMIT u 0 -> true
        ADD_REPLICA r1 5 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        ROUTE c t -> queued      # the limit is still 2
        ROUTE d u -> queued
    """),
    case("route_at_limit_waits", 4, 3, "a ROUTE from a tenant at its limit waits even though a slot is free", """
        SET_LIMIT t 1 -> true
        ADD_REPLICA r1 3 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        ROUTE c u -> r1
        LOAD r1 -> 2/3
        TENANT_REQUESTS t -> a@r1,b@queued
    """),
    case("at_limit_earlier_checks_first", 4, 2,
         "a tenant at its limit: a bad priority or an active id still returns '' before the limit is looked at", """
        SET_LIMIT t 0 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE a t 10 -> ''
        ROUTE a t -1 -> ''
        STATUS a -> ''
        ROUTE a t -> queued
        ROUTE a t 5 -> ''
        ROUTE a u -> ''
        TENANT_REQUESTS t -> a@queued
        TOP_TENANTS 5 -> t(1)
        ROUTE b u -> r1
    """),
    case("limited_waiting_blocks_no_route", 4, 3,
         "a higher-priority request waiting at its tenant's limit blocks no ROUTE: free slot taken, then preemption",
         """
        ADD_REPLICA r1 2 -> true
        SET_LIMIT t 1 -> true
        ROUTE a t -> r1
        ROUTE b t 9 -> queued    # t is at its limit
        ROUTE c u -> r1          # the free slot, though b (priority 9) waits
        ROUTE d u 5 -> r1        # no free slot: c (0, placed last) is preempted
        STATUS c -> queued
        STATUS b -> queued
        STATUS a -> r1
    """),
    case("placement_order_within_query_weighted", 4, 2,
         "placements after one query are numbered in the order made (weighted order), not by arrival", """
        SET_WEIGHT g 5 -> true      # 1
        ROUTE a t -> queued         # 2
        ROUTE b g -> queued         # 3
        ADD_REPLICA r1 2 -> true    # 4: b (4-3)*5 = 5 placed first, then a (4-2)*1 = 2
        ROUTE c u 1 -> r1           # a was placed last: a is preempted
        STATUS a -> queued
        STATUS b -> r1
    """),
    case("limit_boundary", 4, 3, "at its limit means running >= limit: one below the limit still routes", """
        SET_LIMIT t 2 -> true
        ADD_REPLICA r1 4 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        ROUTE c t -> queued
        LOAD r1 -> 2/4
    """),
    case("limit_zero", 4, 2, "limit 0: every request of the tenant waits; TOP_TENANTS still counts them", """
        ADD_REPLICA r1 4 -> true
        SET_LIMIT t 0 -> true
        ROUTE a t -> queued
        ROUTE b t 9 -> queued
        ROUTE c u -> r1
        TOP_TENANTS 2 -> t(2),u(1)
        STATUS b -> queued
    """),
    case("at_limit_no_preemption", 4, 3, "a tenant at its limit preempts nobody, whatever its priority", """
        SET_LIMIT t 1 -> true
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE x u -> r1
        ROUTE b t 9 -> queued
        STATUS x -> r1
        ROUTE y v 9 -> r1        # v has no limit: x is preempted
        STATUS x -> queued
    """),
    case("victim_of_limited_tenant", 4, 2, "the victim may belong to a tenant at its limit", """
        SET_LIMIT u 1 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE a u -> r1
        ROUTE b t 5 -> r1
        STATUS a -> queued
    """),
    case("raising_limit_admits", 4, 3,
         "raising a limit places the tenant's waiting requests at once, by the placement rule", """
        ADD_REPLICA r1 2 -> true
        ADD_REPLICA r2 4 -> true
        SET_LIMIT t 0 -> true
        ROUTE a t -> queued
        ROUTE b t -> queued
        ROUTE c u -> r1
        SET_LIMIT t 2 -> true
        STATUS a -> r2
        STATUS b -> r2
        TOP_REPLICAS 2 -> r1(1/2),r2(2/4)
    """),
    case("lowering_limit", 4, 3,
         "a limit below the running count preempts nothing; the tenant waits until it is below the limit", """
        SET_LIMIT t 2 -> true
        ADD_REPLICA r1 4 -> true
        ROUTE a t -> r1
        ROUTE b t -> r1
        ROUTE c t -> queued
        SET_LIMIT t 1 -> true
        STATUS a -> r1
        STATUS b -> r1
        COMPLETE a -> true
        STATUS c -> queued
        LOAD r1 -> 1/4
        COMPLETE b -> true
        STATUS c -> r1
    """),
    case("admission_skips_limited_tenant", 4, 3,
         "admission skips a tenant at its limit and places the next eligible request", """
        ADD_REPLICA r1 1 -> true
        ROUTE x v 9 -> r1
        ROUTE b u 5 -> queued
        ROUTE c t -> queued
        SET_LIMIT u 0 -> true
        COMPLETE x -> true
        STATUS c -> r1
        STATUS b -> queued
    """),
    case("raising_limit_never_preempts", 4, 3,
         "raising a limit places waiting requests only into free slots, never by preemption", """
        ADD_REPLICA r1 1 -> true
        SET_LIMIT t 0 -> true
        ROUTE a t 9 -> queued
        ROUTE b u -> r1
        SET_LIMIT t 5 -> true
        STATUS a -> queued
        STATUS b -> r1
        COMPLETE b -> true
        STATUS a -> r1
    """),
    case("preemption_frees_limit", 4, 3, "a preempted request no longer counts against its tenant's limit", """
        SET_LIMIT u 1 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE a u -> r1
        ROUTE b u -> queued
        ROUTE x t 5 -> r1
        ADD_REPLICA r2 1 -> true
        STATUS a -> r2
        STATUS b -> queued
    """),
    case("complete_frees_limit", 4, 2,
         "COMPLETE lowers the tenant's running count: its next waiting request is placed", """
        SET_LIMIT t 1 -> true
        ADD_REPLICA r1 2 -> true
        ROUTE a t -> r1
        ROUTE b t -> queued
        COMPLETE a -> true
        STATUS b -> r1
        ROUTE c t -> queued
    """),
    case("limit_counts_running_only", 4, 2, "the limit counts running requests only, not waiting ones", """
        SET_LIMIT t 2 -> true
        ROUTE a t -> queued
        ROUTE b t -> queued
        ROUTE c t -> queued
        ADD_REPLICA r1 5 -> true
        TENANT_REQUESTS t -> a@r1,b@r1,c@queued
    """),
    case("victim_most_recent_placement_not_arrival", 4, 3,
         "the victim is the most recently placed, which is not the latest arrival once limits reorder placements", """
        ADD_REPLICA r1 2 -> true
        SET_LIMIT A 0 -> true
        ROUTE a A -> queued
        ROUTE b B -> r1
        SET_LIMIT A 1 -> true
        STATUS a -> r1
        ROUTE c C 1 -> r1
        STATUS a -> queued
        STATUS b -> r1
    """),
    case("limit_and_drain", 4, 2, "draining and limits together: a raised limit never places on a draining replica", """
        ADD_REPLICA r1 3 -> true
        ADD_REPLICA r2 1 -> true
        SET_LIMIT t 0 -> true
        ROUTE a t -> queued
        ROUTE b u -> r1
        DRAIN r1 -> true
        SET_LIMIT t 3 -> true
        STATUS a -> r2
        ROUTE c t -> queued
        TOP_REPLICAS 3 -> r2(1/1),r1(1/3)
    """),
    case("earlier_rules_with_weights", 4, 2,
         "earlier levels' rules with weights and limits set: duplicate ids, COMPLETE of a waiting request, TOP_TENANTS",
         """
        SET_WEIGHT t 9 -> true
        SET_LIMIT u 1 -> true
        ADD_REPLICA r1 1 -> true
        ROUTE a u -> r1
        ROUTE b u -> queued
        ROUTE b t -> ''
        COMPLETE b -> false
        ROUTE c t -> queued
        TOP_TENANTS 5 -> u(2),t(1)
        TENANT_REQUESTS u -> a@r1,b@queued
        COMPLETE a -> true
        STATUS c -> r1
        STATUS b -> queued
    """),
)


@graded(4, 2, "a long run with weights, limits, preemption and draining")
def test_long_run(impl):
    queries = [["ADD_REPLICA", "r1", "2"], ["ADD_REPLICA", "r2", "2"], ["SET_WEIGHT", "t1", "3"],
               ["SET_WEIGHT", "t2", "2"], ["SET_LIMIT", "t0", "2"]]
    for i in range(30):
        queries.append(["ROUTE", f"q{i}", f"t{i % 3}", str((i * 3) % 4)])
        if i % 3 == 2:
            queries.append(["COMPLETE", f"q{i - 2}"])
        if i == 12:
            queries += [["DRAIN", "r2"], ["ADD_REPLICA", "r3", "3"], ["SET_LIMIT", "t0", "1"]]
        if i == 20:
            queries += [["SET_WEIGHT", "t0", "7"], ["SET_LIMIT", "t0", "4"]]
        queries.append(["TOP_TENANTS", "3"])
    queries += [["STATUS", f"q{i}"] for i in range(30)] + [["TOP_REPLICAS", "3"]]
    run_queries(impl, queries, oracle=oracle)


@graded(4, 10, "random query streams of every level match a slow oracle")
@PROPERTY
@given(queries=queries_up_to(4))
@example(queries=[["ADD_REPLICA", "r1", "1"], ["SET_WEIGHT", "t2", "3"], ["ROUTE", "a", "t1"],
                  ["ROUTE", "b", "t1"], ["ROUTE", "c", "t2"], ["COMPLETE", "a"], ["STATUS", "c"],
                  ["SET_LIMIT", "t1", "0"], ["ROUTE", "d", "t2"], ["COMPLETE", "c"],
                  ["STATUS", "d"], ["SET_LIMIT", "t1", "1"], ["STATUS", "b"]])
def test_matches_oracle(impl, queries):
    run_queries(impl, queries, oracle=oracle)
