"""Point lists padded to powers of two (:func:`service.catalog.planner.sql.padded`): IN lists of N
lengths compile O(log N) statement shapes, answer as before, and the padding never takes a plan
to the term limit (413) or past SQLite's 500 compound terms."""

from __future__ import annotations

import math
from collections import OrderedDict

import pytest

from service.catalog import Catalog
from service.catalog.planner import sql as planner_sql
from service.pruning.parse_sql import parse_sql
from tests.catalog.factories import INT64, fs, ps

#: Keys ``a0``..``a10`` on every file; file i holds values [10 i, 10 i + 9] on each.
KEYS = 11
FILES = 40


def _table(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    files = [
        fs(f"s3://b/t/f{i:03d}.parquet", *(ps(f'"a{k}"', INT64, 10 * i, 10 * i + 9) for k in range(KEYS)))
        for i in range(FILES)
    ]
    catalog.commit("ns", "t", files)


def _in(key: int, values: list[int]) -> str:
    return f"variant_get(v, '$.a{key}', 'bigint') IN ({', '.join(map(str, values))})"


def _paths(catalog: Catalog, sql: str) -> list[str]:
    return sorted(c.path for c in catalog.plan("ns", "t", parse_sql(sql)).candidates)


def _files_of(values: list[int]) -> list[str]:
    return sorted({f"s3://b/t/f{v // 10:03d}.parquet" for v in values if v < 10 * FILES})


def test_in_lists_of_n_lengths_compile_at_most_log2_n_plus_1_shapes(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planner_sql, "_kept", OrderedDict())
    monkeypatch.setattr(planner_sql, "_kept_chars", 0)
    _table(catalog)
    _paths(catalog, "variant_get(v, '$.a0', 'bigint') > 5")  # the statements any plan of the key needs
    before = set(planner_sql._kept)
    n = 40
    for length in range(1, n + 1):
        values = [7 * i + 3 for i in range(length)]
        assert _paths(catalog, _in(0, values)) == _files_of(values), length
    made = set(planner_sql._kept) - before
    assert len(made) <= math.ceil(math.log2(n)) + 1, len(made)

    # 33 points on each of 11 keys: 363 terms and 11 for the union, within the 400 a plan may
    # count (the padding's terms are not counted: 64 points each would be 715).
    values = [7 * i + 3 for i in range(33)]
    predicate = " OR ".join(_in(k, values) for k in range(KEYS))
    assert _paths(catalog, predicate) == _files_of(values)
