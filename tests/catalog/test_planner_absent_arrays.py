"""Property tests of two of issue 34's rules end to end, each over at least 10,000 (predicate,
file) pairs on both backends: real shredded files (the spec-following test writer), the real
catalog (its SQL planner) and the Python evaluator, against ground truth from evaluating each
predicate on the files' rows (:mod:`tests.pruning.reference`, Spark's three-valued semantics).

* ``absent``: terms on keys that the files' fully shredded objects lack (at the root or one level
  down), beside files whose residual holds such keys (nothing proven: they must be kept), and
  files whose object has the key;
* ``array``: terms on array elements (``$.l[0]``, ``$.l[2]``, ``$.l[*]``): an element's value is
  one of ``"l".element``'s values, so the element bounds bound it.

For every pair: a pruned file holds no selectable row, and the SQL and the evaluator (given the
file's stats and objects) decide alike.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from service.catalog.service import Catalog
from service.errors import InvalidPredicateError
from service.pruning import expressions as E
from service.pruning.absent import objects_by_path
from service.pruning.conditions import compile_expression
from service.pruning.evaluator import interpret, stats_by_path
from service.pruning.render import to_sql
from service.stats.extract import extract_file
from tests.catalog.test_planner_soundness import _ref
from tests.pruning.reference import may_select
from tests.support.shred_writer import write_shredded

N_FILES = 40
PAIRS_PER_RULE = 10_000
N_PREDICATES = PAIRS_PER_RULE // N_FILES + 10

SPECS: list[dict[str, Any]] = [
    {"a": "int64", "l": ["int64"]},
    {"a": "int64", "b": {"c": "varchar"}, "zz": "int64", "l": ["int64"]},
    {"b": {"c": "varchar", "e": "int64"}, "l": ["varchar"]},
    {"a": "varchar", "scoped": "boolean", "l": ["int32"]},
]
#: Keys a row may carry beyond its file's spec: in the residual (the file's object is then unproven).
EXTRA = {"zz": lambda r, base: base + r.randint(0, 9), "scoped": lambda r, base: r.random() < 0.5}


def _field(rng: random.Random, spec: Any, base: int) -> Any:
    if isinstance(spec, dict):
        return {k: _field(rng, sub, base) for k, sub in spec.items() if rng.random() > 0.1}
    if isinstance(spec, list):
        n = rng.randint(0, 4)
        return [_field(rng, spec[0], base) for _ in range(n)]
    if rng.random() < 0.05:
        return None
    if spec == "varchar":
        return rng.choice(["apple", "banana", "cherry", "k1", "k4", "Python"])
    if spec == "boolean":
        return rng.random() < 0.5
    return base + rng.randint(0, 30)


def _rows(rng: random.Random, spec: dict[str, Any], base: int, residual: bool) -> list[dict[str, Any]]:
    rows = []
    for _ in range(rng.randint(4, 25)):
        row = _field(rng, spec, base)
        if residual and rng.random() < 0.3:
            key = rng.choice([k for k in EXTRA if k not in spec] or ["x"])
            row[key] = EXTRA.get(key, lambda r, b: 1)(rng, base)
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[dict[str, Any]]]]:
    rng = random.Random(3435)
    d = tmp_path_factory.mktemp("absent_arrays")
    out = []
    for i in range(N_FILES):
        spec = SPECS[i % len(SPECS)]
        rows = _rows(rng, spec, base=i * 20, residual=i % 5 == 4)
        p = write_shredded(d / f"f{i:03d}.parquet", rows, spec, row_group_size=rng.choice([None, 6]))
        out.append((str(p), [{"v": _ref(r, spec)} for r in rows]))
    return out


def _lit(rng: random.Random, target: str) -> Any:
    if target == "string":
        return rng.choice(["apple", "banana", "cherry", "k1", "Python", "zzz"])
    if target == "boolean":
        return rng.random() < 0.5
    return rng.randint(-5, N_FILES * 20 + 40)


def _leaf(rng: random.Random, paths: list[tuple[str, list[str]]]) -> E.BooleanExpression:
    path, targets = rng.choice(paths)
    target = rng.choice(targets)
    term = E.variant("v", path, target)
    op = rng.choice(["eq", "lt", "gt_eq", "in", "not_eq", "is_null", "not_null", "between"])
    if op == "is_null":
        return E.is_null(term)
    if op == "not_null":
        return E.not_null(term)
    if op == "in":
        return E.in_(term, [_lit(rng, target) for _ in range(rng.randint(1, 4))])
    if op == "between" and target not in ("string", "boolean"):
        lo = _lit(rng, target)
        return E.and_(E.gt_eq(term, lo), E.lt_eq(term, lo + rng.randint(0, 40)))
    fn = {"eq": E.eq, "lt": E.lt, "gt_eq": E.gt_eq, "not_eq": E.not_eq, "between": E.eq}[op]
    return fn(term, _lit(rng, target))


PATHS = {
    "absent": [
        ("$.zz", ["bigint", "int", "string"]),
        ("$.scoped", ["boolean", "string"]),
        ("$.b.e", ["bigint", "string"]),
        ("$.b.c", ["string"]),
        ("$.a", ["bigint", "string"]),
        ("$.q.r", ["bigint"]),
    ],
    "array": [
        ("$.l[0]", ["bigint", "int", "string"]),
        ("$.l[2]", ["bigint", "string"]),
        ("$.l[*]", ["bigint", "string"]),
    ],
}


def _predicates(rule: str) -> list[E.BooleanExpression]:
    rng = random.Random(f"absent-arrays-{rule}")
    out: list[E.BooleanExpression] = []
    while len(out) < N_PREDICATES:
        try:
            expr = _leaf(rng, PATHS[rule])
            r = rng.random()
            if r < 0.2:
                expr = E.and_(expr, _leaf(rng, PATHS[rule]))
            elif r < 0.3:
                expr = E.or_(expr, _leaf(rng, PATHS[rule]))
            elif r < 0.4:
                expr = E.not_(expr)
            out.append(expr)
        except InvalidPredicateError:  # a literal the target cannot hold: draw again
            continue
    return out


@pytest.mark.parametrize("rule", list(PATHS))
def test_rule_never_prunes_a_matching_file_and_sql_agrees(
    catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]], rule: str
) -> None:
    paths = [p for p, _ in corpus]
    stats = {p: extract_file(p) for p in paths}
    proven = [p for p in paths if stats[p].objects]
    assert 0 < len(proven) < len(paths)  # the residual files prove nothing
    catalog.create_table("lake", "t", ["v"])
    catalog.commit("lake", "t", list(stats.values()))
    rows_by_path = dict(corpus)
    pairs = pruned = prunable = by_absence = 0
    for expr in _predicates(rule):
        kept = {c.path for c in catalog.iter_candidates("lake", "t", expr)}
        cond = compile_expression(expr)
        for p in paths:
            pairs += 1
            selectable = any(may_select(expr, row) for row in rows_by_path[p])
            prunable += not selectable
            if p not in kept:
                pruned += 1
                assert not selectable, f"Should read: {Path(p).name} holds a row selected by {to_sql(expr)}"
            verdict = interpret(cond, stats_by_path(stats[p].paths), objects_by_path(stats[p].objects))
            assert verdict.might_match == (p in kept), (
                f"SQL and evaluator differ on {Path(p).name}: {to_sql(expr)}"
            )
            by_absence += not verdict.might_match and "absent from every row" in verdict.reason
    print(
        f"\n{rule}: {pruned} pruned of {prunable} match-free ({pairs} pairs, {by_absence} by an absent field)"
    )
    assert pairs >= PAIRS_PER_RULE
    assert pruned > 0.4 * prunable
    if rule == "absent":
        assert by_absence > 1000
