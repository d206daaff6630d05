"""The planner's page tokens: the keyset of a candidate page (the last file's id) with what later
pages must plan as the first did (the snapshot, the predicate's fingerprint, the partition column
types). Encoded by :mod:`service.pagetoken`, the pages cut by :mod:`service.keyset`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service import pagetoken
from service.errors import BadInputError, ShredcatError
from service.pruning.conditions import Condition
from service.values import ShreddedType


def fingerprint(condition: Condition, table_id: int) -> str:
    """What a page token pins of the predicate: a hash of the compiled condition and the table."""
    return hashlib.sha256(f"{table_id}:{condition!r}".encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class PlanToken:
    """What a page token pins: the last file of the page before, the snapshot, the predicate's
    fingerprint, and the partition column types the first page was planned with (None: the token
    carries none). Later pages read the predicate with those types, so that a commit between pages
    (which may change an undeclared partition column's inferred type) cannot change its tree."""

    after: int
    snapshot: int
    fingerprint: str
    partition_types: Mapping[str, ShreddedType | None] | None


def decode_plan_token(token: str) -> PlanToken:
    """The contents of a page token (a :class:`~service.errors.BadInputError` if it is not one)."""
    doc = _token_doc(token)
    try:
        after, snapshot, fp = doc["a"], doc["s"], doc["f"]
    except (KeyError, TypeError):
        raise _invalid_token() from None
    if not (_is_int(after) and _is_int(snapshot) and isinstance(fp, str)):
        raise _invalid_token()
    raw = doc.get("pt")
    if raw is None:
        return PlanToken(after, snapshot, fp, None)
    if not isinstance(raw, dict):
        raise _invalid_token()
    types: dict[str, ShreddedType | None] = {}
    for name, tname in raw.items():
        if tname is not None and not isinstance(tname, str):
            raise _invalid_token()
        try:
            types[str(name)] = None if tname is None else ShreddedType.parse(tname)
        except ShredcatError:
            raise _invalid_token() from None
    return PlanToken(after, snapshot, fp, types)


def _invalid_token() -> BadInputError:
    return BadInputError("invalid page token", details={"field": "page-token"})


def _token_doc(token: str) -> dict[str, Any]:
    doc = pagetoken.decode(token, _invalid_token())
    if not isinstance(doc, dict):
        raise _invalid_token()
    return doc


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def next_token_doc(after: int, snapshot: int, fp: str, partition_types: Mapping[str, ShreddedType | None] | None) -> dict[str, Any]:
    """The document of the token of the page after file ``after`` (:func:`decode_plan_token` reads it)."""
    doc: dict[str, Any] = {"a": after, "s": snapshot, "f": fp}
    if partition_types:
        doc["pt"] = {n: None if pt is None else pt.name for n, pt in partition_types.items()}
    return doc
