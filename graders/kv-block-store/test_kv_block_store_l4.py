"""Hidden suite, level 4: SNAPSHOT and RESTORE of the state at a past timestamp, mixed with every
operation of levels 1-3 (a history that breaks an earlier rule fails here too)."""

from hypothesis import example, given
from hypothesis import strategies as st
from kv_block_store_oracle import (KEYS, PREFIXES, SIZES, TENANTS, TOPS,
                                   oracle, seeded_timed, timed_stream)

from kata.checks import case, graded, property_settings, query_rows, run_queries, scenarios

PROPERTY = property_settings(50)


def scan_all(ts: int, tenant: str = "t") -> list[str]:
    return [str(ts), "SCAN", tenant, ""]


test_scenario = scenarios(  # case(id, level, points, edge, the queries and their answers as text)
    case("prompt_example", 4, 3, "the prompt's level-4 example", """
        1 PUT_WITH_TTL acme a 10 10 -> true
        2 PUT acme b 20 -> true
        4 DELETE acme b -> true
        5 PUT acme c 5 -> true
        6 SNAPSHOT acme 3 -> b(20),a(10)
        7 SNAPSHOT acme 4 -> a(10)
        8 RESTORE acme 2 -> 2
        9 TTL acme a -> 8
        10 GET acme c -> ''
        11 SNAPSHOT acme 7 -> a(10),c(5)
        12 SNAPSHOT acme 11 -> b(20),a(10)
        17 USAGE acme -> 1,20
    """),
    case("snapshot_before_first_query", 4, 1, "SNAPSHOT at a timestamp before the call's first query answers \"\"", """
        5 PUT t k 1 -> true
        6 SNAPSHOT t 0 -> ''
        7 SNAPSHOT t 4 -> ''
    """),
    case("snapshot_includes_query_at", 4, 2, "the state at `at` includes the query whose timestamp is exactly `at`", """
        3 PUT t a 1 -> true
        5 PUT t b 2 -> true
        7 DELETE t a -> true
        8 SNAPSHOT t 3 -> a(1)
        9 SNAPSHOT t 5 -> b(2),a(1)
        10 SNAPSHOT t 7 -> b(2)
    """),
    case("snapshot_between_queries", 4, 2, "`at` between two queries: the state after the last query before it", """
        10 PUT t a 1 -> true
        20 PUT t a 2 -> false
        30 DELETE t a -> true
        31 SNAPSHOT t 15 -> a(1)
        32 SNAPSHOT t 29 -> a(2)
        33 SNAPSHOT t 30 -> ''
        34 SNAPSHOT t 9 -> ''
    """),
    case("snapshot_at_now", 4, 2, "SNAPSHOT at its own timestamp is the store as it is now", """
        1 PUT t a 4 -> true
        2 PUT t b 9 -> true
        3 SNAPSHOT t 3 -> b(9),a(4)
        4 DELETE t b -> true
        5 SNAPSHOT t 5 -> a(4)
    """),
    case("snapshot_expiry_boundary", 4, 2,
         "SNAPSHOT leaves out a block whose expiry is exactly `at`, and shows it at `at` - 1", """
        0 PUT_WITH_TTL t a 5 4 -> true
        1 PUT t b 1 -> true
        9 SNAPSHOT t 3 -> a(5),b(1)
        10 SNAPSHOT t 4 -> b(1)
    """),
    case("snapshot_shows_block_expired_since", 4, 2,
         "SNAPSHOT shows a block held at `at` even though it has expired by now", """
        0 PUT_WITH_TTL t a 5 3 -> true
        5 GET t a -> ''
        6 SNAPSHOT t 2 -> a(5)
        7 SNAPSHOT t 1 -> a(5)
    """),
    case("snapshot_old_size", 4, 2, "SNAPSHOT shows the size a replaced block had at `at`", """
        1 PUT t a 1 -> true
        2 PUT t a 20 -> false
        3 PUT t a 300 -> false
        4 SNAPSHOT t 1 -> a(1)
        5 SNAPSHOT t 2 -> a(20)
        6 SNAPSHOT t 4 -> a(300)
    """),
    case("snapshot_order", 4, 2, "SNAPSHOT orders as SCAN does: size descending, then key ascending", """
        1 PUT t zz 5 -> true
        2 PUT t a 5 -> true
        3 PUT t B 5 -> true
        4 PUT t m 10 -> true
        5 PUT t q 9 -> true
        6 DROP t -> 5
        7 SNAPSHOT t 5 -> m(10),q(9),B(5),a(5),zz(5)
    """),
    case("snapshot_one_tenant", 4, 1,
         "SNAPSHOT of a tenant never named answers \"\"; it lists only that tenant's blocks", """
        1 PUT a k 1 -> true
        2 PUT b k 2 -> true
        3 SNAPSHOT c 2 -> ''
        4 SNAPSHOT a 2 -> k(1)
    """),
    case("snapshot_delete_and_put_again", 4, 2,
         "a block deleted and put again: SNAPSHOT sees it, then not, then again", """
        1 PUT t a 1 -> true
        3 DELETE t a -> true
        5 PUT t a 2 -> true
        6 SNAPSHOT t 2 -> a(1)
        7 SNAPSHOT t 4 -> ''
        8 SNAPSHOT t 5 -> a(2)
    """),
    case("snapshot_before_drop", 4, 2, "SNAPSHOT before a DROP shows the dropped blocks; at the DROP, none", """
        1 PUT t a 1 -> true
        2 PUT t b 2 -> true
        3 DROP t -> 2
        4 SNAPSHOT t 2 -> b(2),a(1)
        5 SNAPSHOT t 3 -> ''
        6 USAGE t -> 0,0
    """),
    case("snapshot_changes_nothing", 4, 1, "SNAPSHOT changes nothing", """
        1 PUT t a 1 -> true
        2 DELETE t a -> true
        3 SNAPSHOT t 1 -> a(1)
        4 GET t a -> ''
        5 PUT t a 3 -> true
        6 TOP 1 -> t(3)
    """),
    case("restore_removes_newer", 4, 2,
         "RESTORE removes the blocks put after `at` and answers how many blocks the tenant holds", """
        1 PUT t a 1 -> true
        2 PUT t b 2 -> true
        3 PUT t c 3 -> true
        4 RESTORE t 1 -> 1
        5 GET t b -> ''
        6 GET t c -> ''
        7 USAGE t -> 1,1
        8 DELETE t c -> false
    """),
    case("restore_brings_back", 4, 2, "RESTORE brings back deleted and dropped blocks with their size at `at`", """
        1 PUT t a 1 -> true
        2 PUT t b 2 -> true
        3 PUT t b 20 -> false
        4 DELETE t a -> true
        5 PUT t b 200 -> false
        6 DROP t -> 1
        7 RESTORE t 3 -> 2
        8 GET t a -> 1
        9 GET t b -> 20
        10 USAGE t -> 2,21
    """),
    case("put_after_restore", 4, 2,
         "after RESTORE, PUT of a restored key answers \"false\", of a removed key \"true\"", """
        1 PUT t a 1 -> true
        2 DELETE t a -> true
        3 PUT t b 2 -> true
        4 RESTORE t 1 -> 1
        5 PUT t a 5 -> false
        6 PUT t b 6 -> true
    """),
    case("delete_after_restore", 4, 2,
         "after RESTORE, DELETE of a restored key answers \"true\", of a removed key \"false\"", """
        1 PUT t a 1 -> true
        2 DELETE t a -> true
        3 PUT t b 2 -> true
        4 RESTORE t 1 -> 1
        5 DELETE t a -> true
        6 DELETE t b -> false
        7 GET t a -> ''
        8 USAGE t -> 0,0
    """),
    case("restore_recomputes_ttl", 4, 3,
         "RESTORE recomputes TTLs: remaining lifetime r at `at` gives expiry ts + r", """
        10 PUT_WITH_TTL t a 7 6 -> true
        12 DELETE t a -> true
        20 RESTORE t 11 -> 1
        21 TTL t a -> 4
        24 GET t a -> 7
        25 GET t a -> ''
    """),
    case("restore_revives_expired", 4, 2,
         "a restored block whose expiry had passed by the restore is held again, with its remaining lifetime", """
        0 PUT_WITH_TTL t a 3 5 -> true
        7 GET t a -> ''
        8 RESTORE t 2 -> 1
        9 TTL t a -> 2
        10 GET t a -> 3
        11 GET t a -> ''
        12 PUT t a 1 -> true
    """),
    case("restore_permanent_stays_permanent", 4, 2,
         "a block without expiry at `at` is restored without expiry, even if it has a TTL now", """
        0 PUT t a 3 -> true
        1 PUT_WITH_TTL t a 4 3 -> false
        2 RESTORE t 0 -> 1
        3 TTL t a -> -1
        100 GET t a -> 3
    """),
    case("restore_ttl_replaces_permanent", 4, 2,
         "a block with a TTL at `at` gets a TTL back, even if it has none now", """
        0 PUT_WITH_TTL t a 3 10 -> true
        4 PUT t a 9 -> false
        6 RESTORE t 2 -> 1
        7 TTL t a -> 7
        13 GET t a -> 3
        14 GET t a -> ''
    """),
    case("restore_expiry_boundary", 4, 2, "RESTORE leaves out a block whose expiry is exactly `at`", """
        0 PUT_WITH_TTL t a 1 4 -> true
        1 PUT t b 2 -> true
        5 RESTORE t 4 -> 1
        6 GET t a -> ''
        7 RESTORE t 3 -> 2
        8 SNAPSHOT t 7 -> b(2),a(1)
        9 GET t a -> ''
    """),
    case("restore_one_tenant", 4, 2, "RESTORE changes only the given tenant, same keys included", """
        1 PUT a k 1 -> true
        2 PUT b k 2 -> true
        3 PUT a k 10 -> false
        4 PUT b k 20 -> false
        5 RESTORE a 2 -> 1
        6 GET a k -> 1
        7 GET b k -> 20
        8 TOP 2 -> b(20),a(1)
    """),
    case("restore_at_now", 4, 2, "RESTORE at its own timestamp changes nothing, TTLs included", """
        0 PUT_WITH_TTL t a 1 8 -> true
        1 PUT t b 2 -> true
        3 RESTORE t 3 -> 2
        4 TTL t a -> 4
        5 TTL t b -> -1
        8 GET t a -> ''
    """),
    case("restore_to_empty", 4, 1, "RESTORE to before the first query empties the tenant and answers \"0\"", """
        3 PUT t a 1 -> true
        4 PUT t b 1 -> true
        5 RESTORE t 2 -> 0
        6 USAGE t -> 0,0
        7 TOP 3 -> ''
        8 DROP t -> 0
    """),
    case("restore_is_history", 4, 3,
         "a RESTORE is a change at its timestamp: later snapshots see it, earlier ones do not", """
        1 PUT t a 1 -> true
        2 PUT t b 2 -> true
        3 DELETE t a -> true
        4 RESTORE t 1 -> 1
        5 SNAPSHOT t 3 -> b(2)
        6 SNAPSHOT t 4 -> a(1)
        7 SNAPSHOT t 2 -> b(2),a(1)
        8 RESTORE t 3 -> 1
        9 SNAPSHOT t 8 -> b(2)
        10 SNAPSHOT t 7 -> a(1)
    """),
    case("restore_chain", 4, 2,
         "restoring to a time after an earlier restore sees the restored blocks and their recomputed expiry", """
        0 PUT_WITH_TTL t a 5 4 -> true
        10 RESTORE t 1 -> 1
        11 DELETE t a -> true
        20 RESTORE t 10 -> 1
        21 TTL t a -> 2
        23 GET t a -> ''
    """),
    case("history_keeps_level1_rules", 4, 2,
         "with history kept, delete-then-get still answers \"\" and a re-put is still new", """
        1 PUT t a 1 -> true
        2 DELETE t a -> true
        3 GET t a -> ''
        4 DELETE t a -> false
        5 USAGE t -> 0,0
        6 DROP t -> 0
        7 TOP 1 -> ''
        8 PUT t a 2 -> true
        9 SNAPSHOT t 2 -> ''
        10 USAGE t -> 1,2
    """),
    case("history_keeps_level3_rules", 4, 2,
         "with history kept, expiry still holds everywhere (GET, PUT's answer, USAGE, DROP, TOP)", """
        1 PUT_WITH_TTL t a 1 2 -> true
        2 PUT t b 5 -> true
        3 GET t a -> ''
        4 USAGE t -> 1,5
        5 PUT_WITH_TTL t a 2 2 -> true
        6 DROP t -> 2
        7 TOP 1 -> ''
        8 RESTORE t 5 -> 2
        9 TTL t a -> 1
    """),
)


