"""The playground's second round (issue 36) without a browser: long predicates by POST (the form
posts; a result too long for a URL pages by posting again), the predicate above its result, and
the small pure helpers. Browser behaviour (script, Back, layout) is in test_browser_round2.py."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient
from markupsafe import escape

from service.dashboard.pages.playground import MAX_RESULT_URL, _view, shortened
from tests.dashboard.conftest import metrics_from

T = "/admin/tables/lake/events"


def _in_list(n: int = 10_000) -> str:
    return f"variant_get(v, '$.id', 'bigint') IN ({', '.join(str(1_000_000 + i) for i in range(n))})"


def test_the_form_posts_with_its_csrf_token_and_names_the_url_limit(admin: TestClient) -> None:
    page = admin.get(f"{T}/prune").text
    form = re.search(r'<form method="post" action="[^"]*/prune" class="playground"[^>]*>', page)
    assert form and f'data-max-url="{MAX_RESULT_URL}"' in form.group(0) and 'autocomplete="off"' in form.group(0)
    start = page.index(form.group(0))
    assert 'name="csrf_token"' in page[start : page.index("</form>", start)]


def test_a_90kb_predicate_runs_by_post_and_pages_by_posting_again(admin: TestClient) -> None:
    sql = _in_list()
    assert len(sql) > 90_000
    r = admin.post(f"{T}/prune", data={"sql": sql})
    assert r.status_code == 200, r.text[:500]
    assert metrics_from(r.text)["files-pruned"] == 5
    assert 'id="no-url"' in r.text and 'form="again"' in r.text
    # No link carries the predicate (each would be a 270 KB URL); the box and the repost form do.
    assert not re.search(r'href="[^"]*sql=', r.text)
    assert r.text.count(str(escape(sql))) == 2
    heading = re.search(r'<pre class="predicate" id="result-sql"[^>]*>(.*?)</pre>', r.text, re.S)
    assert heading and heading.group(1).endswith(f"… ({len(sql):,} characters)")
    # The filter buttons post view=show:page with the predicate, pinned to the plan's snapshot.
    snap = re.search(r'name="snapshot" value="(\d+)"', r.text[r.text.index('id="again"') :])
    assert snap
    again = admin.post(f"{T}/prune", data={"sql": sql, "snapshot": snap.group(1), "view": "skipped:1"})
    assert again.status_code == 200
    assert again.text.count('class="pruned"') == 5 and 'class="kept"' not in again.text
    assert re.search(r'<button type="submit" form="again" name="view" value="skipped:1"[^>]*aria-current="page"', again.text)


def test_a_short_predicate_keeps_its_links_and_heads_its_result(admin: TestClient) -> None:
    sql = "variant_get(v, '$.id', 'bigint') >= 250"
    r = admin.post(f"{T}/prune", data={"sql": sql})
    assert r.status_code == 200
    assert 'id="no-url"' not in r.text and 'form="again"' not in r.text
    assert re.search(r'<a href="[^"]*/prune\?show=kept&amp;sql=variant_get[^"]*" data-show="kept"', r.text)
    assert f'id="result-sql" aria-label="Predicate of this result">{escape(sql)}</pre>' in r.text


def test_view_and_shortened() -> None:
    assert _view({}) == ("all", 1)
    assert _view({"show": "kept", "page": "3"}) == ("kept", 3)
    assert _view({"show": "kept", "page": "3", "view": "skipped:2"}) == ("skipped", 2)
    assert _view({"view": "nonsense"}) == ("all", 1)
    assert _view({"view": "kept:-1"}) == ("kept", 1)
    assert shortened("abc", 5) == "abc"
    assert shortened("a" * 6, 5) == "aaaaa… (6 characters)"


def test_terms_pruning_cannot_use_are_warned_about_as_rest_does(admin: TestClient) -> None:
    for sql in (
        "length(variant_get(v, '$.name', 'string')) > 3",
        "v:name::string LIKE '%n'",
        "v:id::bigint = 'abc'",
        "variant_get(v, '$.day', 'date') = '2024-13-45'",
    ):
        page = admin.post(f"{T}/prune", data={"sql": sql})
        assert page.status_code == 200
        shown = re.findall(r'<li class="note" data-warning="([a-z_]+)"><strong>Warning:</strong> (.*?)</li>', page.text, re.S)
        api = admin.post(
            "/v1/namespaces/lake/tables/events/plan", json={"sql": sql}, headers={"Accept": "application/json"}
        ).json()
        assert [(t, m.strip()) for t, m in shown] == [(w["type"], str(escape(w["message"]))) for w in api["warnings"]]
        assert [t for t, _ in shown] == ["term_not_used", "predicate_prunes_nothing"]
        # Above the numbers: a keep-all is not silent.
        assert page.text.index('id="warnings"') < page.text.index('id="metrics"')


def _error_and_caret(text: str) -> tuple[str, str | None]:
    err = re.search(r'<p class="error" id="predicate-error" role="alert">(.*?)</p>', text, re.S)
    caret = re.search(r'<pre class="caret" id="predicate-caret" aria-hidden="true">(.*?)</pre>', text, re.S)
    assert err
    return unescape(err.group(1)), unescape(caret.group(1)) if caret else None


def test_unknown_columns_and_curly_quotes_get_a_caret(admin: TestClient) -> None:
    sql = "variant_get(v, '$.id', 'bigint') = 1 AND variant_get(w, '$.id', 'bigint') = 2"
    r = admin.post(f"{T}/prune", data={"sql": sql})
    assert r.status_code == 422
    message, caret = _error_and_caret(r.text)
    at = sql.index("w,")
    assert message == f"lake.events has no Variant column 'w' (at column {at + 1}); its Variant columns: v"
    assert caret == sql + "\n" + " " * at + "^"
    sql = "variant_get(v, '$.name', 'string') = \u2019n000001\u2019"
    r = admin.post(f"{T}/prune", data={"sql": sql})
    assert r.status_code == 422
    message, caret = _error_and_caret(r.text)
    at = sql.index("\u2019")
    assert message == f"curly quotes in \u2019n000001\u2019: use straight quotes ('n000001') at column {at + 1}"
    assert caret == sql + "\n" + " " * at + "^"
