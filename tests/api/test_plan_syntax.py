"""The plan API's error body for a predicate with a syntax error: the message in words and
``details.position`` beside ``line`` and ``column`` (and the field), in the usual error model."""

from __future__ import annotations

from tests.api.conftest import READER, assert_error

T = "/v1/namespaces/lake/tables/events"


def test_a_syntax_error_carries_its_position(client, table) -> None:
    sql = "variant_get(v, '$.id', 'bigint') ="
    err = assert_error(client.post(T + "/plan", json={"sql": sql}, headers=READER), 422, "invalid_predicate", "body.sql")
    assert err["message"] == "expected a value after '=' at column 35"
    assert err["details"]["position"] == 34
    assert (err["details"]["line"], err["details"]["column"]) == (1, 35)


def test_other_predicate_errors_have_no_position(client, table) -> None:
    sql = "variant_get(v, '$.id', 'nosuchtype') = 1"
    err = assert_error(client.post(T + "/plan", json={"sql": sql}, headers=READER), 422, "invalid_predicate", "body.sql")
    assert "position" not in err["details"]
