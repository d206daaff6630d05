"""Soundness of the cast rules end to end: real shredded files, the real catalog on both backends,
its SQL planner and the Python evaluator, against ground truth from evaluating each predicate on
the files' rows (tests/pruning/reference.py computes Spark's cast of every value).

One rule per test run, each over at least 10,000 (predicate, file) pairs:

* narrowing integer targets (``int``/``smallint``/``tinyint`` of int64 and int32 paths; values
  around the target's limits, so some casts fail);
* float, double and decimal targets of integer paths (values around 2**24, 2**53, 10**k);
* decimal targets of decimal paths of another scale or a larger precision (rounding half up,
  overflow after rounding);
* string equality and IN on integer paths (canonical text only);
* prefixes: ``LIKE 'abc%'`` (escapes, ``_``) and ``startswith`` on a string path (the LIKE
  itself evaluated on the rows as Spark's LIKE: a regex built as ``escapeLikeRegex`` builds it).
"""

from __future__ import annotations

import random
import re
from decimal import Decimal
from typing import Any

import pytest

from service.catalog.service import Catalog
from service.errors import InvalidPredicateError
from service.pruning import expressions as E
from service.pruning.conditions import compile_expression
from service.pruning.evaluator import interpret, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.pruning.render import to_sql
from service.pruning.schema import TableSchema
from service.stats.extract import extract_file
from tests.catalog.test_planner_soundness import _ref
from tests.pruning.reference import UnknownEval, may_select
from tests.support.shred_writer import MISSING, write_shredded

SPEC = {"r": "int64", "s": "int32", "m": "decimal(9,3)", "n": "varchar"}
N_FILES = 40
PAIRS_PER_RULE = 10_000
N_PREDICATES = PAIRS_PER_RULE // N_FILES + 10

# File centres: the limits where casts start failing or rounding, and ordinary small values.
CENTRES_R = [0, 50, 120, 130, 30_000, 40_000, 2**31 - 5, 2**31 + 5, -(2**31) - 3, 2**24 + 1, 2**53 + 3, 10**9, -500]
CENTRES_S = [0, 60, 127, 128, -129, 32_760, 32_770, 2**24 - 2, 2**24 + 3, 99_999, -(2**31) + 2]
NAMES = ["boto3", "botocore", "pytest-cov", "pytest_mock", "py", "aws_sdk", "awscli", "é-lib", "zeta", "a%b"]
CENTRES_M = ["0.000", "1.234", "1.995", "-1.995", "99.994", "99.995", "999.999", "123456.789", "-0.005", "0.004"]


def _cell(rng: random.Random, make: Any) -> Any:
    r = rng.random()
    if r < 0.05:
        return MISSING
    if r < 0.08:
        return None
    return make()


def _row(rng: random.Random, cr: int, cs: int, cm: Decimal, cn: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def names() -> str:
        return rng.choice(cn)

    cells = {
        "r": _cell(rng, lambda: cr + rng.randint(-3, 3)),
        "s": _cell(rng, lambda: max(-(2**31), min(2**31 - 1, cs + rng.randint(-3, 3)))),
        "m": _cell(rng, lambda: cm + Decimal(rng.randint(-2, 2)).scaleb(-3)),
        # Mostly names near the file's own; now and then an int, which goes to the residual.
        "n": _cell(rng, lambda: rng.randint(0, 9) if rng.random() < 0.03 else names() + rng.choice(["", "1", "-x", "_y"])),
    }
    for k, v in cells.items():
        if v is not MISSING:
            out[k] = v
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[dict[str, Any]]]]:
    rng = random.Random(3434)
    d = tmp_path_factory.mktemp("casts")
    out = []
    for i in range(N_FILES):
        cr, cs = CENTRES_R[i % len(CENTRES_R)], CENTRES_S[i % len(CENTRES_S)]
        cm = Decimal(CENTRES_M[i % len(CENTRES_M)])
        cn = [NAMES[(i + k) % len(NAMES)] for k in range(2)]
        rows = [_row(rng, cr, cs, cm, cn) for _ in range(rng.randint(4, 14))]
        p = write_shredded(d / f"c{i:03d}.parquet", rows, SPEC, row_group_size=rng.choice([None, 5]))
        out.append((str(p), [{"v": _ref(r, SPEC)} for r in rows]))
    return out


