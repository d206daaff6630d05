"""The stateless per-file evaluator: do a file's statistics rule out every row?

``evaluate(expr, stats)`` compiles the tree into stats conditions (:mod:`.conditions`, where
the rules and their reasons are documented) and interprets them over the stats rows of ONE
file, given as ``{(column, variant_path): [PathStats, ...]}`` for Variant paths and
``{(column, None): [ColumnStats]}`` for plain columns and partition values (a partition value is
given as the ColumnStats row it implies); both kinds of row are read alike. The answer is a :class:`Verdict`:
CANNOT_MATCH (the file holds no row the predicate selects: skip it) or MIGHT_MATCH (read it;
also the answer whenever in doubt), with a reason naming the conjunct, the bound and the rule,
for explain mode.

The interpreter here and the catalog's SQL translation must agree; both read the same
Condition, so the rules live in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import wraps
from typing import Final, TypeVar, cast

from service.errors import InvalidPredicateError
from service.pruning.absent import ObjectIndex, absent_key, rejects_nulls
from service.pruning.conditions import (
    DEFAULT_MAX_IN_POINTS,
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    ConditionVisitor,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TestVisitor,
    compile_expression,
    condition_paths,
    visit_condition,
    visit_test,
)
from service.pruning.conditions.casts import cast_of
from service.pruning.expressions import BooleanExpression
from service.pruning.paths import format_json_path
from service.pruning.spark_types import spark_type_name
from service.stats.model import ColumnStats, PathStats
from service.values import Bound, ShreddedType, bound_le, bound_lt, format_bound

MIGHT_MATCH: Final = True
CANNOT_MATCH: Final = False

StatsRow = PathStats | ColumnStats
StatsIndex = Mapping[tuple[str, str | None], Sequence[StatsRow]]


@dataclass(frozen=True, slots=True)
class Verdict:
    might_match: bool
    reason: str
    #: The reason in a few words for a list of files ("max 49 < 4200", "path stored as int64,
    #: asked as string: not comparable"): no predicate text, no rule names; each leaf's words
    #: led by its path when the condition reads more than one path.
    short: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return "MIGHT_MATCH" if self.might_match else "CANNOT_MATCH"

    def __bool__(self) -> bool:
        return self.might_match

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


def stats_by_path(rows: Iterable[StatsRow]) -> dict[tuple[str, str | None], list[StatsRow]]:
    """Index one file's stats rows (Variant paths and plain/partition columns) the way
    :func:`evaluate` reads them."""
    out: dict[tuple[str, str | None], list[StatsRow]] = {}
    for r in rows:
        out.setdefault((r.column, r.variant_path), []).append(r)
    return out


def _fmt(t: ShreddedType, v: Bound | None) -> str:
    if v is None:
        return "unknown"
    try:
        s = format_bound(t, v)
    except Exception:  # a malformed client bound must not break explain
        s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


_cmp_le = bound_le
_cmp_lt = bound_lt


def _above(upper: Bound | None, lower: Bound | None, inclusive: bool) -> bool:
    """True when every value <= ``upper`` misses ``lower`` (``>= lower`` if inclusive, else
    ``> lower``); an unknown side proves nothing."""
    if upper is None or lower is None:
        return False
    return _cmp_lt(upper, lower) or (upper == lower and not inclusive)


def _nan_possible(row: StatsRow) -> bool:
    # None (unknown) counts as possible: only an explicit false rules NaN out.
    return row.contains_nan is not False


Outcome = tuple[bool, str, str]
#: A bound in words (:func:`_fmt`, or a page's memo of it).
Formatter = Callable[[ShreddedType, Bound | None], str]


_T = TypeVar("_T", bound=Test)


def _incomparable_keeps(method: Callable[[_RowTest, _T], Outcome]) -> Callable[[_RowTest, _T], Outcome]:
    """Bounds of a Python type the stored type does not use (bad client stats): keep."""

    @wraps(method)
    def run(self: _RowTest, test: _T) -> Outcome:
        try:
            return method(self, test)
        except TypeError:
            return True, f"bounds of {self.row.shredded_type.name} are not comparable with the literal", "keep"

    return run


class _RowTest(TestVisitor[Outcome]):
    """(might_match, why, rule) of one test over one stats row."""

    def __init__(self, row: StatsRow, fmt: Formatter = _fmt) -> None:
        self.row = row
        self.fmt = fmt

    def _all_null(self) -> Outcome | None:
        row = self.row
        if row.value_count == 0:
            # Every entry null or missing: no comparison, IN, is_nan or not_null can be TRUE,
            # whatever the stored type.
            return False, f"value_count 0 ({row.shredded_type.name}): every entry is null or missing", "all-null"
        return None

    def visit_keep(self, test: Keep) -> Outcome:
        return True, "nothing can be concluded from the stats of this type", "keep"

    def visit_never(self, test: Never) -> Outcome:
        return (
            False,
            f"no {self.row.shredded_type.name} value can satisfy it (the literal is outside the stored type)",
            "stored-type range",
        )

    def visit_has_nulls(self, test: HasNulls) -> Outcome:
        row = self.row
        if row.null_count > 0:
            return True, f"null_count {row.null_count}", "is-null"
        return False, f"null_count 0 and {row.shredded_type.name} values cast without NULL", "is-null needs nulls"

    def visit_has_values(self, test: HasValues) -> Outcome:
        row = self.row
        if (out := self._all_null()) is not None:
            return out
        return True, f"value_count {row.value_count} of stored type {row.shredded_type.name}", "values present"

    def visit_may_have_nan(self, test: MayHaveNaN) -> Outcome:
        if (out := self._all_null()) is not None:
            return out
        if _nan_possible(self.row):
            return True, f"contains_nan {self.row.contains_nan}", "nan"
        return False, "contains_nan false", "nan"

    @_incomparable_keeps
    def visit_range(self, test: RangeMayContain) -> Outcome:
        if (out := self._all_null()) is not None:
            return out
        row = self.row
        if test.nan_matches and _nan_possible(row):
            return True, f"contains_nan {row.contains_nan} and NaN sorts above every number", "nan"
        t, lo_v, hi_v = row.shredded_type, row.min_value, row.max_value
        return _bounds_outcome(_range_words(test, t, self.fmt), lo_v, hi_v, self.fmt(t, lo_v), self.fmt(t, hi_v))

    @_incomparable_keeps
    def visit_any_point(self, test: AnyPoint) -> Outcome:
        if (out := self._all_null()) is not None:
            return out
        row = self.row
        t, lo_v, hi_v = row.shredded_type, row.min_value, row.max_value
        for p in test.points:
            if (lo_v is None or _cmp_le(lo_v, p)) and (hi_v is None or _cmp_le(p, hi_v)):
                return (
                    True,
                    f"{self.fmt(t, p)} lies in [{self.fmt(t, lo_v)}, {self.fmt(t, hi_v)}] ({t.name})",
                    "in-list",
                )
        return (
            False,
            f"none of {len(test.points)} values lies in [{self.fmt(t, lo_v)}, {self.fmt(t, hi_v)}] ({t.name})",
            "in-list",
        )

    @_incomparable_keeps
    def visit_not_all_in(self, test: NotAllIn) -> Outcome:
        if (out := self._all_null()) is not None:
            return out
        row = self.row
        t, lo_v, hi_v = row.shredded_type, row.min_value, row.max_value
        if test.nan_matches and _nan_possible(row):
            return True, f"contains_nan {row.contains_nan}: a NaN differs from every literal", "nan"
        if lo_v is not None and hi_v is not None and lo_v == hi_v and lo_v in test.values:
            return False, f"every value equals {self.fmt(t, lo_v)} (min = max, {t.name})", "all-equal"
        return (
            True,
            f"bounds [{self.fmt(t, lo_v)}, {self.fmt(t, hi_v)}] ({t.name}) hold other values",
            "all-equal",
        )


@dataclass(frozen=True, slots=True)
class _RangeWords:
    """A range test with its literals in words for rows of one stored type (``suffix``: `` (int64)``)."""

    test: RangeMayContain
    lo: str
    hi: str
    suffix: str


def _range_words(test: RangeMayContain, t: ShreddedType, fmt: Formatter) -> _RangeWords:
    return _RangeWords(test, fmt(t, test.lo), fmt(t, test.hi), f" ({t.name})")


def _bounds_outcome(r: _RangeWords, lo_v: Bound | None, hi_v: Bound | None, lo_w: str, hi_w: str) -> Outcome:
    """A range test over a row with values, NaN aside (its bounds ``lo_v``, ``hi_v``, in words
    ``lo_w``, ``hi_w``); a TypeError for bounds the literal cannot be compared with."""
    test = r.test
    if _above(hi_v, test.lo, test.lo_inclusive):
        return False, f"max {hi_w} {'<' if test.lo_inclusive else '<='} {r.lo}{r.suffix}", "range"
    if _above(test.hi, lo_v, test.hi_inclusive):
        return False, f"min {lo_w} {'>' if test.hi_inclusive else '>='} {r.hi}{r.suffix}", "range"
    return True, f"bounds [{lo_w}, {hi_w}]{r.suffix} admit it", "range"


def run_test(test: Test, row: StatsRow, fmt: Formatter = _fmt) -> Outcome:
    """(might_match, why, rule) of one test over one stats row (bounds put in words by ``fmt``)."""
    return visit_test(test, _RowTest(row, fmt))


def _short_why(c: LeafCondition, row: StatsRow, why: str) -> str:
    """One row's outcome in words: the test's ``why`` without the stored type repeated, or, when
    the row's type serves none of the leaf's requested types, that they are not comparable."""
    t = row.shredded_type
    if row.value_count > 0 and (words := _not_comparable(c, t)):
        return words
    return why.replace(f" ({t.name})", "")


def _not_comparable(c: LeafCondition, t: ShreddedType) -> str:
    """That a row stored as ``t`` serves none of the leaf's requested types, or ''."""
    asked = sorted({_spark_name(term.requested) for term in c.terms if term.usable and t not in term.usable})
    if not asked:
        return ""
    what = "column" if c.variant_path is None else "path"
    return f"{what} stored as {t.name}, asked as {' and '.join(asked)}: not comparable"


