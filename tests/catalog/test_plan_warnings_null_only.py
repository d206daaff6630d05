"""The type-mismatch warning (``type_not_comparable``: the CLI's, REST's and the dashboard
playground's one source) judges a path by the types that hold values: a file where the path is
stored as another type but holds only nulls neither hides a real mismatch nor makes a false one.
Both backends, at the current snapshot (a past one reads every type ever stored: a superset)."""

from __future__ import annotations

import pytest

from service.catalog import Catalog
from service.pruning.parse_sql import parse_sql
from tests.catalog.factories import INT64, VARCHAR, fs, ps

NS, T = "ns", "t"


def _warnings(cat: Catalog, sql: str) -> list[tuple[str, str]]:
    r = cat.plan(NS, T, parse_sql(sql, schema=cat.table_schema(NS, T)), counts=True)
    return [(w.type, w.message) for w in r.warnings]


@pytest.fixture
def cat(catalog: Catalog) -> Catalog:
    """``$.a``: int64 with values in five files, varchar holding only nulls in a sixth; ``$.b``:
    varchar with values in five files, int64 holding only nulls in a sixth; ``$.c``: only nulls,
    as int64, in every file."""
    files = [
        fs(f"s3://b/t/f{i}.parquet", ps('"a"', INT64, i, i + 9), ps('"b"', VARCHAR, f"k{i}", f"k{i + 5}"), ps('"c"', INT64, None, None, values=0, nulls=3))
        for i in range(5)
    ]
    files.append(
        fs(
            "s3://b/t/nulls.parquet",
            ps('"a"', VARCHAR, None, None, values=0, nulls=4),
            ps('"b"', INT64, None, None, values=0, nulls=4),
            ps('"c"', INT64, None, None, values=0, nulls=4),
        )
    )
    catalog.create_table(NS, T, ["v"])
    catalog.commit(NS, T, files)
    return catalog


def test_a_null_only_file_does_not_hide_a_mismatch(cat: Catalog) -> None:
    """``$.a`` asked as a string: its values are all int64 (the varchar file has none), so the
    term cannot prune on values, which the warning says, naming the null-only type apart."""
    warned = _warnings(cat, "variant_get(v, '$.a', 'string') > 'x'")
    assert [t for t, _ in warned][:1] == ["type_not_comparable"], warned
    message = warned[0][1]
    assert "stored as int64" in message and "varchar holding only nulls" in message, message


def test_a_null_only_file_makes_no_false_mismatch(cat: Catalog) -> None:
    """Asked as the type its values have, a path warns of nothing, whichever type its null-only
    file stores; a path holding no value at all is no mismatch either (nothing to compare)."""
    for sql in (
        "variant_get(v, '$.a', 'bigint') > 3",
        "variant_get(v, '$.b', 'string') > 'k2'",
        "variant_get(v, '$.c', 'string') > 'x'",
    ):
        assert _warnings(cat, sql) == [], sql
