"""Object storage through a real S3 API server (moto on loopback): listing by prefix, ``shredcat
stats``/``register`` over ``s3://``, commits by prefix through REST, and the per-file error
model (a missing object, a denied request, a truncated object, a server that dies mid-listing:
a clear error naming the file or prefix, and nothing committed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service.errors import FileAccessError
from service.storage import expand_sources, list_data_files, listing_prefix
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file
from tests.storage.conftest import BUCKET, REPO, S3Server, start_s3_server
from tests.support.conformance import SHREDDED_VARIANT, require_corpus

#: The conformance corpus, where every other test finds it (``../shared`` beside the repository).
CORPUS = SHREDDED_VARIANT
SHREDCAT = [sys.executable, "-m", "service.cli"]
T = "/v1/namespaces/lake/tables/events"
ROOT = f"s3://{BUCKET}/lake/"


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PYTHONPATH": str(REPO), "SHREDCAT_DATABASE_URL": f"sqlite:///{cwd / 'cat.db'}"}
    return subprocess.run([*SHREDCAT, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=300)


def _rows(stdout: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    for r in rows:
        r["file"] = os.path.basename(r["file"])
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def _errors(stderr: str, prefix: str) -> list[str]:
    """The per-file error lines, with the listing's prefix cut from the paths they name."""
    return sorted(line.replace(prefix, "") for line in stderr.splitlines())


@pytest.fixture(scope="module")
def duckdb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ddb")
    for i in range(3):
        write_variant_file(d / f"d{i}.parquet", 50, i * 50)
    return d


@pytest.fixture(scope="module")
def corpus_uri(s3_server: S3Server, duckdb_dir: Path) -> str:
    """The conformance corpus and three DuckDB files under one prefix."""
    require_corpus(CORPUS)
    files = sorted(CORPUS.glob("*.parquet")) + sorted(duckdb_dir.glob("*.parquet"))
    for f in files:
        s3_server.upload(f, f"corpus/{f.name}")
    return f"s3://{BUCKET}/corpus/"


def test_stats_over_s3_gives_the_local_rows(s3_server: S3Server, corpus_uri: str, duckdb_dir: Path, tmp_path: Path) -> None:
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    for f in [*CORPUS.glob("*.parquet"), *duckdb_dir.glob("*.parquet")]:
        shutil.copy(f, local_dir / f.name)
    local = _cli(["stats", str(local_dir)], tmp_path, s3_server.env())
    remote = _cli(["stats", corpus_uri], tmp_path, s3_server.env())
    assert local.returncode == remote.returncode  # the corpus's invalid cases fail alike
    rows = _rows(local.stdout)
    assert len({r["file"] for r in rows}) > 50  # the corpus files with at least one fully shredded path
    assert _errors(remote.stderr, corpus_uri) == _errors(local.stderr, str(local_dir.resolve()) + "/")
    assert _rows(remote.stdout) == rows
    # The same files by name, each an s3:// URI, give the same rows too.
    names = sorted(p.name for p in local_dir.glob("d*.parquet"))
    by_name = _cli(["stats", *[corpus_uri + n for n in names]], tmp_path, s3_server.env())
    assert by_name.returncode == 0, by_name.stderr
    assert _rows(by_name.stdout) == [r for r in rows if r["file"] in names]
    assert all(json.loads(line)["file"].startswith(corpus_uri) for line in by_name.stdout.splitlines())


@pytest.fixture
def lake(s3: S3Server, duckdb_dir: Path, request: pytest.FixtureRequest) -> str:
    """``s3://lake/lake/<test>/`` holding data files in Spark's layout: Hive partitions of one column
    (its name starting with ``_``, which Spark keeps because of the ``=``), plus what is not data
    (_SUCCESS, _temporary/, .crc, hidden files)."""
    base = f"lake/{request.node.name.replace('[', '_').replace(']', '_')}/"
    s3.upload(duckdb_dir / "d0.parquet", base + "_c=0/part-0.parquet")
    s3.upload(duckdb_dir / "d1.parquet", base + "_c=1/part-1.parquet")
    s3.upload(duckdb_dir / "d2.parquet", base + "_c=2/part-2.parquet")
    s3.put(base + "_SUCCESS", b"")
    s3.put(base + "_temporary/0/part-9.parquet", b"not yet written")
    s3.put(base + ".part-0.parquet.crc", b"crc")
    s3.put(base + "_c=1/.hidden.parquet", b"x")
    s3.put(base + "notes.txt", b"x")
    return f"s3://{BUCKET}/{base}"


