"""The end-to-end suite every emulated object store runs (``test_s3.py``, ``test_azure.py`` and
``test_gcs.py`` import it and define the ``server`` fixture): ``shredcat stats`` rows identical to the local rows for the
conformance corpus and DuckDB files, listing by Spark's rules, ``register`` of a prefix and
``prune`` answering the store's URIs, REST commits by prefix, requests counted at the server, the
warehouse-root checks of the scheme, and the per-file error model (a missing object, a denied
request, a truncated object, a server that dies mid-listing: a clear error naming the file or the
prefix, and nothing committed).

A ``server`` is an :class:`tests.storage.emulators.Emulator` with ``scheme``, ``env()``,
``put()``, ``upload()``, ``uri()``, ``wrong_credentials()`` and ``requests()``; ``start`` (a
module-level function of the importing module) starts a fresh one for the test that kills it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from service.errors import FileAccessError
from service.storage import expand_sources, list_data_files, listing_prefix
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file
from tests.storage.emulators import REPO
from tests.support.cli import shredcat
from tests.support.conformance import SHREDDED_VARIANT, require_corpus

#: The conformance corpus, where every other test finds it (``../shared`` beside the repository).
CORPUS = SHREDDED_VARIANT
T = "/v1/namespaces/lake/tables/events"


def cli(args: list[str], cwd: Path, env: dict[str, str], *, real: bool = True) -> subprocess.CompletedProcess[str]:
    """``shredcat``: a real process for every read of the store (the filesystems a process caches
    are its own); a command reading only the local catalog or local files may run in this one."""
    full = {**os.environ, **env, "PYTHONPATH": str(REPO), "SHREDCAT_DATABASE_URL": f"sqlite:///{cwd / 'cat.db'}"}
    return shredcat(args, full, real=real, cwd=cwd, timeout=300)


def rows(stdout: str) -> list[dict[str, Any]]:
    out = [json.loads(line) for line in stdout.splitlines()]
    for r in out:
        r["file"] = os.path.basename(r["file"])
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def errors(stderr: str, prefix: str) -> list[str]:
    """The per-file error lines, with the listing's prefix cut from the paths they name."""
    return sorted(line.replace(prefix, "") for line in stderr.splitlines())


def root_of(server: Any) -> str:
    return server.uri("lake/")


