"""The per-Catalog table metadata caches (columns, predicate schema and Variant paths' dictionary
rows, :class:`TableCache`): a warm plan reads the table row and its candidates alone, and a table
changed by another process (another server worker: another ``Catalog`` on the same database) is
never answered from the cache, whether the change made a new snapshot (a commit, a removal) or
not (``refresh`` adding columns to files in place). Both backends."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from service.catalog import Catalog
from service.errors import UnknownColumnError
from service.pruning.expressions import BooleanExpression
from service.pruning.parse_sql import parse_sql
from service.pruning.schema import TableSchema
from tests.catalog.factories import INT64, cs, fs, ps, with_columns

#: The planner's read of a key's dictionary rows.
PATH_ROWS = "SELECT shredcat_variant_path.path_id, shredcat_variant_path.shredded_type"


def _variant_file(i: int, lo: int, hi: int) -> Any:
    return fs(f"s3://b/t/f{i:04d}.parquet", ps('"a"', INT64, lo, hi))


def _plain_file(i: int, lo: int, hi: int) -> Any:
    return with_columns(_variant_file(i, lo, hi), cs("x", INT64, lo, hi))


def _sql(text: str) -> Callable[[TableSchema], BooleanExpression]:
    return lambda schema: parse_sql(text, schema=schema)


def _kept(cat: Catalog, text: str) -> list[str]:
    return [c.path for c in cat.plan("ns", "t", _sql(text)).candidates]


@contextmanager
def _statements(cat: Catalog) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(cat.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(cat.engine, "before_cursor_execute", record)


def test_a_warm_plan_reads_the_table_row_alone_until_the_table_changes(catalog_url: str) -> None:
    with Catalog(catalog_url) as worker1, Catalog(catalog_url) as worker2:
        worker2.create_table("ns", "t", ["v"])
        worker2.commit("ns", "t", [_variant_file(i, i * 10, i * 10 + 9) for i in range(3)])
        point = "variant_get(v, '$.a', 'bigint') = 15"
        with _statements(worker1) as cold:
            assert _kept(worker1, point) == [_variant_file(1, 0, 0).path]
        with _statements(worker1) as warm:
            assert _kept(worker1, point) == [_variant_file(1, 0, 0).path]
        # The columns (and the predicate schema), and the path's dictionary rows, come from the
        # caches: two statements fewer.
        assert len(warm) == len(cold) - 2
        assert not [s for s in warm if s.startswith(PATH_ROWS)]
        worker2.commit("ns", "t", [_variant_file(9, 90, 99), _variant_file(5, 15, 15)])
        with _statements(worker1) as after_commit:
            assert _kept(worker1, point) == [_variant_file(1, 0, 0).path, _variant_file(5, 0, 0).path]
        assert len(after_commit) == len(cold)  # a new snapshot: read again
        # A file whose bounds are unknown must be kept: the rows read again count it as unkeyed
        # (stale rows, cached before it came, would send the point to the key index alone).
        unknown = fs("s3://b/t/unknown.parquet", ps('"a"', INT64, None, None))
        worker2.commit("ns", "t", [unknown])
        assert unknown.path in _kept(worker1, point)
        worker2.remove("ns", "t", [unknown.path])
        # A removal is a snapshot too: the path's rows (its live files, its counters) are read again.
        worker2.remove("ns", "t", [_variant_file(1, 0, 0).path, _variant_file(5, 0, 0).path])
        with _statements(worker1) as after_removal:
            assert _kept(worker1, point) == []
        assert [s for s in after_removal if s.startswith(PATH_ROWS)]


def test_a_column_committed_by_another_worker_is_seen_at_once(catalog_url: str) -> None:
    with Catalog(catalog_url) as worker1, Catalog(catalog_url) as worker2:
        worker2.create_table("ns", "t", ["v"])
        worker2.commit("ns", "t", [_variant_file(0, 0, 9)])
        assert _kept(worker1, "variant_get(v, '$.a', 'bigint') = 5") == [_variant_file(0, 0, 0).path]
        with pytest.raises(UnknownColumnError):
            _kept(worker1, "x = 15")
        worker2.commit("ns", "t", [_plain_file(1, 0, 9), _plain_file(2, 10, 19)])
        kept = _kept(worker1, "x = 15")
        assert _plain_file(2, 0, 0).path in kept and _plain_file(1, 0, 0).path not in kept
        assert "x" in worker1.table_schema("ns", "t").columns


def test_columns_refreshed_in_place_by_another_worker_are_seen_at_once(empty_db_url: str) -> None:
    """``refresh`` adds the columns of files committed before the catalog kept them, without a
    new snapshot: a worker that planned before must not keep answering from its cache."""
    from service.catalog.db import downgrade, upgrade_to_head

    upgrade_to_head(empty_db_url)
    files = [_plain_file(i, i * 10, i * 10 + 9) for i in range(3)]
    with Catalog(empty_db_url) as cat:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", [dataclasses.replace(f, columns=()) for f in files])
    downgrade(empty_db_url, "0002")
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as worker1, Catalog(empty_db_url) as worker2:
        before = worker1.get_table("ns", "t").current_snapshot_id
        assert _kept(worker1, "variant_get(v, '$.a', 'bigint') = 15") == [files[1].path]
        with pytest.raises(UnknownColumnError):
            _kept(worker1, "x = 15")
        by_path = {f.path: f for f in files}
        assert worker2.refresh("ns", "t", by_path.__getitem__).refreshed == 3
        assert worker1.get_table("ns", "t").current_snapshot_id == before  # in place: no new snapshot
        assert _kept(worker1, "x = 15") == [files[1].path]
        assert "x" in worker1.table_schema("ns", "t").columns


def test_a_tree_is_compiled_once_by_identity_never_by_equality(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API hands the catalog the same parsed tree for the same predicate text: its condition
    is compiled once. An equal tree that is another object is compiled anew (equal literals may
    differ in type: ``1 == 1.0``), and each gives its own answer."""
    import service.pruning.conditions as conditions

    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_variant_file(i, 10 * i, 10 * i + 5) for i in range(3)])
    compiled: list[object] = []
    real = conditions.compile_expression

    def counting(tree: Any) -> Any:
        compiled.append(tree)
        return real(tree)

    monkeypatch.setattr(conditions, "compile_expression", counting)
    tree = parse_sql("variant_get(v, '$.a', 'bigint') = 12")
    for _ in range(3):
        assert [c.path for c in catalog.plan("ns", "t", tree).candidates] == ["s3://b/t/f0001.parquet"]
    assert compiled == [tree]
    again = parse_sql("variant_get(v, '$.a', 'bigint') = 12")
    assert again == tree and again is not tree
    assert [c.path for c in catalog.plan("ns", "t", lambda schema: again).candidates] == ["s3://b/t/f0001.parquet"]
    assert len(compiled) == 2