def _near(rng: random.Random, centres: list[Any]) -> Any:
    c = rng.choice(centres)
    return c + rng.choice([-4, -1, 0, 0, 1, 3, 7]) if isinstance(c, int) else c


def _leaf(rng: random.Random, term: E.VariantTerm, lit: Any) -> E.BooleanExpression:
    op = rng.choice(["eq", "not_eq", "lt", "lt_eq", "gt", "gt_eq", "in", "not_in", "is_null"])
    if op == "is_null":
        return E.is_null(term)
    if op in ("in", "not_in"):
        vals = [lit() for _ in range(rng.randint(1, 4))]
        return (E.in_ if op == "in" else E.not_in)(term, vals)
    fn = {"eq": E.eq, "not_eq": E.not_eq, "lt": E.lt, "lt_eq": E.lt_eq, "gt": E.gt, "gt_eq": E.gt_eq}[op]
    return fn(term, lit())


def _narrowing(rng: random.Random) -> E.BooleanExpression:
    path, centres = rng.choice([("$.r", CENTRES_R), ("$.s", CENTRES_S)])
    target = rng.choice(["int", "smallint", "tinyint"])
    limits = {"int": 2**31 - 1, "smallint": 2**15 - 1, "tinyint": 127}[target]
    return _leaf(
        rng,
        E.variant("v", path, target),
        lambda: rng.choice([_near(rng, centres), limits, -limits - 1, rng.randint(-limits - 1, limits)]),
    )


def _widening(rng: random.Random) -> E.BooleanExpression:
    path, centres = rng.choice([("$.r", CENTRES_R), ("$.s", CENTRES_S)])
    target = rng.choice(["double", "float", "decimal(10,0)", "decimal(12,2)", "decimal(20,0)", "decimal(5,1)"])
    term = E.variant("v", path, target)

    def lit() -> Any:
        base = _near(rng, centres)
        if target in ("double", "float"):
            return float(base) + rng.choice([0.0, 0.5, -0.5, 1e-3])
        return Decimal(base) + rng.choice([Decimal(0), Decimal("0.5"), Decimal("-0.01")])

    return _leaf(rng, term, lit)


def _decimal_scale(rng: random.Random) -> E.BooleanExpression:
    target = rng.choice(["decimal(4,2)", "decimal(10,2)", "decimal(6,0)", "decimal(12,4)", "decimal(5,1)", "decimal(8,3)"])
    term = E.variant("v", "$.m", target)
    return _leaf(rng, term, lambda: Decimal(rng.choice(CENTRES_M)) + Decimal(rng.randint(-6, 6)).scaleb(-3))


def _string_eq(rng: random.Random) -> E.BooleanExpression:
    path, centres = rng.choice([("$.r", CENTRES_R), ("$.s", CENTRES_S)])
    term = E.variant("v", path, "string")

    def lit() -> str:
        n = _near(rng, centres)
        return rng.choice([str(n), str(n), f"0{n}", f"+{n}", f"{n}.0", " 5", "abc"])

    op = rng.choice(["eq", "not_eq", "in", "not_in", "lt", "is_null"])
    if op == "is_null":
        return E.is_null(term)
    if op in ("in", "not_in"):
        return (E.in_ if op == "in" else E.not_in)(term, [lit() for _ in range(rng.randint(1, 4))])
    return {"eq": E.eq, "not_eq": E.not_eq, "lt": E.lt}[op](term, lit())


