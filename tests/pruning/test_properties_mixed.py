"""Property test over whole predicates: Variant paths, plain columns, a partition column and
unknown sub-expressions in one tree, over generated files; a pruned file never holds a row the
predicate selects.

Each table has a partition column ``p`` (one value per file, sometimes NULL, as
``__HIVE_DEFAULT_PARTITION__``), plain columns ``i`` (bigint; some files store it as int32,
written before the column was widened), ``s`` (string, long values truncated in the stats),
``d`` (date), ``x`` (double with NaN and -0.0), and a Variant column ``v`` whose path ``$.a`` is
shredded as one type per table (sometimes as a narrower integer, sometimes not shredded in a
file). Stats are computed from the rows (tests/pruning/reference.py); predicates are random trees
of leaves on all three kinds of term and of unknown sub-expressions (``length(s) > 2``,
``i % 2 = 0``...) whose value on a row the test computes in Python. Ground truth is the
reference's three-valued evaluation of the tree on every row, once with the unknowns' real values
and once letting them take any value (what the pruner must assume). Deterministic (a fixed seed)
and bounded to a few seconds; SHREDCAT_MIXED_TABLES raises the number of tables.
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from service.errors import InvalidPredicateError
from service.pruning.evaluator import FileEvaluator, stats_by_path
from service.pruning.expressions import (
    And,
    BooleanExpression,
    ColumnTerm,
    Not,
    Op,
    Or,
    Term,
    Unknown,
    VariantTerm,
    compare,
    in_list,
    rewrite_not,
    unary,
    variant,
)
from service.pruning.literals import DateLiteral, LiteralValue, TimestampLiteral
from service.pruning.parse_sql import parse_sql, to_sql
from service.pruning.schema import ColumnInfo, TableSchema
from service.stats.model import ColumnStats, PathStats
from service.values import ShreddedType
from tests.pruning.reference import Typed, column_stats, compute_stats, k_not, may_select, spark_cmp

TABLES = int(os.environ.get("SHREDCAT_MIXED_TABLES", "160"))
FILES_PER_TABLE = 8
PREDICATES_PER_TABLE = 10

INT64 = ShreddedType.parse("int64")
INT32 = ShreddedType.parse("int32")
VARCHAR = ShreddedType.parse("varchar")
DATE = ShreddedType.parse("date")
FLOAT64 = ShreddedType.parse("float64")

LONG = "m" * 300
INTS = [-5, -1, 0, 1, 2, 3, 7, 100, 2**31 - 1, -(2**31)]
BIG_INTS = [2**40, -(2**40), 2**63 - 1]
STRINGS = ["", "a", "ab", "abc", "b", "EU", "US", "é", LONG, LONG + "n"]
DATES = [19000, 19783, 19784, 19800, 20000, -1, 0]
FLOATS = [math.nan, -math.inf, -1.5, -0.0, 0.0, 0.5, 1.0, 2.5, math.inf]

# The Variant path's stored type per table, and the target types a predicate reads it as.
VARIANT_CASES: list[tuple[ShreddedType, list[str]]] = [
    (INT64, ["bigint", "bigint", "int", "string"]),
    (INT32, ["bigint", "int"]),
    (VARCHAR, ["string", "string", "int"]),
    (DATE, ["date", "timestamp"]),
    (FLOAT64, ["double", "double", "bigint"]),
]


def _pool(rnd: random.Random, t: ShreddedType) -> Any:
    if t == INT64:
        return rnd.choice(INTS + BIG_INTS)
    if t == INT32:
        return rnd.choice(INTS)
    if t == VARCHAR:
        return rnd.choice(STRINGS)
    if t == DATE:
        return rnd.choice(DATES)
    return rnd.choice(FLOATS)


# --- unknown sub-expressions, with their value on a row -----------------------------------------


def _val(row: dict[str, Any], name: str) -> Any:
    cell = row.get(name)
    return None if cell is None else cell.value


def _length_gt(row: dict[str, Any]) -> bool | None:
    s = _val(row, "s")
    return None if s is None else len(s) > 2


def _mod_even(row: dict[str, Any]) -> bool | None:
    i = _val(row, "i")
    return None if i is None else i % 2 == 0


def _upper_eu(row: dict[str, Any]) -> bool | None:
    s = _val(row, "s")
    return None if s is None else s.upper() == "EU"


def _i_eq_p(row: dict[str, Any]) -> bool | None:
    i, p = _val(row, "i"), _val(row, "p")
    return None if i is None or p is None else i == p


def _x_plus_one(row: dict[str, Any]) -> bool | None:
    x = _val(row, "x")
    return None if x is None else spark_cmp(x + 1.0, 2.0) > 0


def _like_a(row: dict[str, Any]) -> bool | None:
    s = _val(row, "s")
    return None if s is None else s.startswith("a")


UNKNOWN_SQL = {
    "length(s) > 2": _length_gt,
    "i % 2 = 0": _mod_even,
    "upper(s) = 'EU'": _upper_eu,
    "i = p": _i_eq_p,
    "x + 1 > 2": _x_plus_one,
    "s LIKE 'a%'": _like_a,
}


@dataclass
class Table:
    schema: TableSchema
    p_type: ShreddedType
    v_stored: ShreddedType
    v_targets: list[str]
    unknowns: dict[str, Any]  # the parser's text of each unknown -> its Python value
    files: list[tuple[list[dict[str, Any]], dict[tuple[str, str | None], list[PathStats | ColumnStats]]]]


def _schema(p_type: ShreddedType) -> TableSchema:
    cols = {
        "p": ColumnInfo("p", p_type, partition=True),
        "i": ColumnInfo("i", INT64),
        "s": ColumnInfo("s", VARCHAR),
        "d": ColumnInfo("d", DATE),
        "x": ColumnInfo("x", FLOAT64),
    }
    return TableSchema(("v",), MappingProxyType(cols))


def _unknowns(schema: TableSchema) -> dict[str, Any]:
    out = {}
    for text, fn in UNKNOWN_SQL.items():
        node = parse_sql(text, schema=schema)
        if isinstance(node, And):  # a LIKE with a prefix: the range it implies AND the LIKE itself
            node = next(c for c in node.children if isinstance(c, Unknown))
        assert isinstance(node, Unknown), (text, node)
        out[node.text] = fn
    return out


def _make_file(
    rnd: random.Random, p_type: ShreddedType, v_stored: ShreddedType
) -> tuple[list[dict[str, Any]], dict[tuple[str, str | None], list[PathStats | ColumnStats]]]:
    n = rnd.randint(1, 6)
    p_value = None if rnd.random() < 0.15 else _pool(rnd, p_type)
    i_type = INT32 if rnd.random() < 0.3 else INT64  # written before i was widened to bigint
    # The file's own Variant type: sometimes a narrower integer than the table's other files.
    f_v = INT32 if v_stored == INT64 and rnd.random() < 0.3 else v_stored
    missing = {c for c in ("i", "s", "d", "x") if rnd.random() < 0.05}  # column added later
    rows: list[dict[str, Any]] = []
    for _ in range(n):
        row: dict[str, Any] = {"p": None if p_value is None else Typed(p_type, p_value)}
        for name, t in (("i", i_type), ("s", VARCHAR), ("d", DATE), ("x", FLOAT64)):
            null = name in missing or rnd.random() < 0.15
            row[name] = None if null else Typed(t, _pool(rnd, t))
        r = rnd.random()
        if r < 0.1:
            row["v"] = None  # the Variant column is NULL
        elif r < 0.2:
            row["v"] = {}  # the path is missing
        elif r < 0.25:
            row["v"] = {"a": {"x": 1}}  # another shape: NULL for the typed read
        elif r < 0.3:
            row["v"] = {"a": None}  # a Variant null
        else:
            row["v"] = {"a": Typed(f_v, _pool(rnd, f_v))}
        rows.append(row)
    stats: list[PathStats | ColumnStats] = []
    if rnd.random() < 0.85:  # otherwise the path is not fully shredded in this file: no row
        stats.append(
            compute_stats(
                "v",
                '"a"',
                ["a"],
                f_v,
                rows,
                drop_min=rnd.random() < 0.1,
                drop_max=rnd.random() < 0.1,
                unknown_nan=rnd.random() < 0.2,
            )
        )
    for name, t in (("i", i_type), ("s", VARCHAR), ("d", DATE), ("x", FLOAT64)):
        if name in missing or rnd.random() < 0.1:
            continue  # no statistics for the column in this file
        stats.append(
            column_stats(
                name,
                t,
                [r[name] for r in rows],
                drop_min=rnd.random() < 0.1,
                drop_max=rnd.random() < 0.1,
                unknown_nan=rnd.random() < 0.2,
            )
        )
    # The partition value as the stats row it implies (constant over the file's rows).
    stats.append(column_stats("p", p_type, [r["p"] for r in rows]))
    return rows, stats_by_path(stats)


def _table(rnd: random.Random) -> Table:
    p_type = rnd.choice([INT32, DATE, VARCHAR])
    v_stored, v_targets = rnd.choice(VARIANT_CASES)
    schema = _schema(p_type)
    files = [_make_file(rnd, p_type, v_stored) for _ in range(FILES_PER_TABLE)]
    return Table(schema, p_type, v_stored, v_targets, _unknowns(schema), files)


# --- predicates ------------------------------------------------------------------------------


def _literal(rnd: random.Random, t: ShreddedType, pool: list[Any]) -> LiteralValue:
    """A literal for a term of type t: a value of the files, a neighbour, or another family Spark
    casts (a decimal or double against an integer, a timestamp against a date, a string)."""
    # Values of the files that are values of the term's type too (a path read as another type
    # draws from the type's own pool).
    kind = int if t.is_integer or t.kind.value == "date" else float if t.is_float else str
    near = [v for v in pool if type(v) is kind]
    r = rnd.random()
    if t.is_integer:
        if r < 0.5 and near:
            return int(rnd.choice(near)) + rnd.choice([0, 0, 1, -1])
        if r < 0.7:
            return Decimal(rnd.choice(INTS[:8])) + Decimal("0.5")
        if r < 0.8:
            return float(rnd.choice(INTS[:8])) + rnd.choice([0.0, 0.5])
        if r < 0.85:
            return str(rnd.choice(INTS[:8]))
        return rnd.choice(INTS + BIG_INTS)
    if t.kind.value == "varchar":
        if r < 0.5 and near:
            return str(rnd.choice(near))
        return rnd.choice([*STRINGS, "a\x00", "m", "n"])
    if t.kind.value == "date":
        if r < 0.5 and near:
            return DateLiteral(int(rnd.choice(near)) + rnd.choice([0, 0, 1, -1]))
        if r < 0.7:
            return TimestampLiteral(rnd.choice(DATES) * 86_400_000_000 + rnd.choice([0, 1, -1]), ntz=False)
        if r < 0.8:
            return "2024-03-01"
        return DateLiteral(rnd.choice(DATES))
    if t.is_float:
        if r < 0.5 and near:
            f = rnd.choice(near)
            if not math.isnan(f):
                return f
        if r < 0.7:
            return rnd.choice([-1, 0, 1, 2, 3])
        return rnd.choice([f for f in FLOATS if not math.isnan(f)])
    if t.kind.value == "timestamptz":
        return TimestampLiteral(rnd.choice(DATES) * 86_400_000_000 + rnd.choice([0, 1]), ntz=False)
    return rnd.choice(near) if near else 0


def _leaf_on(rnd: random.Random, term: Term, pool: list[Any]) -> BooleanExpression:
    ops = [Op.EQ, Op.NOT_EQ, Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.IN, Op.NOT_IN, Op.IS_NULL, Op.NOT_NULL]
    if term.target.is_float:
        ops += [Op.IS_NAN, Op.NOT_NAN]
    for _ in range(10):
        op = rnd.choice(ops)
        try:
            if op in (Op.IS_NULL, Op.NOT_NULL, Op.IS_NAN, Op.NOT_NAN):
                return unary(op, term)
            if op in (Op.IN, Op.NOT_IN):
                return in_list(op, term, [_literal(rnd, term.target, pool) for _ in range(rnd.randint(0, 4))])
            return compare(op, term, _literal(rnd, term.target, pool))
        except InvalidPredicateError:
            continue  # a literal Spark would not compare with this term: draw again
    return unary(Op.NOT_NULL, term)


def _values(table: Table, name: str) -> list[Any]:
    out = []
    for rows, _ in table.files:
        for r in rows:
            cell = r.get(name) if name != "v" else (r.get("v") or {}).get("a") if isinstance(r.get("v"), dict) else None
            if isinstance(cell, Typed):
                out.append(cell.value)
    return out


def _leaf(rnd: random.Random, table: Table, kinds: str) -> BooleanExpression:
    kind = rnd.choice(kinds)
    if kind == "u":
        # As the parser reads it (s LIKE 'a%' implies a range it keeps beside the unknown).
        return parse_sql(rnd.choice(sorted(table.unknowns)), schema=table.schema)
    if kind == "v":
        term: Term = variant("v", "$.a", rnd.choice(table.v_targets), try_cast=rnd.random() < 0.3)
        return _leaf_on(rnd, term, _values(table, "v"))
    if kind == "p":
        return _leaf_on(rnd, ColumnTerm("p", table.p_type, partition=True), _values(table, "p"))
    name = rnd.choice("isdx")
    info = table.schema.columns[name]
    assert info.type is not None
    return _leaf_on(rnd, ColumnTerm(name, info.type), _values(table, name))


def _tree(rnd: random.Random, table: Table, kinds: str, depth: int = 3) -> BooleanExpression:
    kind = rnd.choice(["leaf", "leaf", "and", "and", "or", "not"] if depth > 0 else ["leaf"])
    if kind == "leaf":
        return _leaf(rnd, table, kinds)
    if kind == "not":
        return Not(_tree(rnd, table, kinds, depth - 1))
    children = tuple(_tree(rnd, table, kinds, depth - 1) for _ in range(rnd.randint(1, 3)))
    return And(children) if kind == "and" else Or(children)


# Predicate families: each kind of term alone (so each must prune on its own), and all mixed.
FAMILIES = ["p", "c", "v", "pcvu", "pcvu", "pcvu", "pcvuu"]


def test_mixed_predicates_never_prune_a_matching_row() -> None:
    rnd = random.Random(20261124)
    pairs = 0
    pruned: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    roundtrips = 0
    for _ in range(TABLES):
        table = _table(rnd)
        for _ in range(PREDICATES_PER_TABLE):
            family = rnd.choice(FAMILIES)
            expr = _tree(rnd, table, family)
            if rnd.random() < 0.3:
                # Through the SQL text and back: the parser resolves the same columns and keeps
                # the unknowns' text, so the tree is the same.
                canonical = rewrite_not(expr)
                reparsed = parse_sql(to_sql(canonical), schema=table.schema)
                assert reparsed == canonical, (to_sql(canonical), reparsed, canonical)
                expr = reparsed
                roundtrips += 1
            evaluator = FileEvaluator(expr)
            for rows, stats in table.files:
                pairs += 1
                verdict = evaluator.evaluate(stats)
                if verdict.might_match:
                    continue
                pruned[family] += 1
                for kind, mark in (("partition", "at column p"), ("variant", "at v ")):
                    by_kind[kind] += mark in verdict.reason
                by_kind["plain"] += any(f"at column {c}" in verdict.reason for c in "isdx")
                for row in rows:
                    assert not may_select(expr, row, table.unknowns), (
                        f"Should not skip: pruned ({verdict.reason}) but row {row} matches {to_sql(expr)}"
                    )
                    assert not may_select(expr, row), (
                        f"Should not skip: pruned ({verdict.reason}) on an unknown's value: row {row}, {to_sql(expr)}"
                    )
    assert pairs >= 10_000 or TABLES < 160
    # The test can fail: every family and every kind of term prunes a healthy share.
    total = sum(pruned.values())
    assert total >= pairs // 10, (total, pairs, pruned)
    for family in set(FAMILIES):
        assert pruned[family] > 50, (family, pruned)
    for kind in ("partition", "plain", "variant"):
        assert by_kind[kind] > 50, by_kind
    assert roundtrips > 100


def test_unknown_is_any_truth_value_under_negation() -> None:
    """NOT of an unknown is unknown: the reference's unknown evaluation follows the negation the
    builder wrote into the text, and the tree's negation matches it on every row."""
    schema = _schema(INT32)
    unknowns = _unknowns(schema)
    rnd = random.Random(7)
    for _ in range(200):
        text = rnd.choice(sorted(unknowns))
        row = {"s": Typed(VARCHAR, rnd.choice(STRINGS)), "i": Typed(INT64, rnd.choice(INTS)), "p": None, "x": None}
        if rnd.random() < 0.3:
            row["s"] = None
        e = Unknown(text)
        negated = rewrite_not(Not(e))
        assert isinstance(negated, Unknown)
        v = unknowns[text](row)
        assert may_select(negated, row, unknowns) == (k_not(v) is True)


def test_the_property_table_uses_real_term_kinds() -> None:
    """Guard against the generator drifting: the leaves are the parser's kinds of term."""
    rnd = random.Random(3)
    table = _table(rnd)
    kinds = set()
    for _ in range(200):
        leaf = _leaf(rnd, table, "pcvu")
        term = getattr(leaf, "term", None)
        kinds.add(
            "u" if isinstance(leaf, Unknown | And) else "v" if isinstance(term, VariantTerm) else "p" if term.partition else "c"  # type: ignore[union-attr]
        )
    assert kinds == {"u", "v", "p", "c"}
