"""A file's short reason (the playground's and ``plan_files``' words) names the deciding bound
once, however many comparisons of an OR or AND agree: "max 20 < 100 and 199 more"."""

from __future__ import annotations

from service.pruning.evaluator import MAX_SHORT_GROUPS, _joined, evaluate, stats_by_path
from service.pruning.parse_sql import parse_sql
from tests.pruning.reference import stats_row as S

A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'bigint')"
ROWS = [S('"a"', "int64", 5, 0, 10, 20), S('"b"', "int64", 5, 0, 0, 3)]


def test_an_or_of_200_comparisons_names_the_bound_once() -> None:
    sql = " OR ".join(f"{A} = {100 + 7 * k}" for k in range(200))
    assert len(sql) > 5_000
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert not v.might_match
    assert v.short == "max 20 < 100 and 199 more"
    # The full reason (explain) still lists every comparison.
    assert v.reason.count("max 20 < ") == 200


def test_two_paths_each_name_their_bound_once() -> None:
    sql = " OR ".join(f"({A} = {100 + k} AND {B} > {10 + k})" for k in range(50))
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert not v.might_match
    assert v.short == "$.a: max 20 < 100 and 49 more"
    sql = " OR ".join(f"{A} = {100 + k} OR {B} > {10 + k}" for k in range(50))
    v = evaluate(parse_sql(sql), stats_by_path(ROWS))
    assert v.short == "$.a: max 20 < 100 and 49 more; $.b: max 3 <= 10 and 49 more"


def test_joined_keeps_a_few_kinds_and_counts_the_rest() -> None:
    assert _joined(["x 1", "", "x 1", "y"]) == "x 1; y"
    assert _joined(["max 5 < 7", "max 5 < 9"]) == "max 5 < 7 and 1 more"
    kinds = [f"kind{i} is out" for i in range(MAX_SHORT_GROUPS + 2)]
    assert _joined(kinds) == "; ".join(kinds[:MAX_SHORT_GROUPS]) + "; and 2 more"
    assert _joined(["a b 1", "a b 2", *kinds]) == "a b 1 and 1 more; kind0 is out; kind1 is out; and 3 more"
