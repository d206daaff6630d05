"""How the planner builds its statements (service/catalog/planner/sql.py and shapes.py): every
value is a bind parameter named by its position in the plan's values, never text; a statement's
SQL is compiled once per shape and dialect, and run with the values its shape names."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.dialects import postgresql, sqlite

from service.catalog.planner import shapes
from service.catalog.planner import sql as S
from service.catalog.planner.sql import VARIANT_STATS, Binds, compiled, run

HOSTILE = "x'; DROP TABLE ducklake_data_file; --"


def _branch(binds: Binds, path_id: int, hi: Any, lo: Any) -> shapes.Shape:
    test = ("and", ("cmp", "s", "min_bin", False, "<=", binds(hi)), ("cmp", "s", "max_real", False, ">=", binds(lo)))
    return ("branch", VARIANT_STATS, binds(path_id), ("live", "s"), test)


def test_values_are_bound_by_position_never_spliced() -> None:
    binds = Binds()
    shape = _branch(binds, 7, HOSTILE, -0.0)
    assert binds.values == [HOSTILE, -0.0, 7]
    for dialect in (sqlite.pysqlite.dialect(), postgresql.psycopg.dialect()):
        sql, order, positional = compiled(dialect, shape)
        assert "DROP" not in sql and "7" not in sql
        assert "s.value_count" not in sql and "s.end_snapshot IS NULL" in sql
        assert sorted(set(order)) == [0, 1, 2]
        assert positional == (dialect.name == "sqlite")


def test_each_plan_numbers_its_own_values() -> None:
    a, b = Binds(), Binds()
    a(1)
    assert b(2) == 0 and b.values == [2] and a.values == [1]


def test_a_shape_is_built_once_and_run_with_each_plans_values(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = create_engine("sqlite://")
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE ducklake_file_variant_stats (data_file_id INTEGER, path_id INTEGER, end_snapshot INTEGER, "
            "min_bin TEXT, max_real REAL)"
        )
        conn.exec_driver_sql(
            "INSERT INTO ducklake_file_variant_stats VALUES (1, 7, NULL, 'a', 5.0), (2, 7, NULL, 'z', 5.0), "
            "(3, 8, NULL, 'a', 5.0)"
        )
        first = Binds()
        shape = _branch(first, 7, "m", 1.0)
        assert [r[0] for r in run(conn, shape, first.values)] == [1]
        built: list[shapes.Shape] = []
        real = S.build

        def counted(s: shapes.Shape) -> Any:
            built.append(s)
            return real(s)

        monkeypatch.setattr(S, "build", counted)
        again = Binds()
        same = _branch(again, 8, HOSTILE, 1.0)
        assert same == shape  # the values differ, the shape does not
        assert [r[0] for r in run(conn, same, again.values)] == [3]
        assert built == []
        other = Binds()
        assert [r[0] for r in run(conn, (*_branch(other, 7, "zz", 1.0)[:4], ("constant", True)), other.values)] == [1, 2]
        assert len(built) == 1


def test_a_row_test_names_the_columns_it_reads() -> None:
    test = ("or", ("and", ("count", "s", "value_count", ">"), ("unkeyed", "s", "num")), ("nan", "s"))
    assert set(shapes.row_columns(test)) == {"value_count", "min_num", "max_num", "contains_nan"}


def test_the_kept_statements_are_bounded_by_their_length(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "_kept", type(S._kept)())
    monkeypatch.setattr(S, "_kept_chars", 0)
    dialect = sqlite.pysqlite.dialect()
    one = len(compiled(dialect, _branch(Binds(), 1, "a", 1.0))[0])
    monkeypatch.setattr(S, "KEPT_CHARS", 3 * one + one // 2)
    shapes_seen = []
    for n in range(6):  # the same statement, its path's position moved: another shape each
        b = Binds()
        for _ in range(n):
            b(None)
        shape = _branch(b, 1, "a", 1.0)
        shapes_seen.append(shape)
        compiled(dialect, shape)
    assert len(S._kept) == 3 and S._kept_chars <= S.KEPT_CHARS
    assert [k[2] for k in S._kept] == shapes_seen[3:]  # the least recently used went first
