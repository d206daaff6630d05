"""The planner's one SQL builder (service/catalog/planner/sql.py): every value becomes a named
bind parameter, numbered in binding order, never text."""

from __future__ import annotations

from service.catalog.planner.sql import Sql


def test_values_are_bound_in_order_never_spliced() -> None:
    sql = Sql()
    hostile = "x'; DROP TABLE ducklake_data_file; --"
    where = f"s.path_id = {sql.bind(7)} AND s.min_bin <= {sql.bind(hostile)} AND s.max_real >= {sql.bind(-0.0)}"
    assert where == "s.path_id = :p1 AND s.min_bin <= :p2 AND s.max_real >= :p3"
    assert sql.params == {"p1": 7, "p2": hostile, "p3": -0.0}
    assert sql.bind(7) == ":p4" and sql.params["p4"] == 7  # the same value twice: two parameters


def test_each_plan_starts_its_own_numbering() -> None:
    a, b = Sql(), Sql()
    a.bind(1)
    assert b.bind(2) == ":p1" and b.params == {"p1": 2} and a.params == {"p1": 1}
