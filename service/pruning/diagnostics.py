"""What a plan tells the user about the predicate itself: the columns it names, and the terms that
cannot prune anything on this table (a typo in a path, a type the path is not stored as).

Pure rules over a compiled condition and facts the catalog supplies; they never change which files
are candidates.

* :func:`referenced_columns`: the Variant columns a predicate names (a column the table lacks is
  an error, raised by the catalog; plain and partition columns are resolved by the parsers
  against the table's schema).
* :func:`leaf_terms`: the condition's Variant leaves as :class:`TermUse` (column, variant_path,
  the stored types the leaf compares, the term's JSON path and requested type). Plain and
  partition column leaves are not warned about (a column without statistics in any file is no
  typo: the parser has already checked the name), so they are not listed.
* :func:`plan_warnings`: the warnings, from the stored types of each leaf's path in the live files
  of the table at the planned snapshot:

  - ``path_not_shredded``: the path is fully shredded in no live file, so no file has statistics
    for it (with the table's close paths as suggestions);
  - ``type_not_comparable``: the term compares bounds of its requested type, and the path is
    stored only as types whose bounds do not speak for it (:func:`~.conditions.usable_types`),
    types holding only nulls in the live files aside (they have nothing to compare);
  - ``predicate_prunes_nothing``: no file was pruned, and the predicate could have pruned only
    through the leaves above.

* :func:`unused_terms`: a ``term_not_used`` warning for each sub-expression pruning cannot use
  (an unknown function, ``LIKE``, arithmetic, a literal that does not parse as the column's type,
  an invalid date), from the predicate tree itself (an AND drops such a term from its compiled
  condition, an OR with one becomes "keep every file"), and ``predicate_prunes_nothing`` when
  they leave nothing to prune on. The CLI, the REST API and the playground show the plan's
  warnings as they are: one source.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace

from service.errors import InvalidPredicateError
from service.pruning.conditions import (
    AllOf,
    AnyOf,
    Condition,
    ConditionVisitor,
    Constant,
    LeafCondition,
    visit_condition,
)
from service.pruning.expressions import And, BooleanExpression, Not, Or, Unknown, VariantTerm, iter_predicates
from service.pruning.paths import ANY_INDEX, JsonPath, Key, format_json_path, parse_variant_path
from service.pruning.spark_types import spark_type_name
from service.values import Kind, ShreddedType

PATH_NOT_SHREDDED = "path_not_shredded"
TYPE_NOT_COMPARABLE = "type_not_comparable"
PREDICATE_PRUNES_NOTHING = "predicate_prunes_nothing"
TERM_NOT_USED = "term_not_used"

#: Close paths suggested for a path that is not shredded.
MAX_SUGGESTIONS = 3


@dataclass(frozen=True, slots=True)
class PlanWarning:
    #: ``path_not_shredded``, ``type_not_comparable``, ``term_not_used`` or ``predicate_prunes_nothing``.
    type: str
    message: str
    #: The Variant column and JSON path the warning is about (None for the whole predicate).
    column: str | None = None
    path: str | None = None
    #: Close shredded paths (``path_not_shredded``) or the Spark types the path is stored as
    #: (``type_not_comparable``).
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TermUse:
    """One term of a leaf: where it reads statistics and what it asks for."""

    column: str
    variant_path: str
    #: Stored types the leaf compares for this term (empty: it reads only type-free facts).
    usable: tuple[ShreddedType, ...]
    json_path: str
    requested: ShreddedType


def referenced_columns(expr: BooleanExpression) -> tuple[str, ...]:
    """The Variant columns the predicate names, each once, in order of appearance."""
    return tuple(dict.fromkeys(p.term.column for p in iter_predicates(expr) if isinstance(p.term, VariantTerm)))


class _Leaves(ConditionVisitor[list[LeafCondition]]):
    def visit_leaf(self, c: LeafCondition) -> list[LeafCondition]:
        return [c]

    def visit_all_of(self, c: AllOf) -> list[LeafCondition]:
        return [leaf for ch in c.children for leaf in visit_condition(ch, self)]

    def visit_any_of(self, c: AnyOf) -> list[LeafCondition]:
        return [leaf for ch in c.children for leaf in visit_condition(ch, self)]

    def visit_constant(self, c: Constant) -> list[LeafCondition]:
        return []


_LEAVES = _Leaves()


def leaf_terms(condition: Condition) -> tuple[TermUse, ...]:
    """Every term of the condition's leaves, each once, left to right."""
    uses = (
        TermUse(leaf.column, leaf.variant_path, t.usable, format_json_path(t.path), t.requested)
        for leaf in visit_condition(condition, _LEAVES)
        if leaf.variant_path is not None
        for t in leaf.terms
        if t.path is not None
    )
    return tuple(dict.fromkeys(uses))


