"""Absent fields: a Variant term whose path names a key that a fully shredded object of the file
does not have (:class:`~service.stats.model.ShreddedObject`) reads NULL in every row.

Such a leaf is then decided as over a stats row whose every entry is null (``value_count`` 0):
a test other than Keep and HasNulls needs a value, so it is never TRUE (``= x``, ranges, IN,
``IS NOT NULL``, isnan); ``IS NULL`` (HasNulls) is always TRUE and Keep keeps. Any stored type's
test is sound there (an all-null file is a file of every stored type with no values), so the leaf
cannot match when one of its tests needs a value. NOT and OR were pushed into the tests and the
tree by the compiler, so the three-valued logic needs nothing more here.

Only paths of object keys are decided (``$.a.b``, DuckLake ``"a"."b"``): a path through an array
never is. The per-file evaluator and the catalog's SQL both read :func:`key_steps` and
:func:`rejects_nulls`, so they agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from service.errors import InvalidPathError
from service.pruning.conditions import HasNulls, Keep, LeafCondition
from service.stats.model import ShreddedObject
from service.variant.paths import ROOT, parse_variant_path_steps, quote_field

#: (column, the object's DuckLake path) → its shredded keys, for the objects of ONE file.
ObjectIndex = Mapping[tuple[str, str], frozenset[str]]


def objects_by_path(records: Iterable[ShreddedObject]) -> dict[tuple[str, str], frozenset[str]]:
    """Index one file's fully shredded objects the way :func:`absent_key` reads them."""
    return {(r.column, r.variant_path): frozenset(r.fields) for r in records}


#: Keys of a path :func:`key_steps` considers at most (a shredded object step is two schema
#: levels, and the schema depth limit is a setting of at most a few hundred).
MAX_KEY_STEPS = 256


def key_steps(variant_path: str | None) -> tuple[tuple[str, str], ...]:
    """``(enclosing object's path, key)`` for each key of a path made only of object keys,
    outermost first; () for plain columns, the root, paths through arrays and malformed paths."""
    if variant_path is None or variant_path == ROOT:
        return ()
    try:
        steps = parse_variant_path_steps(variant_path)
    except InvalidPathError:
        return ()
    if any(is_array for _, is_array in steps):
        return ()
    # Only the outermost keys: no file records objects deeper than its schema allows, and each
    # parent is a prefix of the path, so all of them would cost the square of a long path's length
    # (a 100,000-step path in a JSON filter). Fewer steps prove less, never wrongly.
    out = []
    parent = ROOT
    for i, (key, _) in enumerate(steps[:MAX_KEY_STEPS]):
        if i:
            prev = quote_field(steps[i - 1][0])
            parent = prev if i == 1 else f"{parent}.{prev}"
        out.append((parent, key))
    return tuple(out)


def absent_key(column: str, variant_path: str | None, objects: ObjectIndex) -> str | None:
    """The key of the path that a recorded object of the file lacks (so the path is missing from
    every row), or None when no record proves it."""
    for parent, key in key_steps(variant_path):
        fields = objects.get((column, parent))
        if fields is not None and key not in fields:
            return key
    return None


def rejects_nulls(c: LeafCondition) -> bool:
    """Whether the leaf is never TRUE when its path is NULL in every row (see the module)."""
    if c.variant_path is None:
        return False
    tests = [case.test for case in c.cases] + [c.otherwise]
    return any(not isinstance(t, Keep | HasNulls) for t in tests)
