"""End-to-end soundness of pruning: real shredded files, the real catalog on both backends, the
catalog's SQL planner (``Catalog.plan``), against ground truth computed from the rows themselves.

Files are written by the test shredding writer (pyarrow; random shredding schemas, late type
mismatches, Variant nulls, missing fields, NaN/-0.0, several row groups, statistics on and off)
and by DuckDB's own shredder. Predicates are random trees. For every (file, predicate) pair:

* a pruned file holds no row the predicate can select (zero false prunes);
* the SQL planner keeps at least the files the Python evaluator keeps (both read one IR);
* the JSON and SQL-text forms of a predicate prune identically.

Effectiveness (files pruned vs. files with no selectable row) is printed, not asserted.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal
from typing import Any

import pytest

from service.catalog.planner import MAX_POINT_PROBES
from service.catalog.service import Catalog
from service.pruning import expressions as E
from service.pruning.absent import objects_by_path
from service.pruning.conditions import LeafCondition, compile_expression
from service.pruning.evaluator import interpret, stats_by_path
from service.pruning.parse_json import parse_json, to_json
from service.pruning.parse_sql import parse_sql
from service.pruning.render import to_sql
from service.stats.extract import extract_file
from service.values import Kind, ShreddedType
from tests.pruning.reference import Typed, may_select
from tests.support.shred_writer import MISSING, write_shredded

N_WRITER_FILES = 44
N_DUCKDB_FILES = 8
#: Files whose Variant is an object in every row, holding only its shredded fields: the footer
#: proves the object (and ``b``) fully shredded, so a field outside the spec is absent (issue 34).
N_OBJECT_FILES = 12
OBJECT_SPECS = [
    {"a": "int64", "d": "float64"},
    {"a": "int64", "b": {"c": "varchar"}, "zz": "int64"},
    {"b": {"c": "varchar", "e": "int64"}, "d": "float64", "m": "decimal(9,2)"},
    {"a": "varchar", "l": ["int64"], "dt": "date"},
]
N_PREDICATES = 260

SPECS = [
    {"a": "int64", "b": {"c": "varchar"}, "d": "float64", "l": ["int64"], "dt": "date", "m": "decimal(9,2)"},
    {"a": "int32", "b": {"c": "varchar"}, "d": "float64", "l": ["int32"], "dt": "date", "m": "decimal(9,2)"},
    {"a": "varchar", "b": {"c": "int64"}, "d": "float32", "l": ["int64"], "dt": "timestamp", "m": "decimal(18,2)"},
    {"a": "int64", "b": "varchar", "d": "float64", "l": ["varchar"], "dt": "date", "m": "float64"},
]


def _value(rng: random.Random, base: int, key: str) -> Any:
    r = rng.random()
    if r < 0.06:
        return MISSING
    if r < 0.10:
        return None
    if key == "a":
        if r < 0.13:
            return f"s{rng.randint(0, 9)}"
        if r < 0.15:
            return rng.uniform(-5, 5)
        return base + rng.randint(0, 40)
    if key == "c":
        return rng.choice(["apple", "banana", "cherry", "date", "é", "zz" * 150]) if r < 0.9 else base
    if key == "d":
        return rng.choice([math.nan, -0.0, 0.0, math.inf, -math.inf]) if r < 0.2 else float(base + rng.random() * 30)
    if key == "l":
        return [base + rng.randint(0, 20) for _ in range(rng.randint(0, 3))] if r < 0.95 else "x"
    if key == "dt":
        return dt.date(2024, 1, 1) + dt.timedelta(days=base // 10 + rng.randint(0, 5))
    if key == "m":
        return Decimal(base * 100 + rng.randint(0, 999)).scaleb(-2)
    raise AssertionError(key)


def _row(rng: random.Random, base: int) -> Any:
    if rng.random() < 0.03:
        return rng.choice([None, 7, "not an object"])
    out: dict[str, Any] = {}
    for k in ("a", "d", "l", "dt", "m"):
        v = _value(rng, base, k)
        if v is not MISSING:
            out[k] = v
    c = _value(rng, base, "c")
    if c is not MISSING:
        out["b"] = {"c": c} if rng.random() < 0.9 else "flat"
    return out


def _ref(v: Any, spec: Any) -> Any:
    """Python row value -> the reference's model (Typed leaves). Values get the type a reader
    sees: the shredded type where the writer put them in typed_value, else the Variant's own."""
    if v is None or v is MISSING:
        return None
    if isinstance(v, dict):
        return {k: _ref(x, spec.get(k) if isinstance(spec, dict) else None) for k, x in v.items()}
    if isinstance(v, list):
        return [_ref(x, spec[0] if isinstance(spec, list) else None) for x in v]
    if isinstance(spec, str):
        from tests.support.shred_writer import _fits

        if _fits(spec, v):
            t = ShreddedType.parse(spec)
            if t.kind is Kind.DATE:
                return Typed(t, (v - dt.date(1970, 1, 1)).days)
            if t.kind is Kind.TIMESTAMP:
                return Typed(t, int((dt.datetime.combine(v, dt.time()) - dt.datetime(1970, 1, 1)).total_seconds() * 1e6))
            return Typed(t, v)
    # In the residual: the Variant's own type (ints as int64 is the widest, so conservative).
    if isinstance(v, bool):
        return Typed(ShreddedType(Kind.BOOLEAN), v)
    if isinstance(v, int):
        return Typed(ShreddedType(Kind.INT64), v)
    if isinstance(v, float):
        return Typed(ShreddedType(Kind.FLOAT64), v)
    if isinstance(v, str):
        return Typed(ShreddedType(Kind.VARCHAR), v)
    if isinstance(v, Decimal):
        return Typed(ShreddedType(Kind.DECIMAL, 38, -v.as_tuple().exponent), v)  # type: ignore[operator]
    if isinstance(v, dt.date):
        return Typed(ShreddedType(Kind.DATE), (v - dt.date(1970, 1, 1)).days)
    raise AssertionError(v)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[dict[str, Any]]]]:
    """[(path, reference rows)] for every file."""
    import duckdb

    rng = random.Random(20261122)
    out: list[tuple[str, list[dict[str, Any]]]] = []
    d = tmp_path_factory.mktemp("soundness")
    out += _object_files(rng, d)
    for i in range(N_WRITER_FILES):
        spec = SPECS[i % len(SPECS)]
        base = i * 25
        rows = [_row(rng, base) for _ in range(rng.randint(3, 40))]
        p = write_shredded(
            d / f"w{i:03d}.parquet",
            rows,
            spec,
            row_group_size=rng.choice([None, 4, 9]),
            write_statistics=rng.random() > 0.2,
        )
        out.append((str(p), [{"v": _ref(r, spec)} for r in rows]))
    con = duckdb.connect()
    for i in range(N_DUCKDB_FILES):
        base = 1000 + i * 50
        p = d / f"duck{i:03d}.parquet"
        con.execute(
            f"""COPY (SELECT CASE WHEN r % 7 = 3 THEN NULL ELSE
                    {{'a': ({base} + r)::BIGINT, 'd': (r * 0.5)::DOUBLE, 'b': {{'c': 'k' || (r % 5)}}}}::VARIANT END AS v
                 FROM range(30) t(r)) TO '{p}' (FORMAT parquet)"""
        )
        rows = []
        for r in range(30):
            if r % 7 == 3:
                rows.append({"v": None})
            else:
                rows.append(
                    {
                        "v": {
                            "a": Typed(ShreddedType(Kind.INT64), base + r),
                            "d": Typed(ShreddedType(Kind.FLOAT64), r * 0.5),
                            "b": {"c": Typed(ShreddedType(Kind.VARCHAR), f"k{r % 5}")},
                        }
                    }
                )
        out.append((str(p), rows))
    return out