def variant_path_as_json(variant_path: str) -> str:
    """A DuckLake ``variant_path`` as a JSON path (``"a".element`` → ``$.a[*]``)."""
    steps = tuple(s if isinstance(s, Key) else ANY_INDEX for s in parse_variant_path(variant_path))
    return format_json_path(JsonPath(steps))


def _spark_name(t: ShreddedType) -> str | None:
    try:
        return spark_type_name(t)
    except InvalidPredicateError:
        return None


def _type_names(types: Collection[ShreddedType]) -> str:
    return ", ".join(sorted(t.name for t in types))


class _CanPrune(ConditionVisitor[bool]):
    """Whether the condition can prune any file when the leaves ``blind`` picks prune none."""

    def __init__(self, blind: Callable[[LeafCondition], bool]) -> None:
        self.blind = blind

    def visit_leaf(self, c: LeafCondition) -> bool:
        return not self.blind(c)

    def visit_all_of(self, c: AllOf) -> bool:
        return any(visit_condition(ch, self) for ch in c.children)

    def visit_any_of(self, c: AnyOf) -> bool:
        return all(visit_condition(ch, self) for ch in c.children)

    def visit_constant(self, c: Constant) -> bool:
        return not c.might_match


def _is_blind(leaf: LeafCondition, stored: Collection[ShreddedType]) -> bool:
    """No file has a fact the leaf compares: no stats row at all, or only stored types outside
    every case (whose ``otherwise`` test reads no bound). A plain or partition column leaf is
    never called blind: it is not warned about, so the predicate was not blinded by a warning."""
    if leaf.variant_path is None:
        return False
    if not stored:
        return True
    if any(d.test(s) is not None for d in leaf.derived for s in stored):
        return False  # a cast's test reads the stored bounds (service.pruning.conditions.casts)
    return bool(leaf.cases) and not any(s in case.types for case in leaf.cases for s in stored)


def _mismatch(use: TermUse, types: Collection[ShreddedType], empty: Collection[ShreddedType]) -> PlanWarning | None:
    """``type_not_comparable`` when no type the path holds values as can be compared as asked.
    Types that hold only nulls (``empty``) are left out both ways: such a file neither hides a
    mismatch (a type that would compare, but has nothing to compare) nor makes one (a path with no
    values at all has nothing the term could be compared with)."""
    valued = [s for s in types if s not in empty]
    if not valued or any(s in use.usable or _decimal_cast(s, use.requested) for s in valued):
        return None
    alternatives = tuple(sorted({n for n in map(_spark_name, valued) if n is not None}))
    hint = f" (ask for {' or '.join(alternatives)})" if alternatives else ""
    nulls = [s for s in types if s in empty]
    also = f" (and as {_type_names(nulls)} holding only nulls)" if nulls else ""
    message = (
        f"path {use.json_path} of column {use.column} is stored as {_type_names(valued)}{also}, asked as "
        f"{spark_type_name(use.requested)}: not comparable, no file can be pruned on its values{hint}"
    )
    return PlanWarning(TYPE_NOT_COMPARABLE, message, use.column, use.json_path, alternatives)


def _decimal_cast(stored: ShreddedType, requested: ShreddedType) -> bool:
    """A decimal asked as a decimal of any scale: compared through Spark's rounding cast
    (service.pruning.conditions.casts; too many stored types to list in a term's ``usable``)."""
    return stored.kind is Kind.DECIMAL and requested.kind is Kind.DECIMAL


def _never_blind(leaf: LeafCondition) -> bool:
    return False


#: Terms of one predicate that get "did you mean" suggestions (each costs a comparison per path).
MAX_SUGGESTED_TERMS = 8
#: Shredded paths of a column a suggestion is looked for among (the most widely shredded first).
MAX_SUGGESTION_PATHS = 5_000