def _cast_words(c: LeafCondition, row: StatsRow, fmt: Formatter = _fmt) -> str:
    """``"$.rank asked as int: int64 bounds [5000, 9999]; "`` when the row's bounds answered a
    request of another type through Spark's cast (:mod:`service.pruning.conditions.casts`), else ''."""
    t = row.shredded_type
    if not c.derived or row.value_count == 0 or any(t in case.types for case in c.cases):
        return ""
    for term in c.terms:
        if term.path is not None and term.requested != t and cast_of(t, term.requested) is not None:
            bounds = f"[{fmt(t, row.min_value)}, {fmt(t, row.max_value)}]"
            return f"{format_json_path(term.path)} asked as {_spark_name(term.requested)}: {t.name} bounds {bounds}; "
    return ""


def _spark_name(t: ShreddedType) -> str:
    try:
        return spark_type_name(t)
    except InvalidPredicateError:
        return t.name


#: Kinds of outcome a short reason names before "and N more" (an OR of 200 comparisons made
#: each skipped file's reason list all 200: a 300 KB playground page).
MAX_SHORT_GROUPS = 3


def _joined(parts: Iterable[str]) -> str:
    """Distinct outcomes in a few words: those that differ only in their last word (the literal
    of ``max 99 < 100000``, ``max 99 < 100007``...) as the first of them and how many more, so
    the deciding bound is named once; past :data:`MAX_SHORT_GROUPS` kinds, a count of the rest."""
    groups: dict[str, list[str]] = {}
    for p in dict.fromkeys(p for p in parts if p):
        groups.setdefault(p.rsplit(" ", 1)[0], []).append(p)
    shown = [g[0] + (f" and {len(g) - 1:,} more" if len(g) > 1 else "") for g in list(groups.values())[:MAX_SHORT_GROUPS]]
    rest = sum(len(g) for g in list(groups.values())[MAX_SHORT_GROUPS:])
    return "; ".join(shown) + (f"; and {rest:,} more" if rest else "")


