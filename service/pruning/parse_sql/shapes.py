"""Two long shapes of predicate read without sqlglot, to the tree sqlglot's path builds.

An id list pasted into the playground (``variant_get(v, '$.id', 'bigint') IN (1, 2, ...)``:
10,000 ids are 90 KB) or an OR of hundreds of comparisons of one term costs sqlglot's tokenizer,
its parser and the converter's walk ~3 ms of CPU per KiB (~0.3 s for the 90 KB list). Here one
regular expression per leaf reads::

    leaf (OR leaf)...    or    leaf (AND leaf)...
    leaf:     term op literal  |  term [NOT] IN (literal, ...)
    term:     [try_]variant_get(column, 'path', 'type')  |  a column name (ASCII letters, digits, _)
    literal:  [-]digits[.digits]  |  '...' holding neither ' nor a backslash
    op:       =  ==  !=  <>  <  <=  >  >=

Each distinct term's text is converted by the sqlglot path once (as ``<term> IS NULL``, with the
same schema and limits), every literal by the converter's own functions (:func:`number_literal`,
:func:`negated`, :func:`literal_for`, :func:`in_predicate`, :func:`compare`) and the leaves joined
by the same builders, so the tree is the one sqlglot's path gives. Anything else (comments,
parentheses around a leaf, casts, typed literals, a sign apart from its number, NULL, TRUE,
escapes, mixed AND and OR, more than :data:`MAX_TERM_TEXTS` distinct terms) is not read here,
and neither is a text whose reading raises anything: the sqlglot path then reads it, and reports
an error with its position. ``tests/pruning/test_shapes.py`` compares both paths on generated
predicates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.pruning.expressions import BooleanExpression, Op, Term, and_, compare, not_, or_
from service.pruning.literals import LiteralValue
from service.pruning.parse_sql.convert import in_predicate, literal_for
from service.pruning.parse_sql.literal_nodes import negated, number_literal

#: Texts shorter than this take sqlglot's path (a few ms at most; the term's own conversion here
#: costs about as much as parsing such a text whole).
MIN_CHARS = 1024
#: Distinct term texts read here (each is converted once through sqlglot).
MAX_TERM_TEXTS = 4

_WS = r"[ \t\r\n]*"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_STRING = r"'[^'\\]*'"
# A literal ends where sqlglot's token would: before a blank, a comma, a parenthesis or the end
# (``12BD``, ``1.5e3``, ``'a' 'b'`` and ``'a''b'`` are not read here).
_LITERAL = rf"(?:-?[0-9]+(?:\.[0-9]+)?|{_STRING})(?=[ \t\r\n,)]|\Z)"
_CALL = rf"(?:try_)?variant_get{_WS}\({_WS}{_IDENT}{_WS},{_WS}{_STRING}{_WS},{_WS}{_STRING}{_WS}\)"
_LEAF = re.compile(
    rf"{_WS}(?P<term>{_CALL}|{_IDENT}){_WS}"
    rf"(?:(?P<op>==|=|!=|<>|<=|>=|<|>){_WS}(?P<literal>{_LITERAL})"
    rf"|(?P<not>NOT[ \t\r\n]+)?IN{_WS}\((?P<list>{_WS}{_LITERAL}{_WS}(?:,{_WS}{_LITERAL}{_WS})*)\))"
    rf"{_WS}",
    re.ASCII | re.IGNORECASE,
)
_JOIN = re.compile(r"(AND|OR)(?=[ \t\r\n])", re.ASCII | re.IGNORECASE)
# The literals of a list _LEAF matched, in order (a string is taken whole from its opening quote).
_LITERALS = re.compile(rf"-?[0-9]+(?:\.[0-9]+)?|{_STRING}", re.ASCII)
_OPS = {"=": Op.EQ, "==": Op.EQ, "!=": Op.NOT_EQ, "<>": Op.NOT_EQ, "<": Op.LT, "<=": Op.LT_EQ, ">": Op.GT, ">=": Op.GT_EQ}


def read_shapes(
    text: str, term_of: Callable[[str], Term], *, max_depth: int, max_in_list: int
) -> BooleanExpression | None:
    """The tree of ``text`` when it has one of the shapes above, else None (sqlglot's path reads
    it). ``term_of``: a term's text as sqlglot's path converts it, raising when it is none."""
    if max_depth < 2:
        return None  # a NOT IN inside an OR is two levels deep: the sqlglot path decides
    found = _leaves(text)
    if found is None:
        return None
    matches, joiner = found
    terms: dict[str, Term] = {}
    try:
        leaves = [_leaf(m, terms, term_of, max_in_list) for m in matches]
    except Exception:  # whatever the reason, sqlglot's path reads the text and says it
        return None
    read = [leaf for leaf in leaves if leaf is not None]
    if len(read) != len(leaves):
        return None
    if len(read) == 1:
        return read[0]
    return or_(*read) if joiner == "OR" else and_(*read)


def _leaves(text: str) -> tuple[list[re.Match[str]], str | None] | None:
    """The leaves' matches and their connective (None for one leaf), or None."""
    matches: list[re.Match[str]] = []
    joiner: str | None = None
    pos, end = 0, len(text)
    while True:
        m = _LEAF.match(text, pos)
        if m is None:
            return None
        matches.append(m)
        pos = m.end()
        if pos == end:
            return matches, joiner
        j = _JOIN.match(text, pos)
        if j is None or joiner not in (None, j.group(1).upper()):
            return None
        joiner, pos = j.group(1).upper(), j.end()


def _leaf(
    m: re.Match[str], terms: dict[str, Term], term_of: Callable[[str], Term], max_in_list: int
) -> BooleanExpression | None:
    """One leaf's tree; None past :data:`MAX_TERM_TEXTS` terms or ``max_in_list`` values."""
    text = m.group("term")
    term = terms.get(text)
    if term is None:
        if len(terms) >= MAX_TERM_TEXTS:
            return None
        term = terms[text] = term_of(text)
    op = m.group("op")
    if op is not None:
        return compare(_OPS[op], term, literal_for(term, _value(m.group("literal"))))
    values = _LITERALS.findall(m.group("list"))
    if len(values) > max_in_list:
        return None
    tree = in_predicate(term, [literal_for(term, _value(v)) for v in values])
    return not_(tree) if m.group("not") else tree


def _value(literal: str) -> LiteralValue:
    """A literal's value as sqlglot's path reads its node (a leading ``-`` is its unary minus)."""
    if literal[0] == "'":
        return literal[1:-1]
    if literal[0] == "-":
        v = negated(number_literal(literal[1:]))
        if v is None:  # pragma: no cover - number_literal gives numbers only
            raise ValueError(literal)
        return v
    return number_literal(literal)