def _object_files(rng: random.Random, d: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for i in range(N_OBJECT_FILES):
        spec = OBJECT_SPECS[i % len(OBJECT_SPECS)]
        base = 300 + i * 40
        rows = []
        for _ in range(rng.randint(3, 30)):
            row: dict[str, Any] = {}
            for k, sub in spec.items():
                if rng.random() < 0.15:
                    continue  # missing in this row
                if isinstance(sub, dict):
                    row[k] = {
                        s: _value(rng, base, "c") if s == "c" else base + rng.randint(0, 9) for s in sub
                    }
                elif k == "zz":
                    row[k] = base + rng.randint(0, 9)
                else:
                    v = _value(rng, base, k)
                    if v is not MISSING and (v is None or _fits_spec(sub, v)):
                        row[k] = v
            rows.append(row)
        p = write_shredded(d / f"obj{i:03d}.parquet", rows, spec, row_group_size=rng.choice([None, 5]))
        out.append((str(p), [{"v": _ref(r, spec)} for r in rows]))
    return out


def _fits_spec(spec: Any, v: Any) -> bool:
    from tests.support.shred_writer import _fits

    if isinstance(spec, list):
        return isinstance(v, list) and all(_fits(spec[0], x) for x in v)
    return isinstance(spec, str) and _fits(spec, v)


def _random_leaf(rng: random.Random, long_in: int = 0) -> E.BooleanExpression:
    path, targets = rng.choice(
        [
            ("$.a", ["bigint", "int", "string", "double"]),
            ("$.b.c", ["string", "bigint"]),
            ("$.d", ["double", "float"]),
            ("$.l[*]", ["bigint", "int", "string"]),
            ("$.l[0]", ["bigint"]),
            ("$.dt", ["date", "timestamp_ntz"]),
            ("$.m", ["decimal(9,2)", "decimal(18,2)", "double"]),
            ("$.zz", ["bigint"]),
            ("$.b.e", ["bigint", "string"]),
        ]
    )
    target = rng.choice(targets)
    term = E.variant("v", path, target)
    kind = term.target.kind
    op = rng.choice(["eq", "not_eq", "lt", "lt_eq", "gt", "gt_eq", "in", "not_in", "is_null", "not_null", "is_nan"])
    if long_in:
        op = "in"

    def lit() -> Any:
        if kind in (Kind.INT64, Kind.INT32):
            return rng.randint(-10, 1450)
        if kind is Kind.VARCHAR:
            return rng.choice(["apple", "banana", "cherry", "k1", "k4", "s3", "zz", "é", "a"])
        if kind in (Kind.FLOAT64, Kind.FLOAT32):
            return rng.choice([0.0, -0.0, 1.5, 100.25, 1e9, -3.0, float(rng.randint(0, 1200))])
        if kind is Kind.DATE:
            return dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(-2, 120))
        if kind is Kind.TIMESTAMP:
            return dt.datetime(2024, 1, 1) + dt.timedelta(days=rng.randint(-2, 120))
        if kind is Kind.DECIMAL:
            return Decimal(rng.randint(0, 120_000)).scaleb(-2)
        raise AssertionError(kind)

    if op in ("is_null", "not_null", "is_nan"):
        if op == "is_nan" and kind not in (Kind.FLOAT64, Kind.FLOAT32):
            op = "not_null"
        return {"is_null": E.is_null, "not_null": E.not_null, "is_nan": E.is_nan}[op](term)
    if op in ("in", "not_in"):
        vals = [lit() for _ in range(long_in or rng.randint(1, 4))]
        return (E.in_ if op == "in" else E.not_in)(term, vals)
    fn = {"eq": E.eq, "not_eq": E.not_eq, "lt": E.lt, "lt_eq": E.lt_eq, "gt": E.gt, "gt_eq": E.gt_eq}[op]
    return fn(term, lit())