class _Interpreter(ConditionVisitor[Verdict]):
    def __init__(
        self,
        stats: StatsIndex,
        prefix_paths: bool = False,
        objects: ObjectIndex | None = None,
        memo: ShortReasons | None = None,
    ) -> None:
        self.stats = stats
        self.prefix_paths = prefix_paths
        self.objects = objects
        #: Given: only the short reasons are wanted (the long ones are left empty).
        self.memo = memo

    def _short(self, c: LeafCondition, words: str) -> str:
        if not self.prefix_paths:
            return words
        if c.variant_path is None:
            where = c.column
        else:
            path = c.terms[0].path if c.terms else None
            where = format_json_path(path) if path is not None else c.variant_path
        if words.startswith(f"{where} "):
            return words  # already led by its path (a cast's words)
        return f"{where}: {words}"

    def visit_leaf(self, c: LeafCondition) -> Verdict:
        rows = self.stats.get((c.column, c.variant_path)) or ()
        if not rows:
            if self.objects and rejects_nulls(c) and (key := absent_key(c.column, c.variant_path, self.objects)):
                words = f"field {key} absent from every row of this file"
                return Verdict(
                    CANNOT_MATCH,
                    f"{c.label}: {words} (a fully shredded object without it) [absent-field]",
                    self._short(c, words),
                )
            if c.variant_path is None:
                return Verdict(
                    MIGHT_MATCH,
                    f"{c.label}: no stats for column {c.column} in this file",
                    self._short(c, "no stats in this file"),
                )
            return Verdict(
                MIGHT_MATCH,
                f"{c.label}: no stats for {c.column} {c.variant_path} (not fully shredded in this file)",
                self._short(c, "not fully shredded in this file: no stats"),
            )
        reasons = []
        shorts = []
        memo = self.memo
        for row in rows:
            if memo is None:
                might, why, rule = run_test(c.test_for(row.shredded_type), row)
                why = _cast_words(c, row) + why
                short = _short_why(c, row, why)
            else:
                might, why, rule, short = memo.outcome(c, row)
            if might:
                return Verdict(MIGHT_MATCH, "" if memo else f"{c.label}: {why} [{rule}]", self._short(c, short))
            reasons.append(f"{why} [{rule}]")
            shorts.append(short)
        # One row (the usual case) is its own short reason: joining costs more than the test
        # itself when an OR of hundreds of leaves is evaluated per listed file.
        short = shorts[0] if len(shorts) == 1 else _joined(shorts)
        if memo is not None:
            return Verdict(CANNOT_MATCH, "", self._short(c, short))
        where = f"column {c.column}" if c.variant_path is None else f"{c.column} {c.variant_path}"
        return Verdict(CANNOT_MATCH, f"{c.label}: {'; '.join(reasons)} at {where}", self._short(c, short))

    def visit_constant(self, c: Constant) -> Verdict:
        return Verdict(c.might_match, str(c.reason), str(c.reason))

    def visit_all_of(self, c: AllOf) -> Verdict:
        mights = []
        shorts = []
        for child in c.children:
            v = visit_condition(child, self)
            if not v.might_match:
                # One conjunct that cannot be TRUE makes the AND never TRUE.
                return Verdict(
                    CANNOT_MATCH,
                    v.reason if isinstance(child, LeafCondition | Constant) else f"({v.reason})",
                    v.short,
                )
            mights.append(v.reason)
            shorts.append(v.short)
        return Verdict(MIGHT_MATCH, "every conjunct might match: " + "; ".join(mights), _joined(shorts))

    def visit_any_of(self, c: AnyOf) -> Verdict:
        if self.memo is not None:
            return self._any_of_short(c, self.memo)
        cannots = []
        shorts = []
        for child in c.children:
            v = visit_condition(child, self)
            if v.might_match:
                return Verdict(MIGHT_MATCH, v.reason, v.short)
            cannots.append(v.reason)
            shorts.append(v.short)
        return Verdict(CANNOT_MATCH, "no disjunct can match: " + " | ".join(cannots), _joined(shorts))

    def _any_of_short(self, c: AnyOf, memo: ShortReasons) -> Verdict:
        """``visit_any_of``'s verdict and short reason, a leaf of one row with a range test (an
        OR of hundreds of comparisons) answered without building a verdict per leaf."""
        bulk = memo.any_of_ranges(c, self)
        if bulk is not None:
            return bulk
        shorts = []
        rows: dict[tuple[str, str | None], _RowWords | None] = {}  # this file's, per path
        for child in c.children:
            quick = None
            if child.__class__ is LeafCondition:
                key = (child.column, child.variant_path)
                row = rows[key] if key in rows else rows.setdefault(key, memo.row_words(self.stats.get(key)))
                quick = None if row is None else memo.range_words(child, row)
            if quick is None:
                v = visit_condition(child, self)
                might, short = v.might_match, v.short
            else:
                # quick is only set for a LeafCondition (checked by class above, which mypy does not narrow)
                might, short = quick[0], self._short(cast(LeafCondition, child), quick[1])
            if might:
                return Verdict(MIGHT_MATCH, "", short)
            shorts.append(short)
        return Verdict(CANNOT_MATCH, "", _joined(shorts))