@pytest.fixture
def store(server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The module's server, with this process's environment pointing at it (and nothing else's
    credentials around, so a test sees only the store's own configuration)."""
    for k, v in server.env().items():
        monkeypatch.setenv(k, v)
    return server


@pytest.fixture(scope="module")
def duckdb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ddb")
    for i in range(3):
        write_variant_file(d / f"d{i}.parquet", 50, i * 50)
    return d


@pytest.fixture(scope="module")
def corpus_uri(server: Any, duckdb_dir: Path) -> str:
    """The conformance corpus and three DuckDB files under one prefix."""
    require_corpus(CORPUS)
    for f in sorted(CORPUS.glob("*.parquet")) + sorted(duckdb_dir.glob("*.parquet")):
        server.upload(f, f"corpus/{f.name}")
    return server.uri("corpus/")


def test_stats_gives_the_local_rows(server: Any, corpus_uri: str, duckdb_dir: Path, tmp_path: Path) -> None:
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    for f in [*CORPUS.glob("*.parquet"), *duckdb_dir.glob("*.parquet")]:
        shutil.copy(f, local_dir / f.name)
    local = cli(["stats", str(local_dir)], tmp_path, server.env(), real=False)
    remote = cli(["stats", corpus_uri], tmp_path, server.env())
    assert local.returncode == remote.returncode  # the corpus's invalid cases fail alike
    expected = rows(local.stdout)
    assert len({r["file"] for r in expected}) > 50  # the corpus files with at least one fully shredded path
    assert errors(remote.stderr, corpus_uri) == errors(local.stderr, str(local_dir.resolve()) + "/")
    assert rows(remote.stdout) == expected
    # The same files by name, each a URI of the store, give the same rows too.
    names = sorted(p.name for p in local_dir.glob("d*.parquet"))
    by_name = cli(["stats", *[corpus_uri + n for n in names]], tmp_path, server.env())
    assert by_name.returncode == 0, by_name.stderr
    assert rows(by_name.stdout) == [r for r in expected if r["file"] in names]
    assert all(json.loads(line)["file"].startswith(corpus_uri) for line in by_name.stdout.splitlines())


@pytest.fixture
def lake(store: Any, duckdb_dir: Path, request: pytest.FixtureRequest) -> str:
    """``<root>/<test>/`` holding data files in Spark's layout: Hive partitions of one column (its
    name starting with ``_``, which Spark keeps because of the ``=``), plus what is not data
    (_SUCCESS, _temporary/, .crc, hidden files)."""
    base = f"lake/{request.node.name.replace('[', '_').replace(']', '_')}/"
    store.upload(duckdb_dir / "d0.parquet", base + "_c=0/part-0.parquet")
    store.upload(duckdb_dir / "d1.parquet", base + "_c=1/part-1.parquet")
    store.upload(duckdb_dir / "d2.parquet", base + "_c=2/part-2.parquet")
    store.put(base + "_SUCCESS", b"x")
    store.put(base + "_temporary/0/part-9.parquet", b"not yet written")
    store.put(base + ".part-0.parquet.crc", b"crc")
    store.put(base + "_c=1/.hidden.parquet", b"x")
    store.put(base + "notes.txt", b"x")
    return str(store.uri(base))


def data_files(lake: str) -> list[str]:
    return sorted([lake + "_c=2/part-2.parquet", lake + "_c=1/part-1.parquet", lake + "_c=0/part-0.parquet"])


def test_listing_follows_sparks_rules(store: Any, lake: str) -> None:
    assert list_data_files(lake) == data_files(lake)
    assert list_data_files(lake.rstrip("/")) == data_files(lake)
    assert listing_prefix(lake) == lake
    assert expand_sources([lake, lake + "_c=0/part-0.parquet"]) == data_files(lake)
    assert len(list_data_files(lake, limit=1)) == 2  # stops once past the limit
    assert list_data_files(store.uri("nothing-here/")) == []
    # One flat listing; the hidden _temporary/ is jumped over (a listing from past it), never paged.
    store.control("/_test/reset")
    list_data_files(lake)
    listed = [unquote(r["query"]) for r in store.requests() if store.is_listing(r)]
    assert len(listed) == 2 and "_temporary0" in listed[1] and "_temporary0" not in listed[0], listed


def test_register_a_prefix_with_the_cli_and_prune(store: Any, lake: str, tmp_path: Path) -> None:
    r = cli(["register", "--table", "lake.events", lake, "--json"], tmp_path, store.env())
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(r.stdout)["added"]) == data_files(lake)
    files = cli(["files", "--table", "lake.events"], tmp_path, store.env(), real=False)
    assert sorted(files.stdout.split()) == data_files(lake)
    pruned = cli(["prune", "--table", "lake.events", "variant_get(v, '$.id', 'bigint') = 60"], tmp_path, store.env(), real=False)
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.split() == [lake + "_c=1/part-1.parquet"]


def rest(app_factory: Any, server: Any, **kw: Any) -> Any:
    """A started app whose one warehouse root is the store's ``lake/``, with table lake.events."""
    c = app_factory(roots=[root_of(server)], **kw)
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return c


def nothing_committed(c: Any) -> None:
    """The table is as created: its one snapshot (the creation) and no file."""
    r = c.get(T + "/snapshots", headers=READER)
    assert r.status_code == 200, r.text
    assert len(r.json()["snapshots"]) == 1, r.json()
    files = c.get(T + "/files", headers=READER)
    assert files.status_code == 200 and files.json()["files"] == [], files.text


def test_commit_a_prefix_through_rest_and_prune(store: Any, lake: str, app_factory: Any) -> None:
    c = rest(app_factory, store)
    r = c.post(T + "/commits", json={"prefixes": [lake]}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert sorted(r.json()["added"]) == data_files(lake)
    plan = c.post(T + "/plan", json={"sql": "variant_get(v, '$.id', 'bigint') = 60"}, headers=READER)
    assert plan.status_code == 200, plan.text
    assert [f["path"] for f in plan.json()["files"]] == [lake + "_c=1/part-1.parquet"]
    # Paths and prefixes together: a file named and listed is committed once.
    again = c.post(T + "/commits", json={"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake]}, headers=WRITER)
    assert again.status_code == 200, again.text
    assert sorted(again.json()["unchanged"]) == data_files(lake)
    # Files read by name now (no listing) are the files read after the listing: same content ids.
    by_name = c.post(T + "/commits", json={"paths": data_files(lake)}, headers=WRITER)
    assert by_name.status_code == 200 and sorted(by_name.json()["unchanged"]) == data_files(lake), by_name.text
    verify = c.post(T + "/verify", json={"all": True}, headers=ADMIN)
    assert verify.status_code == 200 and verify.json()["problems"] == [], verify.text


def test_a_listed_file_costs_one_get(store: Any, lake: str, duckdb_dir: Path, app_factory: Any) -> None:
    """Requests counted at the server: a listed file's footer comes in one GET (its size is known
    from the listing), with no HEAD; the bytes the server counts (``bench/remote.py``'s KiB per
    file) are those it sent: each file whole, as they are smaller than the tail read."""
    c = rest(app_factory, store)
    store.control("/_test/reset")
    r = c.post(T + "/commits", json={"prefixes": [lake]}, headers=WRITER)
    assert r.status_code == 200, r.text
    reads = [q for q in store.requests() if not store.is_listing(q)]
    assert sorted(unquote(q["path"]) for q in reads) == sorted(store.request_path(u) for u in data_files(lake)), reads
    assert all(q["method"] == "GET" and q["range"] for q in reads), reads
    sizes = {store.request_path(u): (duckdb_dir / f"d{i}.parquet").stat().st_size for i, u in enumerate(data_files(lake))}
    assert {unquote(q["path"]): q["bytes"] for q in reads} == sizes


@pytest.mark.parametrize("where", ["other/", "lakehouse/", "", "..", "elsewhere"])
def test_a_prefix_outside_the_roots_is_refused(store: Any, app_factory: Any, where: str) -> None:
    c = rest(app_factory, store)
    outside = {
        "other/": store.uri("other/"),
        "lakehouse/": store.uri("lakehouse/"),
        "": store.uri(""),
        "..": store.uri("lake/../other/"),
        "elsewhere": f"{store.scheme}://elsewhere/lake/",
    }[where]
    assert_error(c.post(T + "/commits", json={"prefixes": [outside]}, headers=WRITER), 403)
    assert_error(c.post(T + "/commits", json={"paths": [outside + "f.parquet"]}, headers=WRITER), 403)
    nothing_committed(c)


def test_keys_are_read_and_stored_verbatim(store: Any, duckdb_dir: Path, app_factory: Any) -> None:
    """The key checked against the roots is the key read and stored: Spark's Hive directories hold
    literal escapes and spaces, and an escaped '/' is no separator (the object lies elsewhere)."""
    spark_dir = "lake/verbatim/ts=2024-01-01 10%3A00%3A00/"
    store.upload(duckdb_dir / "d0.parquet", spark_dir + "part-0.parquet")
    store.upload(duckdb_dir / "d1.parquet", "lake%2Fsecret.parquet")  # at the bucket's root
    c = rest(app_factory, store)
    assert_error(c.post(T + "/commits", json={"paths": [store.uri("lake%2Fsecret.parquet")]}, headers=WRITER), 403)
    nothing_committed(c)
    spark_file = store.uri(spark_dir + "part-0.parquet")
    r = c.post(T + "/commits", json={"prefixes": [store.uri("lake/verbatim/")]}, headers=WRITER)
    assert r.status_code == 200 and r.json()["added"] == [spark_file], r.text
    # The Hive directory itself as the prefix: its space goes into the listing's query.
    r = c.post(T + "/commits", json={"prefixes": [store.uri(spark_dir)]}, headers=WRITER)
    assert r.status_code == 200 and r.json()["unchanged"] == [spark_file], r.text
    # The same object named by path, with the scheme in capitals, is the same live file.
    upper = store.scheme.upper() + spark_file[len(store.scheme) :]
    r = c.post(T + "/commits", json={"paths": [spark_file, upper]}, headers=WRITER)
    assert r.status_code == 200 and r.json()["unchanged"] == [spark_file], r.text
    # Listed by the helpers (backfill, write_and_register) from a root in capitals: the same form.
    from service.storage import list_data_files, listing_prefix

    upper_root = store.scheme.upper() + store.uri("lake/verbatim/")[len(store.scheme) :]
    assert list_data_files(upper_root) == [spark_file] and spark_file.startswith(listing_prefix(upper_root))
    # Percent-decoding the key names another object, which does not exist.
    decoded = store.uri("lake/verbatim/ts=2024-01-01 10:00:00/part-0.parquet")
    assert_error(c.post(T + "/commits", json={"paths": [decoded]}, headers=WRITER), 422)
    assert [f["path"] for f in c.get(T + "/files", headers=READER).json()["files"]] == [spark_file]
    stats = c.get(T + "/files/stats", params={"path": spark_file}, headers=READER).json()
    assert [(p["column"], p["raw"]) for p in stats["partition-values"]] == [("ts", "2024-01-01 10:00:00")], stats


def test_every_spelling_is_one_object(store: Any, lake: str, app_factory: Any) -> None:
    """Roots, commits (paths and prefixes), lookups, removals, listings and plans take every URI
    form of the store and keep one identity per object: the canonical form."""
    first, *others = store.aliases(lake)
    files = data_files(lake)
    c = rest(app_factory, store)
    r = c.post(T + "/commits", json={"prefixes": [first]}, headers=WRITER)
    assert r.status_code == 200 and sorted(r.json()["added"]) == files, r.text
    for alias in others:
        named = [f.replace(lake, alias) for f in files]
        r = c.post(T + "/commits", json={"paths": named, "prefixes": [alias]}, headers=WRITER)
        assert r.status_code == 200 and sorted(r.json()["unchanged"]) == files, (alias, r.text)
        stats = c.get(T + "/files/stats", params={"path": named[0]}, headers=READER)
        assert stats.status_code == 200 and stats.json()["path"] == files[0], stats.text
    table = c.get(T, headers=READER).json()
    assert table["live-record-count"] == 150, table  # three files of 50 rows, counted once
    assert sorted(f["path"] for f in c.get(T + "/files", headers=READER).json()["files"]) == files
    plan = c.post(T + "/plan", json={"sql": "variant_get(v, '$.id', 'bigint') = 60"}, headers=READER)
    assert [f["path"] for f in plan.json()["files"]] == [lake + "_c=1/part-1.parquet"], plan.text
    gone = c.post(T + "/files/remove", json={"paths": [files[0].replace(lake, others[-1])]}, headers=WRITER)
    assert gone.status_code == 200, gone.text
    assert sorted(f["path"] for f in c.get(T + "/files", headers=READER).json()["files"]) == files[1:]
    # The listing helpers (backfill, write_and_register) name files canonically too.
    assert list_data_files(first) == files and listing_prefix(first) == lake
    # A server whose root is configured in another spelling (same catalog) holds the same paths.
    c2 = app_factory(roots=[store.aliases(root_of(store))[-1]])
    r = c2.post(T + "/commits", json={"paths": files}, headers=WRITER)
    assert r.status_code == 200 and (r.json()["added"], sorted(r.json()["unchanged"])) == ([files[0]], files[1:]), r.text


def test_another_scheme_is_refused(store: Any, app_factory: Any) -> None:
    c = rest(app_factory, store)
    other = "gs" if store.scheme != "gs" else "abfs"
    for body in ({"prefixes": [f"{other}://lake/lake/"]}, {"paths": [f"{other}://lake/lake/f.parquet"]}):
        err = assert_error(c.post(T + "/commits", json=body, headers=WRITER), 403, "path_not_allowed")
        assert "scheme" in json.dumps(err)
    # The root's own scheme, other forms: a query (pyarrow options) and user info are refused.
    assert_error(c.post(T + "/commits", json={"paths": [root_of(store) + "f.parquet?x=1"]}, headers=WRITER), 422)
    at = f"{store.scheme}://someone@lake/lake/f.parquet"
    assert_error(c.post(T + "/commits", json={"paths": [at]}, headers=WRITER), 403)
    nothing_committed(c)


def test_an_empty_prefix_is_an_error(store: Any, app_factory: Any) -> None:
    c = rest(app_factory, store)
    err = assert_error(c.post(T + "/commits", json={"prefixes": [root_of(store) + "empty/"]}, headers=WRITER), 422, "file_access")
    assert "no Parquet data files" in json.dumps(err)


def test_a_missing_bucket_is_named_by_the_cli_and_rest(store: Any, app_factory: Any, tmp_path: Path) -> None:
    """A typo in the bucket's (container's) name: it was listed as empty ("no Parquet data files
    in this directory"), while a file in it said "no such bucket" (on S3)."""
    gone = f"{store.scheme}://no-such-bucket/lake/"
    kind = "container" if store.scheme == "abfs" else "bucket"
    done = cli(["register", "--table", "lake.nobucket", gone], tmp_path, {})
    assert done.returncode == 1 and f"{gone}: no such {kind}" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "no Parquet" not in done.stderr, done.stderr
    # A file named in it (Azure's HEAD and the GCS emulator's GET said "no such file").
    done = cli(["register", "--table", "lake.nobucket", gone + "f.parquet"], tmp_path, {})
    assert done.returncode == 1 and f"{gone}f.parquet: no such {kind}" in done.stderr, done.stderr
    c = app_factory(roots=[root_of(store), gone])
    body = {"prefixes": [gone], "create-if-missing": {"variant-columns": ["v"]}}
    err = assert_error(c.post(T + "/commits", json=body, headers=ADMIN), 422)
    assert f"no such {kind}" in err["message"] and err["details"]["path"] == gone, err
    assert c.get("/v1/namespaces", headers=READER).json()["namespaces"] == []


def bad_commit(c: Any, body: dict[str, Any], needle: str) -> dict[str, Any]:
    r = c.post(T + "/commits", json=body, headers=WRITER)
    assert r.status_code == 422, r.text
    assert needle in r.text, r.text
    nothing_committed(c)
    return dict(r.json()["error"])


def test_a_missing_object_fails_the_commit(store: Any, lake: str, app_factory: Any) -> None:
    c = rest(app_factory, store)
    missing = lake + "_c=1/gone.parquet"
    err = bad_commit(c, {"paths": [lake + "_c=0/part-0.parquet", missing]}, f"{missing}: no such file")
    assert err["type"] == "file_access"


def test_a_truncated_object_fails_the_commit(store: Any, lake: str, duckdb_dir: Path, app_factory: Any, tmp_path: Path) -> None:
    c = rest(app_factory, store)
    whole = (duckdb_dir / "d0.parquet").read_bytes()
    key = lake[len(store.uri("")) :] + "_c=3/part-3.parquet"
    truncated = store.put(key, whole[: len(whole) // 2])
    bad_commit(c, {"prefixes": [lake]}, truncated)
    bad_commit(c, {"paths": [truncated]}, truncated)
    # The CLI: the good files' rows, one line on stderr naming the bad one, exit 1.
    r = cli(["stats", lake], tmp_path, store.env())
    assert r.returncode == 1 and truncated in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert {os.path.basename(json.loads(line)["file"]) for line in r.stdout.splitlines()} == {
        "part-0.parquet",
        "part-1.parquet",
        "part-2.parquet",
    }


def test_a_denied_request_fails_the_commit(store: Any, lake: str, app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    c = rest(app_factory, store)
    wrong = store.wrong_credentials()
    for k, v in wrong.items():
        monkeypatch.setenv(k, v)
    err = bad_commit(c, {"paths": [lake + "_c=0/part-0.parquet"]}, "access denied")
    assert err["details"].get("reason") == "denied", err
    bad_commit(c, {"prefixes": [lake]}, f"cannot list {lake}")
    r = cli(["register", "--table", "lake.events", lake], tmp_path, store.env(**wrong))
    assert r.returncode == 1 and f"cannot list {lake}" in r.stderr, r.stderr
    stats = cli(["stats", lake + "_c=0/part-0.parquet"], tmp_path, store.env(**wrong))
    assert stats.returncode == 1 and "access denied" in stats.stderr and not stats.stdout, stats.stderr


def test_list_errors_are_file_access_errors(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in store.wrong_credentials().items():
        monkeypatch.setenv(k, v)
    with pytest.raises(FileAccessError, match=f"cannot list {root_of(store)}"):
        list_data_files(root_of(store))
