"""sqlglot's parser for predicates, with a cheaper path for IN lists of lone literals.

sqlglot parses each value of ``x IN (1, 2, ...)`` through its whole recursive descent (some twenty
calls from ``_parse_select_or_expression`` down to ``_parse_primary``): for a list of 10,000
numbers that is most of the parse. A list whose every value is one NUMBER or STRING token followed
by a comma or the closing parenthesis, with no comment anywhere in it, can only parse to those
literals, so they are built straight from the tokens here, in the same order of token advances
(the same positions and comments on every node). Any other list (signs, casts, suffixes such as
``12BD``, adjacent strings, calls, comments) takes sqlglot's own path. Trees are equal either way:
``tests/pruning/test_parse_cost.py`` compares them, positions included.
"""

from __future__ import annotations

from functools import cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.parser import Parser
from sqlglot.tokens import Token, TokenType

_LITERALS = frozenset({TokenType.NUMBER, TokenType.STRING})


def literal_list_end(tokens: list[Token], start: int) -> int:
    """The index of the ``)`` closing ``tokens[start:]`` when it reads ``( lit , lit , ... )``
    (each ``lit`` a NUMBER or STRING token, no token of it carrying a comment), else -1."""
    n = len(tokens)
    if start >= n or tokens[start].token_type is not TokenType.L_PAREN or tokens[start].comments:
        return -1
    i = start + 1
    while i + 1 < n:
        value, after = tokens[i], tokens[i + 1]
        if value.token_type not in _LITERALS or value.comments or after.comments:
            return -1
        if after.token_type is TokenType.R_PAREN:
            return i + 1
        if after.token_type is not TokenType.COMMA:
            return -1
        i += 2
    return -1


class _LiteralListParser(Parser):
    """Put before a dialect's parser class by :func:`_parser_class`."""

    __slots__ = ()

    def _parse_in(self, this: exp.Expr | None, alias: bool = False) -> exp.In:
        end = literal_list_end(self._tokens, self._index)
        if end < 0:
            return super()._parse_in(this, alias)
        values: list[exp.Expr] = []
        self._advance()  # the "(": its (absent) comments replace the IN's, as sqlglot's path does
        while self._index < end:
            self._advance()
            token = self._prev
            literal = exp.Literal(this=token.text, is_string=token.token_type is TokenType.STRING)
            values.append(self.expression(literal, token))
            if self._index < end:
                self._advance()  # the comma
        node = self.expression(exp.In(this=this, expressions=values))
        self._match_r_paren(node)
        return node


@cache
def _parser_class(dialect: str) -> type[Parser]:
    base = Dialect.get_or_raise(dialect).parser_class
    return type(f"LiteralList{base.__name__}", (_LiteralListParser, base), {})


def parse_tokens(dialect: str, tokens: list[Token], text: str) -> list[exp.Expr | None]:
    """``sqlglot.parse(text, read=dialect)`` from ``text``'s tokens in that dialect, with the IN
    list path above."""
    d = Dialect.get_or_raise(dialect)
    return _parser_class(dialect)(dialect=d).parse(tokens, text)