def _data_files(lake: str) -> list[str]:
    return sorted([lake + "_c=2/part-2.parquet", lake + "_c=1/part-1.parquet", lake + "_c=0/part-0.parquet"])


def test_listing_follows_sparks_rules(lake: str, tmp_path: Path) -> None:
    assert list_data_files(lake) == _data_files(lake)
    assert list_data_files(lake.rstrip("/")) == _data_files(lake)
    assert listing_prefix(lake) == lake
    assert expand_sources([lake, lake + "_c=0/part-0.parquet"]) == _data_files(lake)
    assert list_data_files(lake, limit=1)[:1] and len(list_data_files(lake, limit=1)) == 2  # stops past the limit
    assert list_data_files(f"s3://{BUCKET}/nothing-here/") == []
    # The same tree on the local filesystem lists the same names.
    for rel in ["_c=0/part-0.parquet", "_c=1/part-1.parquet", "_c=2/part-2.parquet", "_SUCCESS",
                "_temporary/0/part-9.parquet", ".part-0.parquet.crc", "_c=1/.hidden.parquet"]:  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    local = [p[len(str(tmp_path.resolve())) + 1 :] for p in list_data_files(str(tmp_path))]
    assert local == [p[len(lake) :] for p in _data_files(lake)]


def test_register_a_prefix_with_the_cli(s3: S3Server, lake: str, tmp_path: Path) -> None:
    r = _cli(["register", "--table", "lake.events", lake, "--json"], tmp_path, s3.env())
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(r.stdout)["added"]) == _data_files(lake)
    files = _cli(["files", "--table", "lake.events"], tmp_path, s3.env())
    assert sorted(files.stdout.split()) == _data_files(lake)
    pruned = _cli(["prune", "--table", "lake.events", "variant_get(v, '$.id', 'bigint') = 60"], tmp_path, s3.env())
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.split() == [lake + "_c=1/part-1.parquet"]


def _s3_client(app_factory: Any) -> Any:
    c = app_factory(roots=[ROOT])
    return _with_table(c)


def _with_table(c: Any) -> Any:
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return c


def _nothing_committed(c: Any) -> None:
    """The table is as created: its one snapshot (the creation) and no file."""
    r = c.get(T + "/snapshots", headers=READER)
    assert r.status_code == 200, r.text
    assert len(r.json()["snapshots"]) == 1, r.json()
    files = c.get(T + "/files", headers=READER)
    assert files.status_code == 200 and files.json()["files"] == [], files.text


