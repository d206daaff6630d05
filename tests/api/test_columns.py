"""Plain and partition columns over REST: createTable with declared partition columns and a
location, loadTable's columns, commits whose client-side statistics carry ``column-stats``,
loadFileStats answering them (in the shape a commit takes), and their validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from service.client import file_stats_payload
from service.stats.model import ColumnStats, FileStats, PathStats
from service.values import ShreddedType
from tests.api.conftest import ADMIN, READER, WRITER, assert_error

INT64 = ShreddedType.parse("int64")
VARCHAR = ShreddedType.parse("varchar")
T = "/v1/namespaces/lake/tables/cols"


def _file(warehouse: Path, name: str, lo: int, hi: int, **kw: Any) -> dict[str, Any]:
    fs = FileStats(
        path=str(warehouse / "cols" / name),
        file_size_bytes=5000,
        record_count=10,
        footer_size=100,
        content_id=f"etag-{name}",
        variant_columns=("v",),
        paths=(PathStats("v", '"a"', INT64, 100, 10, 0, lo, hi, None),),
        columns=(
            ColumnStats("id", INT64, 80, 10, 0, lo, hi, None),
            ColumnStats("name", VARCHAR, 80, 9, 1, f"n{lo}", f"n{hi}", None),
        ),
    )
    return {**file_stats_payload(fs), **kw}


def _create(client: Any, **body: Any) -> dict[str, Any]:
    r = client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    assert r.status_code in (200, 409), r.text
    r = client.post("/v1/namespaces/lake/tables", json={"name": "cols", "variant-columns": ["v"], **body}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return r.json()


def test_columns_round_trip_over_rest(client: Any, warehouse: Path) -> None:
    _create(client)
    docs = [_file(warehouse, "a.parquet", 0, 9), _file(warehouse, "b.parquet", 50, 59)]
    assert all("column-stats" in d for d in docs)
    r = client.post(T + "/commits", json={"files": docs}, headers=WRITER)
    assert r.status_code == 200, r.text
    t = client.get(T, headers=READER).json()
    assert t["variant-columns"] == ["v"]
    assert t["columns"] == [
        {"name": "v", "type": "variant", "kind": "variant", "declared": False},
        {"name": "id", "type": "int64", "kind": "plain", "declared": False},
        {"name": "name", "type": "varchar", "kind": "plain", "declared": False},
    ]
    got = client.get(T + "/files/stats", params={"path": docs[1]["path"]}, headers=READER).json()
    assert sorted(got["column-stats"], key=lambda x: x["column"]) == sorted(
        docs[1]["column-stats"], key=lambda x: x["column"]
    )
    assert got["partition-values"] == []
    # What loadFileStats answers can be committed again as it is (an unchanged file).
    again = client.post(T + "/commits", json={"files": [got]}, headers=WRITER)
    assert again.status_code == 200, again.text
    assert again.json()["unchanged"] == [docs[1]["path"]]


def test_a_bad_column_row_names_its_field(client: Any, warehouse: Path) -> None:
    _create(client)
    good = _file(warehouse, "a.parquet", 0, 9)
    bad = _file(warehouse, "b.parquet", 0, 9)
    bad["column-stats"][1]["min_value"] = "z"
    bad["column-stats"][1]["max_value"] = "a"
    err = assert_error(client.post(T + "/commits", json={"files": [good, bad]}, headers=WRITER), 422)
    assert err["details"]["field"] == "body.files[1].column-stats[1].max_value"
    wrong_type = _file(warehouse, "c.parquet", 0, 9)
    wrong_type["column-stats"][0]["column_type"] = "int99"
    err = assert_error(client.post(T + "/commits", json={"files": [wrong_type]}, headers=WRITER), 422)
    assert err["details"]["field"] == "body.files[0].column-stats[0].column_type"
    bound = _file(warehouse, "d.parquet", 0, 9)
    bound["column-stats"][0]["min_value"] = "ten"
    err = assert_error(client.post(T + "/commits", json={"files": [bound]}, headers=WRITER), 422)
    assert err["details"]["field"] == "body.files[0].column-stats[0].min_value"
    assert client.get(T, headers=READER).json()["live-file-count"] == 0


def test_create_table_with_declared_partition_columns(client: Any, warehouse: Path) -> None:
    loc = str(warehouse / "cols")
    t = _create(client, **{"partition-columns": [{"name": "day", "type": "date"}], "location": loc})
    assert t["partition-columns"] == ["day"] and t["location"] == loc
    assert t["columns"][-1] == {"name": "day", "type": "date", "kind": "partition", "declared": True}
    r = client.post(
        "/v1/namespaces/lake/tables",
        json={"name": "bad", "variant-columns": ["v"], "partition-columns": [{"name": "d", "type": "nope"}]},
        headers=ADMIN,
    )
    assert_error(r, 422, field="body.partition-columns")
    # A location no registered file could lie under (files are stored by absolute path or URI).
    for loc in ("relative/x", "./x", "x"):
        r = client.post("/v1/namespaces/lake/tables", json={"name": "rel", "variant-columns": ["v"], "location": loc}, headers=ADMIN)
        assert "an absolute path" in assert_error(r, 422, field="body.location")["message"]
    for loc in ("/abs/x", "s3://bucket/lake/t", "file:///data/t"):
        r = client.post("/v1/namespaces/lake/tables", json={"name": "ok" + str(len(loc)), "variant-columns": ["v"], "location": loc}, headers=ADMIN)
        assert r.status_code == 200, r.text


def test_plans_read_timestamps_in_the_session_time_zone(client: Any, warehouse: Path) -> None:
    """``session-time-zone``: the same text, two zones, two answers (parsed trees are cached by
    text *and* zone); a zone shredcat does not know is a 422 naming the field."""
    ts = ShreddedType.parse("timestamptz")
    hour = 3_600_000_000
    day0 = 1_704_067_200_000_000  # 2024-01-01 00:00 UTC

    def doc(name: str, lo_h: int, hi_h: int) -> dict[str, Any]:
        fs = FileStats(
            path=str(warehouse / "cols" / name), file_size_bytes=5000, record_count=10, footer_size=100,
            content_id=f"etag-{name}", variant_columns=("v",), paths=(),
            columns=(ColumnStats("ts", ts, 80, 10, 0, day0 + lo_h * hour, day0 + hi_h * hour, None),),
        )  # fmt: skip
        return file_stats_payload(fs)

    _create(client)
    early, late = doc("early.parquet", 0, 4), doc("late.parquet", 5, 9)
    assert client.post(T + "/commits", json={"files": [early, late]}, headers=WRITER).status_code == 200
    sql = "ts >= TIMESTAMP '2024-01-01 00:30:00'"  # 05:30 UTC in New York

    def plan(**kw: Any) -> list[str]:
        r = client.post(T + "/plan", json={"sql": sql, **kw}, headers=READER)
        assert r.status_code == 200, r.text
        return sorted(f["path"] for f in r.json()["files"])

    for _ in range(2):
        assert plan() == sorted([early["path"], late["path"]])
        assert plan(**{"session-time-zone": "America/New_York"}) == [late["path"]]
        assert plan(**{"session-time-zone": "-05:00"}) == [late["path"]]
        assert plan(**{"session-time-zone": "Etc/UTC"}) == sorted([early["path"], late["path"]])
    bad = client.post(T + "/plan", json={"sql": sql, "session-time-zone": "Mars/Olympus"}, headers=READER)
    assert_error(bad, 422, "bad_input", "body.session-time-zone")