@graded(4, 1, "a restored expiry ts + r past 10^18 is exact, and `at` may be as large as 10^18")
def test_restore_expiry_past_max_number(impl):
    big = 10**18
    run_queries(impl, *query_rows([(f"0 PUT_WITH_TTL t a 1 {big}", "true"), (f"{big - 3} RESTORE t 1", "1"),
                      (f"{big - 1} TTL t a", str(big - 3)), (f"{big} SNAPSHOT t {big}", "a(1)")]))


@graded(4, 2, "after RESTORE, SCAN, USAGE and TOP see the restored blocks")
def test_reads_after_restore(impl):
    run_queries(impl, *query_rows([("1 PUT t a 5", "true"), ("2 PUT t b 7", "true"), ("3 PUT u a 6", "true"), ("4 DROP t", "2"),
                      ("5 PUT t c 1", "true"), ("6 TOP 2", "u(6),t(1)"), ("7 RESTORE t 2", "2"), (scan_all(8), "b(7),a(5)"),
                      ("9 USAGE t", "2,12"), ("10 TOP 2", "t(12),u(6)")]))


@graded(4, 2, "many versions of one key: each past timestamp sees its own size")
def test_many_versions(impl):
    rows = [(f"{i} PUT t k {i * 10}", "true" if i == 1 else "false") for i in range(1, 41)]
    rows += [(f"{40 + j} SNAPSHOT t {at}", f"k({at * 10})" if at else "") for j, at in enumerate([0, 1, 2, 17, 39, 40], 1)]
    rows += [("50 RESTORE t 23", "1"), ("51 GET t k", "230"), ("52 SNAPSHOT t 49", "k(400)")]
    run_queries(impl, *query_rows(rows))


@graded(4, 2, "a long timestamped call (2,000 queries) with snapshots and restores matches the oracle")
def test_long_call(impl):
    run_queries(impl, seeded_timed(404, 2000, 4), oracle=oracle)


STEP = st.tuples(st.integers(1, 3), st.integers(0, 59), st.sampled_from(TENANTS), st.sampled_from(KEYS),
                 st.sampled_from(SIZES), st.sampled_from(PREFIXES), st.sampled_from(TOPS), st.integers(1, 8),
                 st.integers(0, 12))


@graded(4, 6, "random timestamped calls with snapshots and restores, mixing every operation, match a slow oracle")
@PROPERTY
@given(start=st.integers(-1, 3), steps=st.lists(STEP, max_size=40))
@example(start=0, steps=[(1, 10, "a", "k", "5", "", "1", 3, 0), (1, 4, "a", "k", "5", "", "1", 3, 0),
                         (4, 16, "a", "k", "5", "", "1", 3, 2), (1, 13, "a", "k", "5", "", "1", 3, 0)])
def test_matches_oracle(impl, start, steps):
    run_queries(impl, timed_stream(steps, start, 4), oracle=oracle)
