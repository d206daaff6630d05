"""Two recordings of the planner's statements compared on one database: the answers, the number
of statements per case, and each statement's plan (issue 33 item 3's proof for a change of the
planner's SQL).

The recordings are ``tests/catalog/test_planner_sql_record.py``'s (gzipped JSON: the texts, and per
case the answer and each statement's text and parameters). The database is the one that test
builds, so the comparison runs inside it::

    git show <old>:tests/catalog/planner_sql/sqlite.json.gz > /tmp/old/sqlite.json.gz   # and postgres
    SHREDCAT_PLANNER_SQL_EXPLAIN=/tmp/old .venv/bin/pytest tests/catalog/test_planner_sql_record.py

which writes ``/tmp/old/<backend>.report.json`` (:func:`compare`'s counts and the first
differences; ``plans_padded_only``: plans that differ only by padded point lists, :func:`padded_only`). Plans: SQLite's ``EXPLAIN QUERY PLAN`` (as a tree), PostgreSQL's ``EXPLAIN (COSTS
OFF)``, with the names of anonymous subqueries and SQLite's subquery numbers normalized. Both
recordings' parameters are passed as recorded; old texts may use SQLAlchemy's ``:name`` form."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine


def decode(v: Any) -> Any:
    """A recorded parameter as its value (the inverse of the recording's encoding)."""
    if isinstance(v, dict):
        if "float" in v:
            return float(v["float"])
        if "bytes" in v:
            return bytes.fromhex(v["bytes"])
        if "decimal" in v:
            return Decimal(v["decimal"])
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def _params(recorded: Any) -> Any:
    if isinstance(recorded, dict):
        return {k: decode(v) for k, v in recorded.items()}
    return tuple(decode(v) for v in recorded)


_ANON = re.compile(r"anon_\d+|\(subquery-\d+\)|(?<=SUBQUERY )\d+|unnamed_subquery(_\d+)?")


def _normalized(lines: list[str]) -> list[str]:
    return [_ANON.sub("#", line) for line in lines]


#: PostgreSQL's numbers of subplans, their outputs and a repeated alias (``s_5``), which an added
#: branch shifts.
_SUBPLANS = re.compile(r"(?<=InitPlan )\d+|(?<=SubPlan )\d+|\$\d+|(?<=\w)_\d+\b")
_ARRAY = re.compile(r"'\{([^}]*)\}'")


def _no_repeats(m: re.Match[str]) -> str:
    items = m.group(1).split(",")
    return "'{" + ",".join(x for i, x in enumerate(items) if i == 0 or x != items[i - 1]) + "}'"


def _or_terms_once(line: str) -> str:
    """``line`` with each ``(...)`` group's OR-ed terms kept once where a term repeats the one
    before it (PostgreSQL writes a padded OR, or the subplans of padded tests, on one line)."""
    stack = [[""]]  # per open group: its terms at its own depth
    for ch in line:
        if ch == "(":
            stack.append([""])
        elif ch == ")" and len(stack) > 1:
            terms = stack.pop()
            kept = [t for i, t in enumerate(terms) if i == 0 or t != terms[i - 1]]
            stack[-1][-1] += "(" + " OR ".join(kept) + ")"
        else:
            stack[-1][-1] += ch
            if stack[-1][-1].endswith(" OR ") and len(stack) > 1:
                stack[-1][-1] = stack[-1][-1][:-4]
                stack[-1].append("")
    while len(stack) > 1:  # unbalanced: left as it was written
        terms = stack.pop()
        stack[-1][-1] += "(" + " OR ".join(terms)
    return " OR ".join(stack[0])


def padded_only(was: list[str], now: list[str]) -> bool:
    """Whether ``now`` is ``was`` with point lists padded (:func:`service.catalog.planner.sql.padded`):
    the same distinct plan lines, each at least as often (a repeated branch is a repeated index
    probe), once subplan numbers are normalized and an array literal's repeated last values dropped."""
    from collections import Counter

    def lines(plan: list[str]) -> Counter[str]:
        return Counter(_or_terms_once(_ARRAY.sub(_no_repeats, _SUBPLANS.sub("#", x))) for x in _normalized(plan))

    old, new = lines(was), lines(now)
    return set(old) == set(new) and all(new[x] >= n for x, n in old.items())


def _plan(cur: Any, backend: str, sql: str, params: Any) -> list[str]:
    if backend == "sqlite":
        rows = cur.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
        depth = {0: -1}
        out = []
        for node, parent, _, detail in rows:
            depth[node] = depth.get(parent, -1) + 1
            out.append("  " * depth[node] + str(detail))
        return out
    if isinstance(params, dict) and "%(" not in sql:
        sql = re.sub(r"(?<!:):([a-z]\w*)\b", r"%(\1)s", sql)
    cur.execute("EXPLAIN (COSTS OFF) " + sql, params)
    return [str(r[0]) for r in cur.fetchall()]


def compare(engine: Engine, backend: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The counts of equal answers, equal statement counts and equal plans of ``old`` and ``new``
    (recordings of the same cases), and the first few differences."""
    report: dict[str, Any] = {
        "cases": len(new["cases"]), "answers_equal": 0, "statement_counts_equal": 0,
        "statements_old": 0, "statements_new": 0, "plans_compared": 0, "plans_equal": 0,
        "plans_equal_raw": 0, "plans_padded_only": 0, "texts_old": len(old["texts"]), "texts_new": len(new["texts"]), "differences": [],
    }  # fmt: skip
    with engine.connect() as conn:
        cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]  # an open DB-API connection
        for o, n in zip(old["cases"], new["cases"], strict=True):
            assert o["case"] == n["case"], (o["case"], n["case"])
            report["answers_equal"] += o["answer"] == n["answer"]
            report["statements_old"] += len(o["statements"])
            report["statements_new"] += len(n["statements"])
            if len(o["statements"]) != len(n["statements"]):
                report["differences"].append({"case": n["case"], "statements": [len(o["statements"]), len(n["statements"])]})
                continue
            report["statement_counts_equal"] += 1
            for (oi, op), (ni, np_) in zip(o["statements"], n["statements"], strict=True):
                was = _plan(cur, backend, old["texts"][oi], _params(op))
                now = _plan(cur, backend, new["texts"][ni], _params(np_))
                report["plans_compared"] += 1
                report["plans_equal_raw"] += was == now
                if _normalized(was) == _normalized(now):
                    report["plans_equal"] += 1
                elif padded_only(was, now):
                    report["plans_padded_only"] += 1
                elif len(report["differences"]) < 20:
                    report["differences"].append({"case": n["case"], "old": was, "new": now, "sql": new["texts"][ni]})
        conn.rollback()
    return report