def _random_predicate(rng: random.Random, depth: int = 0) -> E.BooleanExpression:
    r = rng.random()
    if depth >= 2 or r < 0.5:
        return _random_leaf(rng)
    if r < 0.75:
        return E.and_(_random_predicate(rng, depth + 1), _random_predicate(rng, depth + 1))
    if r < 0.93:
        return E.or_(_random_predicate(rng, depth + 1), _random_predicate(rng, depth + 1))
    return E.not_(_random_predicate(rng, depth + 1))


def _predicates() -> list[E.BooleanExpression]:
    rng = random.Random(7)
    out: list[E.BooleanExpression] = []
    while len(out) < N_PREDICATES:
        try:
            out.append(_random_predicate(rng))
        except Exception:  # a literal out of the target's range: draw again
            continue
    return out


def test_zero_false_prunes_on_real_files(catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]]) -> None:
    paths = [p for p, _ in corpus]
    stats = {p: extract_file(p) for p in paths}
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", list(stats.values()))
    rows_by_path = dict(corpus)
    pairs = false_prunes = pruned = optimal = absent = 0
    for expr in _predicates():
        kept = {c.path for c in catalog.iter_candidates("lake", "events", expr)}
        cond = compile_expression(expr)
        for p in paths:
            pairs += 1
            selectable = any(may_select(expr, row) for row in rows_by_path[p])
            if p not in kept:
                pruned += 1
                if selectable:
                    false_prunes += 1
                    pytest.fail(f"Should read: {p} holds a row selected by {to_sql(expr)}")
            if not selectable:
                optimal += 1
            # The SQL layer keeps at least what the Python evaluator keeps (same IR); a file the
            # evaluator prunes only because a field is absent, the SQL prunes too.
            verdict = interpret(cond, stats_by_path(stats[p].paths), objects_by_path(stats[p].objects))
            if verdict.might_match:
                assert p in kept, f"SQL pruned {p} that the evaluator keeps for {to_sql(expr)}"
            elif "[absent-field]" in verdict.reason and isinstance(cond, LeafCondition):
                absent += 1
                assert p not in kept, f"SQL kept {p} whose objects lack the field of {to_sql(expr)}"
    assert pairs >= 10_000
    assert false_prunes == 0
    assert absent > 0, "some files must be pruned for lacking a field"
    print(
        f"\npruning effectiveness: {pruned} pruned of {optimal} prunable ({pairs} file x predicate pairs; "
        f"{absent} single-leaf pairs pruned as a field absent)"
    )
    assert pruned > 0.3 * optimal, "pruning should be effective on clustered data"