def _spark_like(pattern: str, escape: str) -> re.Pattern[str] | None:
    """Spark's StringUtils.escapeLikeRegex (None: Spark refuses the pattern)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("_", "%", escape):
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append("." if c == "_" else ".*" if c == "%" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _text_at_n(row: dict[str, Any]) -> str | None:
    v = row["v"]
    t = v.get("n") if isinstance(v, dict) else None
    if t is None:
        return None
    return t.value if isinstance(t.value, str) else str(t.value)  # Spark casts an int to its text


def _prefix_sql(rng: random.Random) -> tuple[str, UnknownEval]:
    """A LIKE / startswith on $.n as SQL, and how its LIKE evaluates on a row."""
    term = "variant_get(v, '$.n', 'string')"
    stem = rng.choice(["bo", "boto", "pytest", "pytest-", "py", "aws", "é", "z", "a"])
    form = rng.choice(["like", "like", "escape", "underscore", "starts"])
    if form == "starts":
        return f"startswith({term}, '{stem}')", {"": lambda row, p=stem: _starts(row, p)}
    pattern, escape, tail = stem + "%", "\\", ""
    if form == "escape":
        pattern, escape, tail = stem + "!_%", "!", " ESCAPE '!'"
    elif form == "underscore":
        pattern = stem + "_%"
    rx = _spark_like(pattern, escape)
    assert rx is not None
    return f"{term} LIKE '{pattern}'{tail}", {"": lambda row, r=rx: _like(row, r)}


def _starts(row: dict[str, Any], prefix: str) -> bool | None:
    s = _text_at_n(row)
    return None if s is None else s.startswith(prefix)


def _like(row: dict[str, Any], rx: re.Pattern[str]) -> bool | None:
    s = _text_at_n(row)
    return None if s is None else rx.fullmatch(s) is not None


RULES = {
    "narrowing": _narrowing,
    "widening": _widening,
    "decimal_scale": _decimal_scale,
    "string_eq": _string_eq,
    "prefix": _prefix_sql,
}


def _prefix_predicates(schema: TableSchema) -> list[tuple[E.BooleanExpression, UnknownEval]]:
    """Parsed with the table's schema (LIKE needs it); the unknown LIKE keyed by its text."""
    rng = random.Random("casts-prefix")
    out = []
    while len(out) < N_PREDICATES:
        text, fns = _prefix_sql(rng)
        if rng.random() < 0.2:
            text = f"NOT ({text})"
        elif rng.random() < 0.2:
            text = f"{text} AND variant_get(v, '$.r', 'int') < {rng.choice(CENTRES_R[:6])}"
        expr = parse_sql(text, schema=schema)
        unknowns = {u.text: fns[""] for u in _unknowns_in(expr)}
        out.append((expr, unknowns))
    return out


def _unknowns_in(e: E.BooleanExpression) -> list[E.Unknown]:
    if isinstance(e, E.Unknown):
        return [e]
    if isinstance(e, E.And | E.Or):
        return [u for c in e.children for u in _unknowns_in(c)]
    if isinstance(e, E.Not):
        return _unknowns_in(e.child)
    return []


def _predicates(rule: str) -> list[E.BooleanExpression]:
    rng = random.Random(f"casts-{rule}")
    out: list[E.BooleanExpression] = []
    while len(out) < N_PREDICATES:
        try:
            leaf = RULES[rule](rng)
            if rng.random() < 0.2:
                leaf = E.and_(leaf, RULES[rule](rng))
            elif rng.random() < 0.1:
                leaf = E.not_(leaf)
            out.append(leaf)
        except InvalidPredicateError:  # a literal the target cannot hold exactly: draw again
            continue
    return out


@pytest.mark.parametrize("rule", list(RULES))
def test_cast_rules_never_prune_a_matching_file(
    catalog: Catalog, corpus: list[tuple[str, list[dict[str, Any]]]], rule: str
) -> None:
    paths = [p for p, _ in corpus]
    stats = {p: extract_file(p) for p in paths}
    assert all(any(r.variant_path == '"r"' for r in s.paths) for s in stats.values())
    catalog.create_table("lake", "casts", ["v"])
    catalog.commit("lake", "casts", list(stats.values()))
    rows_by_path = dict(corpus)
    pairs = pruned = prunable = 0
    if rule == "prefix":
        cases = _prefix_predicates(catalog.table_schema("lake", "casts"))
    else:
        cases = [(expr, {}) for expr in _predicates(rule)]
    for expr, unknowns in cases:
        kept = {c.path for c in catalog.iter_candidates("lake", "casts", expr)}
        cond = compile_expression(expr)
        for p in paths:
            pairs += 1
            selectable = any(may_select(expr, row, unknowns) for row in rows_by_path[p])
            prunable += not selectable
            if p not in kept:
                pruned += 1
                assert not selectable, f"Should read: {p} holds a row selected by {to_sql(expr)}"
            if interpret(cond, stats_by_path(stats[p].paths)).might_match:
                assert p in kept, f"SQL pruned {p} that the evaluator keeps for {to_sql(expr)}"
            else:
                assert p not in kept, f"SQL keeps {p} that the evaluator prunes for {to_sql(expr)}"
    print(f"\n{rule}: {pruned} pruned of {prunable} match-free ({pairs} pairs)")
    assert pairs >= PAIRS_PER_RULE
    # Before these rules every such file was kept; the rule must actually prune.
    assert pruned > 0.4 * prunable