@dataclass(frozen=True, slots=True)
class _OrRanges:
    """An OR's range leaves over one stored type, as :meth:`ShortReasons.any_of_ranges` reads
    them: (lo, lo inclusive, hi, hi inclusive, lo in words, hi in words) each, in the OR's order."""

    leaves: tuple[tuple[Bound | None, bool, Bound | None, bool, str, str], ...]
    #: What leads each leaf's words ("$.user.id: " when the condition reads several paths, or "").
    where: str
    #: `` (int64)``: what the words drop.
    suffix: str


#: A file's only stats row for a path with values: (row, its stored type as ShortReasons keeps it,
#: its min and max in words).
_RowWords = tuple[StatsRow, ShreddedType, str, str]


class ShortReasons:
    """The verdicts of many files under one condition with their short reasons only (the long
    :attr:`Verdict.reason` is left empty), each equal to :func:`interpret`'s, for a page of files.

    What the files share is worked out once: each leaf's test, "not comparable" words and cast
    check per stored type, and the words of each bound object (a literal once per page, a file's
    min and max once per file instead of once per comparison). An OR of 200 comparisons over the
    playground's 100 listed files spent ~0.2 s of CPU redoing them per leaf and per file."""

    def __init__(self, condition: Condition) -> None:
        self.condition = condition
        self._interpreter = _Interpreter({}, prefix_paths=len(condition_paths(condition)) > 1, memo=self)
        # Keyed by id() (cheap to hash, unlike a ShreddedType); each entry keeps its objects
        # alive and is checked with ``is``, so a reused id never answers for another object.
        self._types: dict[int, tuple[ShreddedType, ShreddedType]] = {}
        self._equal_types: dict[ShreddedType, ShreddedType] = {}
        self._leaves: dict[tuple[int, int], tuple[LeafCondition, Test, str, bool, str]] = {}
        self._words: dict[tuple[int, int], tuple[Bound | None, ShreddedType, str]] = {}
        self._ranges: dict[tuple[int, int], tuple[LeafCondition, _RangeWords | None, str]] = {}
        self._or_plans: dict[tuple[int, int], tuple[AnyOf, _OrRanges | None]] = {}

    def of(self, stats: StatsIndex, objects: ObjectIndex | None = None) -> Verdict:
        self._interpreter.stats, self._interpreter.objects = stats, objects
        return visit_condition(self.condition, self._interpreter)

    def _type(self, t: ShreddedType) -> ShreddedType:
        """One object per distinct stored type (rows read from the catalog each carry their own)."""
        hit = self._types.get(id(t))
        if hit is None or hit[0] is not t:
            hit = self._types[id(t)] = (t, self._equal_types.setdefault(t, t))
        return hit[1]

    def fmt(self, t: ShreddedType, v: Bound | None) -> str:
        return self._words_of(self._type(t), v)

    def _words_of(self, t: ShreddedType, v: Bound | None) -> str:
        """``fmt`` for a type already made one object by ``_type``."""
        key = (id(t), id(v))
        hit = self._words.get(key)
        if hit is None or hit[0] is not v:
            hit = self._words[key] = (v, t, _fmt(t, v))
        return hit[2]

    def _leaf(self, c: LeafCondition, t: ShreddedType) -> tuple[LeafCondition, Test, str, bool, str]:
        """(c, its test, its "not comparable" words, whether a cast's words lead, `` (type)``) for
        rows stored as ``t``."""
        leaf = self._leaves.get((id(c), id(t)))
        if leaf is None or leaf[0] is not c:
            cast = bool(c.derived) and not any(t in case.types for case in c.cases)
            leaf = self._leaves[(id(c), id(t))] = (c, c.test_for(t), _not_comparable(c, t), cast, f" ({t.name})")
        return leaf

    def row_words(self, rows: Sequence[StatsRow] | None) -> _RowWords | None:
        """A file's rows for one path as ``range_words`` reads them: one row with values, else None."""
        if not rows or len(rows) != 1 or not rows[0].value_count:
            return None
        row = rows[0]
        t = self._type(row.shredded_type)
        return row, t, self._words_of(t, row.min_value), self._words_of(t, row.max_value)

    def range_words(self, c: LeafCondition, row: _RowWords) -> tuple[bool, str] | None:
        """(might_match, short words) of a leaf over a file's one row for it, when its test is a
        range (NaN aside) and no cast leads; else None (``visit_leaf`` answers)."""
        r, t, lo_w, hi_w = row
        hit = self._ranges.get((id(c), id(t)))
        if hit is None or hit[0] is not c:
            _, test, not_comparable, cast_leads, _ = self._leaf(c, t)
            plain = not cast_leads and test.__class__ is RangeMayContain and not test.nan_matches
            words = _range_words(cast(RangeMayContain, test), t, self._words_of) if plain else None
            hit = self._ranges[(id(c), id(t))] = (c, words, not_comparable)
        _, words, not_comparable = hit
        if words is None:
            return None
        try:
            might, why, _ = _bounds_outcome(words, r.min_value, r.max_value, lo_w, hi_w)
        except TypeError:
            return None  # bounds not comparable with the literal: the test's own words
        return might, not_comparable or why.replace(words.suffix, "")

    def any_of_ranges(self, c: AnyOf, interpreter: _Interpreter) -> Verdict | None:
        """``_any_of_short``'s verdict for an OR whose leaves all test one path's range (an OR of
        hundreds of comparisons of one term) over a file with one row for it, worked out from
        each leaf's bounds without its words: only the words :func:`_joined` keeps are built.
        None when the OR, the row or the words are of another kind (``_any_of_short`` answers)."""
        first = c.children[0] if c.children else None
        if first is None or first.__class__ is not LeafCondition:
            return None
        key = (first.column, first.variant_path)
        row = self.row_words(interpreter.stats.get(key))
        if row is None:
            return None
        r, t, lo_w, hi_w = row
        plan = self._or_ranges(c, t, key, interpreter)
        if plan is None or plan.suffix in lo_w or plan.suffix in hi_w:
            return None
        lo_v, hi_v = r.min_value, r.max_value
        groups: dict[int, tuple[str, set[str]]] = {}  # kind (max <, max <=, min >, min >=) -> first word, words
        try:
            for lo, lo_incl, hi, hi_incl, lo_words, hi_words in plan.leaves:
                if lo is not None and hi_v is not None and (_cmp_lt(hi_v, lo) or (hi_v == lo and not lo_incl)):
                    kind, word = (0 if lo_incl else 1), lo_words
                elif hi is not None and lo_v is not None and (_cmp_lt(hi, lo_v) or (hi == lo_v and not hi_incl)):
                    kind, word = (2 if hi_incl else 3), hi_words
                else:
                    return Verdict(MIGHT_MATCH, "", f"{plan.where}bounds [{lo_w}, {hi_w}] admit it")
                groups.setdefault(kind, (word, set()))[1].add(word)
        except TypeError:
            return None  # bounds not comparable with a literal: the leaves' own words
        heads = (f"max {hi_w} <", f"max {hi_w} <=", f"min {lo_w} >", f"min {lo_w} >=")
        shown = [
            f"{plan.where}{heads[kind]} {first}" + (f" and {len(words) - 1:,} more" if len(words) > 1 else "")
            for kind, (first, words) in list(groups.items())[:MAX_SHORT_GROUPS]
        ]
        rest = sum(len(words) for _, words in list(groups.values())[MAX_SHORT_GROUPS:])
        return Verdict(CANNOT_MATCH, "", "; ".join(shown) + (f"; and {rest:,} more" if rest else ""))

    def _or_ranges(
        self, c: AnyOf, t: ShreddedType, key: tuple[str, str | None], interpreter: _Interpreter
    ) -> _OrRanges | None:
        """The leaves of ``c`` over rows stored as ``t``, when :meth:`any_of_ranges` can read
        them: each a plain range test (no NaN, no cast, comparable) of path ``key`` whose
        literals' words hold no blank and not the `` (type)`` suffix, so that a leaf's words
        differ from another's of its kind in their last word only (what :func:`_joined` groups
        by), all led by one path name that is not a word of theirs."""
        hit = self._or_plans.get((id(c), id(t)))
        if hit is not None and hit[0] is c:
            return hit[1]
        plan: _OrRanges | None = None
        leaves = []
        wheres = set()
        for child in c.children:
            if child.__class__ is not LeafCondition or (child.column, child.variant_path) != key:
                break
            leaf = child
            _, test, not_comparable, cast_leads, suffix = self._leaf(leaf, t)
            if cast_leads or not_comparable or test.__class__ is not RangeMayContain:
                break
            rng = test
            words = _range_words(rng, t, self._words_of)
            if rng.nan_matches or any(" " in w or suffix in w for w in (words.lo, words.hi)):
                break
            leaves.append((rng.lo, rng.lo_inclusive, rng.hi, rng.hi_inclusive, words.lo, words.hi))
            wheres.add(interpreter._short(leaf, ""))
        else:
            where = wheres.pop() if len(wheres) == 1 else None
            if where is not None and not where.startswith(("max", "min", "bounds")):
                plan = _OrRanges(tuple(leaves), where, f" ({t.name})")
        self._or_plans[(id(c), id(t))] = (c, plan)
        return plan

    def outcome(self, c: LeafCondition, row: StatsRow) -> tuple[bool, str, str, str]:
        """(might_match, why, rule, short words) of ``c`` over one row, as ``visit_leaf`` has them."""
        _, test, not_comparable, cast, suffix = self._leaf(c, self._type(row.shredded_type))
        might, why, rule = run_test(test, row, self.fmt)
        if cast:
            why = _cast_words(c, row, self.fmt) + why
        short = not_comparable if not_comparable and row.value_count > 0 else why.replace(suffix, "")
        return might, why, rule, short


