"""service/pruning/rewrites.py and selectivity.py: the condition rewrites the SQL planner applies
before translating a condition (pure: no database; the catalog tests check the planner's answers
with them on both backends)."""

from __future__ import annotations

from types import MappingProxyType

from service.pruning.conditions import AllOf, AnyOf, Condition, Constant, LeafCondition, compile_expression
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.parse_sql import parse_sql
from service.pruning.rewrites import (
    EVERY_FILE,
    fold_true_leaves,
    keeps_every_file,
    partition_row_usable,
    restrict_partition_leaves,
)
from service.pruning.schema import ColumnInfo, TableSchema
from service.pruning.selectivity import looks_selective, selectivity_rank
from service.values import ShreddedType

INT32, INT64, VARCHAR, DATE, FLOAT64 = (ShreddedType.parse(n) for n in ("int32", "int64", "varchar", "date", "float64"))
A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'double')"
SCHEMA = TableSchema(
    variant_columns=("v",),
    columns=MappingProxyType({"n": ColumnInfo("n", INT64, partition=True), "s": ColumnInfo("s", VARCHAR)}),
)


def _cond(sql: str) -> Condition:
    return merge_conjunctions(compile_expression(parse_sql(sql, schema=SCHEMA)))


def _leaves(c: Condition) -> list[LeafCondition]:
    if isinstance(c, LeafCondition):
        return [c]
    if isinstance(c, AllOf | AnyOf):
        return [leaf for k in c.children for leaf in _leaves(k)]
    return []


def test_folding_leaves_every_file_passes() -> None:
    c = _cond(f"{A} > 5 AND {B} < 3")
    first, second = _leaves(c)
    assert fold_true_leaves(c, lambda leaf: leaf == first) == second  # an AND drops it
    assert fold_true_leaves(c, lambda leaf: True) == EVERY_FILE
    assert fold_true_leaves(c, lambda leaf: False) == c
    either = _cond(f"{A} > 5 OR {B} < 3")
    assert fold_true_leaves(either, lambda leaf: leaf == _leaves(either)[1]) == EVERY_FILE  # an OR becomes TRUE
    assert fold_true_leaves(either, lambda leaf: False) == either
    asked: list[LeafCondition] = []
    fold_true_leaves(_cond(f"({A} > 1 OR {B} > 2) AND {A} < 9"), lambda leaf: asked.append(leaf) or False)
    assert len(asked) == 3  # each leaf asked once, in the tree's order
    assert keeps_every_file(EVERY_FILE) and not keeps_every_file(Constant(False, "")) and not keeps_every_file(c)


def test_partition_rows_of_another_type_are_never_read() -> None:
    """(Moved here from tests/catalog/test_columns.py with the function it tests.)"""
    assert partition_row_usable(INT32, INT64)
    assert partition_row_usable(DATE, DATE)
    assert not partition_row_usable(INT64, INT32)
    assert not partition_row_usable(INT32, VARCHAR)
    assert not partition_row_usable(DATE, VARCHAR)
    assert not partition_row_usable(INT32, FLOAT64)
    assert not partition_row_usable(VARCHAR, None)


def test_partition_leaves_keep_the_cases_of_usable_stored_types_only() -> None:
    c = _cond(f"n = 3 AND {A} = 1")
    assert restrict_partition_leaves(c, {}) is c
    same = restrict_partition_leaves(c, {"n": INT64})
    assert same == c  # int64 and narrower integers all read as int64
    as_text = restrict_partition_leaves(c, {"n": VARCHAR})
    [n_leaf, a_leaf] = _leaves(as_text)
    assert n_leaf.column == "n" and not any(INT64 in case.types for case in n_leaf.cases)
    assert a_leaf == _leaves(c)[1]  # Variant leaves are never restricted
    unknown = restrict_partition_leaves(c, {"n": None})
    assert _leaves(unknown)[0].cases == ()  # no stored type is known to read as the column's


def test_selectivity_of_shapes() -> None:
    assert selectivity_rank(_cond(f"{A} BETWEEN 1 AND 5")) == 0
    assert selectivity_rank(_cond(f"{A} IN (1, 2)")) == 0
    assert selectivity_rank(_cond(f"{A} > 1")) == 1
    assert selectivity_rank(_cond(f"{A} IS NULL")) == 2
    assert selectivity_rank(_cond(f"{A} > 1 AND {B} < 2")) == 3
    assert looks_selective(_cond(f"{A} = 4 AND {B} > 1"))  # an AND needs one selective child
    assert not looks_selective(_cond(f"{A} = 4 OR {B} > 1"))  # an OR needs every child
    assert looks_selective(_cond(f"{A} = 4 OR {A} BETWEEN 10 AND 20"))
    assert looks_selective(Constant(False, "")) and not looks_selective(EVERY_FILE)


def test_selective_only_through_narrow_keys() -> None:
    """The caller says which keys a point or bounded range keeps narrow (numbers, not strings):
    an AND stays selective through one narrow child, an OR needs every child narrow."""
    def numbers(leaf: LeafCondition) -> bool:
        return leaf.variant_path != '"s"'

    S = "variant_get(v, '$.s', 'string')"
    assert looks_selective(_cond(f"{S} = 'x'")) and not looks_selective(_cond(f"{S} = 'x'"), numbers)
    assert not looks_selective(_cond(f"{S} LIKE 'pur%'"), numbers)
    assert looks_selective(_cond(f"{A} = 4"), numbers)
    assert looks_selective(_cond(f"{S} = 'x' AND {A} = 4"), numbers)
    assert not looks_selective(_cond(f"{S} = 'x' OR {A} = 4"), numbers)
    assert not looks_selective(_cond(f"{S} = 'x' AND {A} > 4"), numbers)
