"""INTERVAL, TIMETZ and GEOMETRY plain columns (issue 30): rows of exact counts and no bounds,
stored and read back on both backends; IS NULL / IS NOT NULL prune on those counts, a comparison
on them is never used (a warning, every file kept), and a bound of such a type is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from service.catalog import Catalog
from service.errors import InvalidStatsError
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from service.stats.model import ColumnStats
from service.values import Kind, ShreddedType, check_bound
from tests.catalog.factories import fs, ps


def _files(tmp_path: Path) -> list[Path]:
    import duckdb

    con = duckdb.connect()
    some, none = tmp_path / "some.parquet", tmp_path / "none.parquet"
    con.execute(
        "COPY (SELECT CASE WHEN i = 2 THEN NULL ELSE TIMETZ '10:00:00+01' + INTERVAL (i) MINUTE END AS ttz, "
        "CASE WHEN i = 1 THEN NULL ELSE INTERVAL (i) DAY END AS iv, i AS k FROM range(4) r(i)) TO ?",
        [str(some)],
    )
    con.execute("COPY (SELECT NULL::TIMETZ AS ttz, NULL::INTERVAL AS iv, 9 AS k) TO ?", [str(none)])
    return [some, none]


def _plan(catalog: Catalog, sql: str) -> tuple[list[str], list[str]]:
    r = catalog.plan("lake", "t", lambda schema: parse_sql(sql, schema=schema))
    return sorted(Path(c.path).name for c in r.candidates), [w.type for w in r.warnings]


def test_counts_only_columns_are_stored_and_prune_on_nulls(catalog: Catalog, tmp_path: Path) -> None:
    files = [extract_file(str(p)) for p in _files(tmp_path)]
    catalog.create_table("lake", "t", [])
    catalog.commit("lake", "t", files)
    stored = catalog.file_stats("lake", "t", files[0].path)
    rows = {c.column: c for c in stored.columns}
    assert (rows["ttz"].column_type, rows["iv"].column_type) == (ShreddedType(Kind.TIMETZ), ShreddedType(Kind.INTERVAL))
    assert [(rows[c].value_count, rows[c].null_count, rows[c].min_value, rows[c].max_value) for c in ("ttz", "iv")] == [
        (3, 1, None, None), (3, 1, None, None),
    ]  # fmt: skip
    assert sorted(stored.columns, key=lambda c: c.column) == sorted(files[0].columns, key=lambda c: c.column)
    assert _plan(catalog, "ttz IS NOT NULL") == (["some.parquet"], [])
    assert _plan(catalog, "iv IS NULL AND k = 9") == (["none.parquet"], [])
    for sql in ("iv > 5", "ttz BETWEEN 'a' AND 'b'", "iv IN (1, 2)"):
        kept, warnings = _plan(catalog, sql)
        assert kept == ["none.parquet", "some.parquet"] and "term_not_used" in warnings, sql


@pytest.mark.parametrize("kind", [Kind.TIMETZ, Kind.INTERVAL, Kind.GEOMETRY])
def test_a_bound_of_a_counts_only_type_is_refused(kind: Kind, catalog: Catalog, tmp_path: Path) -> None:
    t = ShreddedType(kind)
    for v in ("10:00:00", 5, b"\x01"):
        with pytest.raises(InvalidStatsError, match="no bounds"):
            check_bound(t, v)
    f = extract_file(str(_files(tmp_path)[0]))
    bad = ColumnStats("x", t, 1, 1, 0, "a", "b", None)
    catalog.create_table("lake", "t", [])
    with pytest.raises(InvalidStatsError):
        catalog.commit("lake", "t", [replace(f, columns=(*f.columns, bad))])
    assert catalog.list_files("lake", "t") == []


@pytest.mark.parametrize("kind", [Kind.TIMETZ, Kind.INTERVAL, Kind.GEOMETRY])
def test_no_variant_path_has_a_counts_only_type(kind: Kind, catalog: Catalog) -> None:
    """A plain column's type only: a client's Variant path row of that type is refused, nothing
    committed."""
    catalog.create_table("lake", "t", ["v"])
    row = ps('"a"', ShreddedType(kind), None, None)
    with pytest.raises(InvalidStatsError, match=f"{kind.value} is not a shredded Variant type"):
        catalog.commit("lake", "t", [fs(None, row)])
    assert catalog.list_files("lake", "t") == []