def interpret(c: Condition, stats: StatsIndex, objects: ObjectIndex | None = None) -> Verdict:
    """Interpret a compiled condition over one file's stats; ``objects`` (its fully shredded
    objects, :func:`service.pruning.absent.objects_by_path`) proves fields absent, when given."""
    return visit_condition(c, _Interpreter(stats, prefix_paths=len(condition_paths(c)) > 1, objects=objects))


class FileEvaluator:
    """Compile once, evaluate many files."""

    def __init__(self, expr: BooleanExpression, *, max_in_points: int = DEFAULT_MAX_IN_POINTS) -> None:
        self.expression = expr
        self.condition: Condition = compile_expression(expr, max_in_points=max_in_points)

    @property
    def paths(self) -> set[tuple[str, str | None]]:
        """The (column, variant_path) stats rows the evaluation can read."""
        return condition_paths(self.condition)

    def evaluate(self, stats: StatsIndex, objects: ObjectIndex | None = None) -> Verdict:
        return interpret(self.condition, stats, objects)


def evaluate(
    expr: BooleanExpression,
    stats: StatsIndex,
    *,
    max_in_points: int = DEFAULT_MAX_IN_POINTS,
    objects: ObjectIndex | None = None,
) -> Verdict:
    """MIGHT_MATCH / CANNOT_MATCH for one file whose stats rows are ``stats`` (and whose fully
    shredded objects are ``objects``, when known)."""
    return FileEvaluator(expr, max_in_points=max_in_points).evaluate(stats, objects)
