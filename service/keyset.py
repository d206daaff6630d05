"""The one keyset pager of every listing: the REST API's file and snapshot pages, the planner's
candidate pages and the dashboard's file pages. A page is read with one row more than it shows
(:func:`fetch_limit`); that row, if it came, says a next page exists (:func:`cut`), which starts
after the last row shown, named in a token by :mod:`service.pagetoken` (:meth:`KeysetPage.next_token`).
Pure: the caller reads the rows, in its key's order, and decodes its own tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from service import pagetoken

R = TypeVar("R")


def fetch_limit(page_size: int, cap: int | None = None) -> int:
    """How many rows to read for a page of ``page_size``: one more, to learn whether a next page
    exists; at most ``cap`` (the server's page-size limit, for a page as large as the limit)."""
    return page_size + 1 if cap is None else min(page_size + 1, cap)


@dataclass(frozen=True, slots=True)
class KeysetPage(Generic[R]):
    """The rows a page shows, and whether rows follow them."""

    rows: list[R]
    more: bool

    def next_token(self, doc: Callable[[R], object]) -> str | None:
        """The token of the next page: ``doc`` of the page's last row, encoded; None on the last
        page (or an empty one)."""
        return pagetoken.encode(doc(self.rows[-1])) if self.more and self.rows else None


def cut(rows: Sequence[R], page_size: int, limit: int | None = None) -> KeysetPage[R]:
    """The page of ``rows`` read with ``limit`` (default :func:`fetch_limit` of ``page_size``):
    its first ``page_size`` rows, with more to come when an extra row was read, or (a limit that
    left no room for one) when the page is full."""
    limit = page_size + 1 if limit is None else limit
    more = len(rows) > page_size or (limit == page_size and len(rows) == page_size)
    return KeysetPage(list(rows[:page_size]), more)
