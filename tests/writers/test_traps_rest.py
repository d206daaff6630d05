"""Issue 30, point 1 over REST: a commit by path of every trap file goes through; with one bad
file among them, 422 naming that file and nothing committed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from tests.api.conftest import ADMIN, READER, WRITER, app_factory, assert_error, warehouse, write_variant_file  # noqa: F401  (fixtures)
from tests.writers.traps import EXPECTED, write_traps


def test_rest_commit_of_the_traps(app_factory: Callable[..., TestClient], tmp_path: Path) -> None:  # noqa: F811
    lake = tmp_path / "lake"
    traps = write_traps(lake / "t")
    good = write_variant_file(lake / "t" / "v.parquet", 10)
    bad = lake / "t" / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\x07" * 64 + b"PAR1")
    client = app_factory(roots=[str(lake)])
    client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    r = client.post("/v1/namespaces/lake/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    url = "/v1/namespaces/lake/tables/t"
    paths = [str(good), *(str(traps[n]) for n in sorted(EXPECTED))]
    r = client.post(f"{url}/commits", json={"paths": [*paths[:2], str(bad), *paths[2:]]}, headers=WRITER)
    err = assert_error(r, 422, "invalid_parquet")
    assert str(bad) in err["message"] and "\n" not in err["message"]
    assert client.get(url, headers=READER).json()["live-file-count"] == 0
    r = client.post(f"{url}/commits", json={"paths": paths}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert client.get(url, headers=READER).json()["live-file-count"] == len(paths)