def test_long_in_lists_have_zero_false_prunes(
    catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]]
) -> None:
    """IN lists longer than MAX_POINT_PROBES: one branch OR-ing every point (the path and
    live-row filters once applied to the first point only)."""
    paths = [p for p, _ in corpus]
    stats = {p: extract_file(p) for p in paths}
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", list(stats.values()))
    rows_by_path = dict(corpus)
    rng = random.Random(11)
    exprs: list[E.BooleanExpression] = []
    while len(exprs) < 60:
        try:
            leaf = _random_leaf(rng, long_in=rng.randint(MAX_POINT_PROBES + 1, MAX_POINT_PROBES + 80))
            # Alone, and as the filter side of an AND (checked per candidate).
            exprs.append(leaf if len(exprs) % 2 else E.and_(_random_leaf(rng), leaf))
        except Exception:  # a literal out of the target's range: draw again
            continue
    pairs = pruned = 0
    for expr in exprs:
        kept = {c.path for c in catalog.iter_candidates("lake", "events", expr)}
        cond = compile_expression(expr)
        for p in paths:
            pairs += 1
            if p not in kept:
                pruned += 1
                assert not any(may_select(expr, row) for row in rows_by_path[p]), (
                    f"Should read: {p} holds a row selected by {to_sql(expr)}"
                )
            if interpret(cond, stats_by_path(stats[p].paths), objects_by_path(stats[p].objects)).might_match:
                assert p in kept, f"SQL pruned {p} that the evaluator keeps for {to_sql(expr)}"
    print(f"\nlong IN lists: {pruned} of {pairs} file x predicate pairs pruned")
    assert pruned > 0