def plan_warnings(
    condition: Condition,
    stored: Mapping[tuple[str, str | None], Collection[ShreddedType]],
    shredded_paths: Mapping[str, Collection[str]],
    *,
    pruned_nothing: bool | None,
    absent: Collection[tuple[str, str | None]] = (),
    valueless: Mapping[tuple[str, str | None], Collection[ShreddedType]] | None = None,
) -> tuple[PlanWarning, ...]:
    """The warnings of a plan of ``condition``.

    ``stored``: per ``(column, variant_path)`` of the leaves, the types it is fully shredded as in
    at least one live file (missing or empty: none). ``shredded_paths``: per column with such an
    unshredded leaf, variant paths shredded in the table (to suggest close ones: up to
    :data:`MAX_SUGGESTION_PATHS`, for the first :data:`MAX_SUGGESTED_TERMS` such terms).
    ``valueless``: per key, the types of ``stored`` that hold only nulls in every live file that
    stores them (the type mismatch is judged without them: :func:`_mismatch`).
    ``pruned_nothing``: the plan kept every live file (and there was at least one); None when the
    plan did not count its answer: the predicate's shape alone then decides (a predicate whose
    every pruning term is blind keeps every file). ``absent``: the unshredded leaf keys some file
    is proven to lack (``service.catalog.planner.absent``): files are pruned on those there.
    """
    out: list[PlanWarning] = []
    seen: set[tuple[str, str, ShreddedType]] = set()
    known_by_column: dict[str, list[str]] = {}
    suggested = 0
    for use in leaf_terms(condition):
        types = stored.get((use.column, use.variant_path), ())
        key = (use.column, use.json_path, use.requested)
        if key in seen:
            continue
        if not types:
            close: tuple[str, ...] = ()
            # Suggestions cost a string comparison per shredded path: for the first few terms only
            # (a predicate may hold hundreds), against the paths read once per column.
            if suggested < MAX_SUGGESTED_TERMS:
                suggested += 1
                known = known_by_column.get(use.column)
                if known is None:
                    known = known_by_column[use.column] = [
                        variant_path_as_json(p) for p in shredded_paths.get(use.column, ())
                    ]
                close = tuple(difflib.get_close_matches(use.json_path, known, n=MAX_SUGGESTIONS))
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            lacked = (use.column, use.variant_path) in absent
            message = (
                f"path {use.json_path} of column {use.column} is not shredded in any live file: "
                + (
                    "files are pruned on it only where proven to lack it"
                    if lacked
                    else "no file can be pruned on it"
                )
                + hint
            )
            out.append(PlanWarning(PATH_NOT_SHREDDED, message, use.column, use.json_path, close))
            seen.add(key)
        elif use.usable and (mismatch := _mismatch(use, types, (valueless or {}).get((use.column, use.variant_path), ()))):
            out.append(mismatch)
            seen.add(key)
    if out and pruned_nothing is not False:

        def blind(leaf: LeafCondition) -> bool:
            key = (leaf.column, leaf.variant_path)
            return key not in absent and _is_blind(leaf, stored.get(key, ()))

        # "Because of" the leaves above: the predicate could prune without them, and cannot with them.
        if visit_condition(condition, _CanPrune(_never_blind)) and not visit_condition(condition, _CanPrune(blind)):
            # One message whether the plan counted (pruned_nothing) or not (None): true in both.
            out.append(
                PlanWarning(
                    PREDICATE_PRUNES_NOTHING,
                    "the predicate prunes no file by its values: every term that could prune is on a path warned about above",
                )
            )
    return tuple(out)


#: ``term_not_used`` warnings of one plan; the last one counts the rest.
MAX_UNUSED_WARNINGS = 10
#: Characters of a term's SQL text a warning repeats.
MAX_TERM_TEXT = 200


def _unknowns(expr: BooleanExpression) -> list[Unknown]:
    """The tree's Unknown nodes, left to right (a walk with a stack: trees may be wide)."""
    out: list[Unknown] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Unknown):
            if not node.implied:
                out.append(node)
        elif isinstance(node, And | Or):
            stack.extend(reversed(node.children))
        elif isinstance(node, Not):
            stack.append(node.child)
    return out


def _unused_message(u: Unknown) -> str:
    text = u.text if len(u.text) <= MAX_TERM_TEXT else u.text[:MAX_TERM_TEXT] + "…"
    # The parser's reason repeats the sub-expression after "...not supported in a pruning predicate".
    why = u.why.split(" in a pruning predicate", 1)[0].strip()
    because = f" ({why})" if why else ""
    return f"{text} is not used for pruning{because}: every file is kept as if it may be true in it"


def unused_terms(expr: BooleanExpression, condition: Condition) -> tuple[PlanWarning, ...]:
    """A ``term_not_used`` warning per distinct sub-expression of ``expr`` pruning cannot use
    (at most :data:`MAX_UNUSED_WARNINGS`), and ``predicate_prunes_nothing`` when ``condition``
    (``expr`` compiled) is left keeping every file."""
    found = list(dict.fromkeys(_unknowns(expr)))
    out = [PlanWarning(TERM_NOT_USED, _unused_message(u)) for u in found[:MAX_UNUSED_WARNINGS]]
    if len(found) > MAX_UNUSED_WARNINGS:
        last = out[-1]
        more = len(found) - MAX_UNUSED_WARNINGS
        out[-1] = replace(last, message=f"{last.message} (and {more:,} more terms not used for pruning)")
    if out and isinstance(condition, Constant) and condition.might_match:
        message = "the predicate prunes no file: no term of it can be used for pruning (see the warnings above)"
        out.append(PlanWarning(PREDICATE_PRUNES_NOTHING, message))
    return tuple(out)


__all__ = [
    "MAX_SUGGESTIONS",
    "PATH_NOT_SHREDDED",
    "PREDICATE_PRUNES_NOTHING",
    "TERM_NOT_USED",
    "TYPE_NOT_COMPARABLE",
    "PlanWarning",
    "TermUse",
    "leaf_terms",
    "plan_warnings",
    "referenced_columns",
    "unused_terms",
    "variant_path_as_json",
]
