"""service/keyset.py: the one keyset pager (REST pages, plan pages, dashboard pages)."""

from __future__ import annotations

from service import keyset, pagetoken
from service.errors import BadInputError

INVALID = BadInputError("invalid page token")


def test_one_extra_row_means_a_next_page() -> None:
    assert keyset.fetch_limit(3) == 4
    page = keyset.cut([1, 2, 3, 4], 3)
    assert page.rows == [1, 2, 3] and page.more
    token = page.next_token(lambda r: {"after": r})
    assert token is not None and pagetoken.decode(token, INVALID) == {"after": 3}


def test_no_extra_row_is_the_last_page() -> None:
    for rows in ([1, 2, 3], [1], []):
        page = keyset.cut(rows, 3)
        assert page.rows == rows and not page.more
        assert page.next_token(lambda r: {"after": r}) is None


def test_a_page_as_large_as_the_cap_is_taken_to_have_more_when_full() -> None:
    limit = keyset.fetch_limit(5, cap=5)
    assert limit == 5 and keyset.fetch_limit(4, cap=5) == 5 and keyset.fetch_limit(9, cap=100) == 10
    assert keyset.cut([1, 2, 3, 4, 5], 5, limit).more
    assert not keyset.cut([1, 2, 3, 4], 5, limit).more
    assert keyset.cut([1, 2, 3, 4, 5], 4, keyset.fetch_limit(4, cap=5)).rows == [1, 2, 3, 4]


def test_the_token_names_the_last_row_shown() -> None:
    page = keyset.cut([("a", 1), ("b", 2), ("c", 3)], 2)
    token = page.next_token(lambda r: [r[0], r[1]])
    assert token is not None and pagetoken.decode(token, INVALID) == ["b", 2]