def test_json_and_sql_forms_prune_the_same(catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]]) -> None:
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", [extract_file(p) for p, _ in corpus])
    for expr in _predicates()[:120]:
        via_json = parse_json(to_json(expr))
        via_sql = parse_sql(to_sql(expr))
        base = catalog.plan("lake", "events", expr, page_size=10_000)
        for other in (via_json, via_sql):
            got = catalog.plan("lake", "events", other, page_size=10_000)
            assert [c.path for c in got.candidates] == [c.path for c in base.candidates], to_sql(expr)


def test_ors_of_one_path_s_points_prune_as_each_comparison_does(
    catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ORs of equalities and IN lists on one path (any target, casts included; a few other
    comparisons and other paths among them) are planned as one point set per path
    (service.pruning.disjunctions): the answer is exactly the one planned comparison by comparison
    (the planner's own merging switched off), and no pruned file holds a selected row. Past
    MAX_POINT_PROBES points too (PostgreSQL's VALUES join, SQLite's OR-ed branch)."""
    from service.catalog.planner.sets import Planner

    paths = [p for p, _ in corpus]
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", [extract_file(p) for p in paths])
    rows_by_path = dict(corpus)
    rng = random.Random(36)
    exprs: list[E.BooleanExpression] = []
    while len(exprs) < 40:
        n = rng.choice([2, 5, 12, MAX_POINT_PROBES + 20])
        try:
            leaves = [_random_leaf(rng) if rng.random() < 0.15 else _one_point(rng) for _ in range(n)]
        except Exception:  # a literal out of the target's range: draw again
            continue
        exprs.append(E.or_(*leaves))

    def answers() -> list[set[str]]:
        return [{c.path for c in catalog.iter_candidates("lake", "events", expr)} for expr in exprs]

    merged = answers()
    with monkeypatch.context() as m:
        m.setattr(Planner, "disjuncts", lambda self, c: list(c.children))
        apart = answers()
    pruned = 0
    for expr, got, want in zip(exprs, merged, apart, strict=True):
        assert got == want, to_sql(expr)
        for p in paths:
            if p not in got:
                pruned += 1
                assert not any(may_select(expr, row) for row in rows_by_path[p]), to_sql(expr)
    assert pruned > 0


def test_an_or_of_more_equalities_than_the_term_limit_is_planned_as_its_in_list(
    catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]]
) -> None:
    """An OR of 450 equalities on one path (past the planner's 400-term limit, which refused it
    with a 413 before ORs on one path were planned as one point set) answers as the same values
    written as an IN list, and no file it prunes holds a selected row."""
    from service.catalog.planner import MAX_SQL_TERMS

    paths = [p for p, _ in corpus]
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", [extract_file(p) for p in paths])
    term = E.variant("v", "$.a", "bigint")
    values = list(range(-10, 1450, 3))[:450]
    assert len(values) > MAX_SQL_TERMS
    ored = E.or_(*(E.eq(term, v) for v in values))
    got = {c.path for c in catalog.iter_candidates("lake", "events", ored)}
    assert got == {c.path for c in catalog.iter_candidates("lake", "events", E.in_(term, values))}
    rows_by_path = dict(corpus)
    pruned = [p for p in paths if p not in got]
    assert pruned
    for p in pruned:
        assert not any(may_select(ored, row) for row in rows_by_path[p]), p


def _one_point(rng: random.Random) -> E.BooleanExpression:
    """An equality on ``$.a`` or ``$.b.c`` (a target of either; casts included)."""
    path, target = rng.choice([("$.a", "bigint"), ("$.a", "int"), ("$.a", "string"), ("$.a", "double"), ("$.b.c", "string")])
    term = E.variant("v", path, target)
    if target == "string":
        return E.eq(term, rng.choice(["apple", "k1", "s3", "zz", "5", "42", "1200"]))
    value = rng.randint(-10, 1450)
    return E.eq(term, float(value) if target == "double" else value)