def test_large_trees_are_kept_by_a_few_entries_only(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long IN list or literal (the playground keeps its last parsed predicates, so the same
    object comes back) is compiled once while it is among the last 16 large trees, then again."""
    import service.catalog.service as service_module
    import service.pruning.conditions as conditions

    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_variant_file(i, 10 * i, 10 * i + 5) for i in range(3)])
    compiled: list[object] = []
    real = conditions.compile_expression
    monkeypatch.setattr(conditions, "compile_expression", lambda tree: compiled.append(tree) or real(tree))
    monkeypatch.setattr(service_module, "_COMPILED_LARGE", type(service_module._COMPILED_LARGE)(16))
    tree = parse_sql("variant_get(v, '$.a', 'bigint') IN (12, " + ", ".join(str(i) for i in range(1000, 2000)) + ")")
    for _ in range(2):
        kept = [c.path for c in catalog.plan("ns", "t", tree).candidates]
        assert "s3://b/t/f0001.parquet" in kept and "s3://b/t/f0000.parquet" not in kept
    assert compiled == [tree]
    # One node, but a long literal: large too.
    long = parse_sql(f"variant_get(v, '$.a', 'string') = '{'x' * 5000}'")
    for _ in range(2):
        catalog.plan("ns", "t", long)
    assert compiled[1:] == [long]
    others = [parse_sql(f"variant_get(v, '$.a', 'string') = '{str(k) * 5000}'") for k in range(16)]
    for other in others:
        catalog.plan("ns", "t", other)
    catalog.plan("ns", "t", tree)
    assert compiled[-1] is tree and len(compiled) == 2 + 16 + 1