def test_commit_a_prefix_through_rest_and_prune(s3: S3Server, lake: str, app_factory: Any) -> None:
    c = _s3_client(app_factory)
    r = c.post(T + "/commits", json={"prefixes": [lake]}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert sorted(r.json()["added"]) == _data_files(lake)
    plan = c.post(T + "/plan", json={"sql": "variant_get(v, '$.id', 'bigint') = 60"}, headers=READER)
    assert plan.status_code == 200, plan.text
    assert [f["path"] for f in plan.json()["files"]] == [lake + "_c=1/part-1.parquet"]
    # Paths and prefixes together: a file named and listed is committed once.
    again = c.post(T + "/commits", json={"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake]}, headers=WRITER)
    assert again.status_code == 200, again.text
    assert sorted(again.json()["unchanged"]) == _data_files(lake)


def test_prefix_expansion_counts_against_the_file_limit(s3: S3Server, lake: str, app_factory: Any) -> None:
    c = _with_table(app_factory(roots=[ROOT], max_files_per_commit=2))
    assert_error(c.post(T + "/commits", json={"prefixes": [lake]}, headers=WRITER), 413, "limit_exceeded", "body.prefixes[0]")
    # Named paths count too: one named + two listed is one too many.
    three = {"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake + "_c=2/", lake + "_c=1/"]}
    assert_error(c.post(T + "/commits", json=three, headers=WRITER), 413, "limit_exceeded", "body.prefixes[1]")
    _nothing_committed(c)
    two = {"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake + "_c=2/"]}
    assert c.post(T + "/commits", json=two, headers=WRITER).status_code == 200


@pytest.mark.parametrize(
    "prefix",
    [f"s3://{BUCKET}/other/", f"s3://{BUCKET}/lakehouse/", f"s3://{BUCKET}/", "s3://elsewhere/lake/", f"gs://{BUCKET}/lake/"],
)
def test_a_prefix_outside_the_roots_is_refused(s3: S3Server, app_factory: Any, prefix: str) -> None:
    c = _s3_client(app_factory)
    assert_error(c.post(T + "/commits", json={"prefixes": [prefix]}, headers=WRITER), 403)
    assert_error(c.post(T + "/commits", json={"prefixes": [f"s3://{BUCKET}/lake/../other/"]}, headers=WRITER), 403)
    _nothing_committed(c)


def test_an_empty_prefix_is_an_error(s3: S3Server, app_factory: Any) -> None:
    c = _s3_client(app_factory)
    err = assert_error(c.post(T + "/commits", json={"prefixes": [ROOT + "empty/"]}, headers=WRITER), 422, "file_access")
    assert "no Parquet data files" in json.dumps(err)


def _bad_commit(c: Any, body: dict[str, Any], needle: str) -> None:
    r = c.post(T + "/commits", json=body, headers=WRITER)
    assert r.status_code == 422, r.text
    assert needle in r.text, r.text
    _nothing_committed(c)


def test_a_missing_object_fails_the_commit(s3: S3Server, lake: str, app_factory: Any) -> None:
    c = _s3_client(app_factory)
    missing = lake + "_c=1/gone.parquet"
    _bad_commit(c, {"paths": [lake + "_c=0/part-0.parquet", missing]}, f"{missing}: no such file")


def test_a_truncated_object_fails_the_commit(s3: S3Server, lake: str, duckdb_dir: Path, app_factory: Any) -> None:
    c = _s3_client(app_factory)
    whole = (duckdb_dir / "d0.parquet").read_bytes()
    truncated = s3.put(lake[len(f"s3://{BUCKET}/") :] + "_c=3/part-3.parquet", whole[: len(whole) // 2])
    _bad_commit(c, {"prefixes": [lake]}, truncated)


def test_a_denied_request_fails_the_commit(s3: S3Server, lake: str, app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    c = _s3_client(app_factory)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    _bad_commit(c, {"paths": [lake + "_c=0/part-0.parquet"]}, "access denied")
    _bad_commit(c, {"prefixes": [lake]}, f"cannot list {lake}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "no-such-key")
    r = _cli(["register", "--table", "lake.events", lake], tmp_path, s3.env(AWS_ACCESS_KEY_ID="no-such-key"))
    assert r.returncode == 1 and f"cannot list {lake}" in r.stderr, r.stderr
    stats = _cli(["stats", lake + "_c=0/part-0.parquet"], tmp_path, s3.env(AWS_SECRET_ACCESS_KEY="wrong"))
    assert stats.returncode == 1 and "access denied" in stats.stderr and not stats.stdout


def test_a_server_dying_mid_listing_fails_the_commit(app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server = start_s3_server()
    try:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        s3 = server.boto()
        # More objects than one listing page (1,000): the second page never comes.
        for i in range(1100):
            s3.put_object(Bucket=BUCKET, Key=f"lake/big/part-{i:05d}.parquet", Body=b"x")
        c = _s3_client(app_factory)
        server.control("/_test/reset")
        assert len(list_data_files(ROOT + "big/")) == 1100
        pages = [r for r in server.requests() if "continuation-token" in r["query"]]
        lists = [r for r in server.requests() if "list-type" in r["query"]]
        assert pages, lists  # the listing is paginated
        # The server dies when the last page is asked for: earlier pages were answered.
        server.control(f"/_test/die-after-lists/{len(lists) - 1}")
        r = c.post(T + "/commits", json={"prefixes": [ROOT + "big/"]}, headers=WRITER)
        assert r.status_code == 422, r.text
        assert f"cannot list {ROOT}big/" in r.text
        assert server.process.wait(10) is not None  # it really died
        _nothing_committed(c)
    finally:
        server.stop()


def test_list_errors_are_file_access_errors(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "no-such-key")
    with pytest.raises(FileAccessError, match="cannot list s3://lake/lake/"):
        list_data_files("s3://lake/lake/")


def test_the_client_commits_prefixes(s3: S3Server, lake: str, app_factory: Any) -> None:
    from service.client import AsyncShredcatClient, ShredcatClient
    from service.client.calls import commit

    c = _s3_client(app_factory)
    client = ShredcatClient(http=c, token="writer-token-2")
    result = client.commit_prefixes("lake", "events", [lake])
    assert sorted(result.added) == _data_files(lake)
    assert sorted(client.commit("lake", "events", prefixes=[lake]).unchanged) == _data_files(lake)
    # The async client sends the very same call (one request builder for both).
    assert AsyncShredcatClient.commit_prefixes is ShredcatClient.commit_prefixes
    assert commit("lake", "events", prefixes=[lake], idempotency_key="k").json == {"prefixes": [lake]}
