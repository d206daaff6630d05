"""A one-sided range (or a test of values alone) that every live file's stats pass becomes TRUE before planning
(``service.catalog.planner.sets.simplify``): the answer must be exactly the one the leaf's SQL gives,
so each way a row can fail the test (a bound on the wrong side, either inclusive or strict, a
row without values, a past snapshot) must keep the leaf, and only then may it fold away.
Both backends, Variant paths and plain columns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from service.catalog import Catalog
from service.catalog import repository as repo
from service.catalog.planner import routes, sets
from service.pruning.conditions import Constant, compile_expression
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.parse_sql import parse_sql
from tests.catalog.factories import FLOAT64, INT64, cs, fs, ps, with_columns

NS, T = "ns", "t"
N = 40
A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'double')"


def _files() -> list[Any]:
    # a: file i holds [10 i, 10 i + 9]; b: [i + 1, i + 50], except file 7 (NULLs only);
    # x (a plain column): [i, i + 5].
    out = []
    for i in range(N):
        b = ps('"b"', FLOAT64, None, None, values=0, nulls=10) if i == 7 else ps('"b"', FLOAT64, i + 1.0, i + 50.0)
        out.append(with_columns(fs(f"s3://b/t/f{i:03d}.parquet", ps('"a"', INT64, 10 * i, 10 * i + 9), b), cs("x", INT64, i, i + 5)))
    return out


@pytest.fixture
def cat(catalog_url: str) -> Iterator[Catalog]:
    c = Catalog(catalog_url)
    c.create_table(NS, T, ["v"])
    c.commit(NS, T, _files())
    yield c
    c.close()


def _parse(cat: Catalog, sql: str) -> Any:
    return parse_sql(sql, schema=cat.table_schema(NS, T))


def _simplified(cat: Catalog, sql: str, snapshot: int | None = None) -> Any:
    cond = merge_conjunctions(compile_expression(_parse(cat, sql)))
    with cat.engine.connect() as conn:
        t = repo.require_table(conn, NS, T)
        snap = t.current_snapshot_id if snapshot is None else snapshot
        return sets.simplify(sets.Planner(conn, t, snap, snap == t.current_snapshot_id), cond)


def _set_answer(cat: Catalog, sql: str) -> list[str]:
    cond = merge_conjunctions(compile_expression(_parse(cat, sql)))
    with cat.engine.connect() as conn:
        t = repo.require_table(conn, NS, T)
        page = routes.Page(sets.Planner(conn, t, t.current_snapshot_id, True), cond, [])
        return [r[1] for r in routes.set_rows(page, 0, N + 10)]


def _every_file(c: Any) -> bool:
    return isinstance(c, Constant) and c.might_match


@pytest.mark.parametrize(
    ("sql", "folds"),
    [
        (f"{A} >= 0", True),
        (f"{A} > 9", False),  # file 0's max is 9: a strict bound on it fails
        (f"{A} >= 9", True),
        (f"{A} < {10 * (N - 1)}", False),  # the last file's min
        (f"{A} <= {10 * (N - 1)}", True),
        (f"{B} > 0", False),  # file 7 holds NULLs only: the test rejects it
        (f"{A} >= 0 AND {B} > 20", False),
        (f"{A} BETWEEN 0 AND 1000", False),  # two-sided: not folded (the set plan is cheap)
        # A type the path is not stored as: only rows without values fail (issue 34's string term
        # on an int64 path; at 3,000,000 files its count read every stats row of the path).
        ("variant_get(v, '$.a', 'string') > 'x'", True),
        ("variant_get(v, '$.b', 'string') > 'x'", False),  # file 7 holds NULLs only
        ("x >= 0", True),  # a plain column, through ducklake_file_column_stats
        ("x > 0", True),
        ("x > 5", False),  # file 0's max
        (f"x < {N - 1}", False),
        (f"x <= {N - 1}", True),
    ],
)
def test_folds_exactly_when_every_file_passes(cat: Catalog, sql: str, folds: bool) -> None:
    got = _simplified(cat, sql)
    assert _every_file(got) is folds, f"{sql}: {got!r}"
    # Whatever the route, the answer is the unsimplified set plan's.
    assert [c.path for c in cat.plan(NS, T, _parse(cat, sql), page_size=N + 10).candidates] == _set_answer(cat, sql)


def test_folding_inside_and_and_or(cat: Catalog) -> None:
    got = _simplified(cat, f"{A} >= 0 AND {B} > 20")
    assert not _every_file(got) and "'\"b\"'" in repr(got) and "'\"a\"'" not in repr(got)
    assert _every_file(_simplified(cat, f"{A} >= 0 OR {B} > 20"))


def test_a_folded_plan_counts_from_the_table_counters(cat: Catalog) -> None:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *a: Any) -> None:
        seen.append(statement)

    event.listen(cat.engine, "before_cursor_execute", record)
    r = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=5, counts=True)
    event.remove(cat.engine, "before_cursor_execute", record)
    assert (r.files_considered, r.files_kept, r.files_pruned, r.rows_skipped, r.bytes_skipped) == (N, N, 0, 0, 0)
    assert not [s for s in seen if "count(*), coalesce(sum" in s], seen
    assert len(r.candidates) == 5 and r.next_page_token is not None


def test_never_at_a_past_snapshot(cat: Catalog) -> None:
    first = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=1).snapshot_id
    cat.commit(NS, T, [fs("s3://b/t/late.parquet", ps('"a"', INT64, -5, -1))])
    assert not _every_file(_simplified(cat, f"{A} >= 0", first))
    assert not _every_file(_simplified(cat, f"{A} >= 0"))  # the new file fails it now
    assert _every_file(_simplified(cat, f"{A} >= -5"))


def test_removed_files_no_longer_count(cat: Catalog) -> None:
    assert not _every_file(_simplified(cat, f"{B} > 0"))
    cat.remove(NS, T, ["s3://b/t/f007.parquet"])  # the file holding NULLs only
    assert _every_file(_simplified(cat, f"{B} > 0"))
    assert [c.path for c in cat.plan(NS, T, parse_sql(f"{B} > 0"), page_size=N).candidates] == _set_answer(cat, f"{B} > 0")


def test_explain_keeps_each_files_reasons(cat: Catalog) -> None:
    r = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=3, explain=True)
    assert r.explain and all(e.kept for e in r.explain)
    assert all("every live file" not in e.reason for e in r.explain), [e.reason for e in r.explain]
