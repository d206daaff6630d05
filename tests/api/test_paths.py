"""The warehouse-root check (pure function) and its use by the routes: traversal, symlink escape,
absolute paths elsewhere, URL schemes not configured, non-Parquet names, all refused before any read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from service.api.paths import (
    InvalidFilePathError,
    PathNotAllowedError,
    check_file_path,
    check_prefix,
    parse_roots,
)
from tests.api.conftest import ADMIN, WRITER, assert_error, write_variant_file


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    (root / "t").mkdir(parents=True)
    (root / "t" / "a.parquet").write_bytes(b"PAR1")
    (tmp_path / "lake2").mkdir()
    (tmp_path / "lake2" / "x.parquet").write_bytes(b"PAR1")
    (tmp_path / "outside.parquet").write_bytes(b"PAR1")
    return root


def test_inside_root_is_accepted_and_canonical(lake: Path) -> None:
    roots = parse_roots([str(lake)])
    real = os.path.realpath(lake / "t" / "a.parquet")
    assert check_file_path(str(lake / "t" / "a.parquet"), roots).path == real
    assert check_file_path(f"file://{lake}/t/a.parquet", roots).path == real
    assert check_file_path(f"file:{lake}/t/a.parquet", roots).path == real
    assert check_file_path(f"{lake}/t/./a.parquet", roots).path == real
    assert check_file_path(f"{lake}//t/a.parquet", roots).path == real
    # A root given as a file URI, with a trailing slash.
    assert check_file_path(str(lake / "t" / "a.parquet"), parse_roots([f"file://{lake}/"])).path == real
    # Percent-escapes of file URIs are decoded.
    assert check_file_path(f"file://{lake}/t/%61.parquet", roots).path == real
    # Not-yet-existing files pass the check (the read then fails with 422 file_access).
    assert check_file_path(str(lake / "t" / "new.PARQUET"), roots).path.endswith("new.PARQUET")


@pytest.mark.parametrize(
    "make_path",
    [
        lambda lake: f"{lake}/../outside.parquet",  # traversal
        lambda lake: f"{lake}/t/../../outside.parquet",
        lambda lake: f"{lake}/t/../a.parquet",  # '..' is refused even when it stays inside
        lambda lake: f"file://{lake}/%2E%2E/outside.parquet",  # encoded traversal
        lambda lake: f"{lake.parent}/outside.parquet",  # absolute path elsewhere
        lambda lake: f"{lake.parent}/lake2/x.parquet",  # sibling sharing the root's prefix
        lambda lake: "/etc/shadow.parquet",
        lambda lake: f"file://evil.example{lake}/t/a.parquet",  # file URI with a host
        lambda lake: "s3://bucket/lake/t/a.parquet",  # scheme not configured
        lambda lake: "http://127.0.0.1:9/x.parquet",
        lambda lake: "hdfs://namenode/lake/a.parquet",
    ],
)
def test_outside_is_forbidden(lake: Path, make_path) -> None:
    with pytest.raises(PathNotAllowedError) as ei:
        check_file_path(make_path(lake), parse_roots([str(lake)]))
    assert ei.value.http_status == 403


@pytest.mark.parametrize(
    "make_path",
    [
        lambda lake: "t/a.parquet",  # relative
        lambda lake: "a.parquet",
        lambda lake: f"{lake}/t/a.parquet\x00.txt",  # NUL
        lambda lake: f"{lake}/t/a\n.parquet",  # control character
        lambda lake: f"{lake}/t/a.csv",  # not Parquet
        lambda lake: f"{lake}/t/",
        lambda lake: f"{lake}\\t\\a.parquet",  # backslashes
        lambda lake: f"file://{lake}/t/a.parquet?x=1",
        lambda lake: f"file://{lake}/t/x%00.parquet",  # escaped control characters, checked decoded
        lambda lake: f"file://{lake}/t/cli%0Aent.parquet",
        lambda lake: "",
        lambda lake: f"{lake}",  # the root itself
    ],
)
def test_malformed_is_unprocessable(lake: Path, make_path) -> None:
    for resolve in (True, False):
        with pytest.raises(InvalidFilePathError) as ei:
            check_file_path(make_path(lake), parse_roots([str(lake)]), resolve=resolve)
        assert ei.value.http_status == 422



def test_escaped_control_characters_in_a_file_uri_prefix_are_unprocessable(lake: Path) -> None:
    for prefix in (f"file://{lake}/t%00/", f"file://{lake}/t%0A/"):
        with pytest.raises(InvalidFilePathError):
            check_prefix(prefix, parse_roots([str(lake)]))


def test_symlink_escape_is_forbidden(lake: Path, tmp_path: Path) -> None:
    roots = parse_roots([str(lake)])
    (lake / "t" / "link.parquet").symlink_to(tmp_path / "outside.parquet")
    (lake / "dirlink").symlink_to(tmp_path / "lake2")
    with pytest.raises(PathNotAllowedError, match="symlink"):
        check_file_path(str(lake / "t" / "link.parquet"), roots)
    with pytest.raises(PathNotAllowedError):
        check_file_path(str(lake / "dirlink" / "x.parquet"), roots)
    # A link to a non-Parquet file inside the root is refused too.
    (lake / "t" / "secret.txt").write_text("x")
    (lake / "t" / "s.parquet").symlink_to(lake / "t" / "secret.txt")
    with pytest.raises(InvalidFilePathError):
        check_file_path(str(lake / "t" / "s.parquet"), roots)
    # A symlink that stays inside is fine; the resolved path is what is stored.
    (lake / "t" / "inner.parquet").symlink_to(lake / "t" / "a.parquet")
    assert check_file_path(str(lake / "t" / "inner.parquet"), roots).path == os.path.realpath(lake / "t" / "a.parquet")
    # Without resolution (client statistics) paths are checked lexically.
    assert check_file_path(str(lake / "t" / "link.parquet"), roots, resolve=False).path == str(lake / "t" / "link.parquet")


def test_symlinked_root_is_resolved(lake: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(lake)
    roots = parse_roots([str(tmp_path / "alias")])
    assert check_file_path(str(lake / "t" / "a.parquet"), roots).path == os.path.realpath(lake / "t" / "a.parquet")


def test_object_store_roots() -> None:
    roots = parse_roots(["s3://bucket/lake/", "gs://other", "hdfs://nn/warehouse/"])
    assert check_file_path("s3://bucket/lake/t/a.parquet", roots).path == "s3://bucket/lake/t/a.parquet"
    assert check_file_path("s3://bucket/lake/t/a%20b.parquet", roots).local is False
    assert check_file_path("gs://other/x/y.parquet", roots).scheme == "gs"
    # shredcat's own stores read the key verbatim, so it is checked and stored verbatim: Spark's
    # Hive directories hold literal escapes and spaces; '%2E%2E' is a key segment, not '..'.
    for key in ["t/ts=2024-01-01 10%3A00%3A00/part-0.parquet", "%2E%2E/x/a.parquet", "t/a b.parquet"]:
        assert check_file_path(f"s3://bucket/lake/{key}", roots).path == f"s3://bucket/lake/{key}"
    assert check_prefix("s3://bucket/lake/t/ts=2024-01-01 10%3A00%3A00/", roots).prefix.endswith("10%3A00%3A00/")
    # One object, one path: the scheme is stored lower-case.
    assert check_file_path("S3://bucket/lake/t/a.parquet", roots).path == "s3://bucket/lake/t/a.parquet"
    assert check_prefix("S3://bucket/lake/t/", roots).prefix == "s3://bucket/lake/t/"
    # ... and every spelling of one store is its canonical one (tests/storage/test_uris.py).
    assert check_file_path("gcs://other/x.parquet", roots).path == "gs://other/x.parquet"
    assert check_file_path("s3a://bucket/lake/t/a.parquet", roots).path == "s3://bucket/lake/t/a.parquet"
    assert check_prefix("S3N://bucket/lake/t/", roots).prefix == "s3://bucket/lake/t/"
    assert check_file_path("s3://bucket/lake/a.parquet", parse_roots(["s3a://bucket/lake"])).path == "s3://bucket/lake/a.parquet"
    for bad, cls in [
        ("s3://bucket/lake2/a.parquet", PathNotAllowedError),
        ("s3://bucket/other/a.parquet", PathNotAllowedError),
        ("s3://bucket2/lake/a.parquet", PathNotAllowedError),
        ("s3://bucket/lake/../x/a.parquet", PathNotAllowedError),
        # The key 'lake%2Fsecret.parquet' lies at the bucket's root, outside 'lake/'.
        ("s3://bucket/lake%2Fsecret.parquet", PathNotAllowedError),
        ("s3://bucket/lake%2F/a.parquet", PathNotAllowedError),
        ("hdfs://nn/warehouse/%2E%2E/x/a.parquet", PathNotAllowedError),  # pyarrow decodes escapes
        ("hdfs://nn/warehouse/a b.parquet", InvalidFilePathError),
        ("s3://user:secret@bucket/lake/a.parquet", PathNotAllowedError),
        ("s3://bucket/lake/a.parquet?endpoint_override=evil:9000", InvalidFilePathError),
        ("s3://bucket/lake/a.parquet#x", InvalidFilePathError),
        ("s3://bucket/lake//a.parquet", InvalidFilePathError),
        ("s3://bucket/lake/a.json", InvalidFilePathError),
        ("s3://bucket/lake/a\tb.parquet", InvalidFilePathError),
        ("s3://bucket/lake/a\nb.parquet", InvalidFilePathError),
        ("s3:/bucket/lake/a.parquet", InvalidFilePathError),
        ("/local/a.parquet", PathNotAllowedError),  # no local root configured
        ("abfs://other/x.parquet", PathNotAllowedError),
    ]:
        with pytest.raises(cls):
            check_file_path(bad, roots)


def test_no_roots_refuses_everything(lake: Path) -> None:
    with pytest.raises(PathNotAllowedError, match="no warehouse roots"):
        check_file_path(str(lake / "t" / "a.parquet"), ())


@pytest.mark.parametrize("bad", ["relative/dir", "s3://", "s3:///x", "s3://u@b/x", "s3://b/../x", " ", "s3://b/x?y=1"])
def test_bad_roots_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_roots([bad])


# --- through the API: refused before any read ---------------------------------------------------


def test_routes_refuse_before_reading(app_factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = tmp_path / "lake"
    write_variant_file(lake / "ok.parquet", 10)
    outside = write_variant_file(tmp_path / "outside" / "o.parquet", 10)
    (lake / "escape.parquet").symlink_to(outside)
    client = app_factory(roots=[str(lake)])
    client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    client.post("/v1/namespaces/lake/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)

    import service.stats.extract as extract

    opened: list[str] = []
    real = extract.extract_file_beneath
    monkeypatch.setattr(
        extract, "extract_file_beneath", lambda root, p, **kw: (opened.append(p), real(root, p, **kw))[1]
    )
    url = "/v1/namespaces/lake/tables/t/commits"
    cases = [
        (str(outside), 403, "path_not_allowed"),
        (f"{lake}/../outside/o.parquet", 403, "path_not_allowed"),
        (str(lake / "escape.parquet"), 403, "path_not_allowed"),
        ("s3://bucket/lake/x.parquet", 403, "path_not_allowed"),
        ("file:///etc/passwd", 422, "invalid_file_path"),
        ("ok.parquet", 422, "invalid_file_path"),
    ]
    for path, status, type_ in cases:
        # The bad path comes second: nothing may be read, not even the good first file.
        r = client.post(url, json={"paths": [str(lake / "ok.parquet"), path]}, headers=WRITER)
        err = assert_error(r, status, type_, field="body.paths[1]")
        assert err["details"]["path"] == path
    assert opened == []
    # The same checks apply to inferring a table's columns.
    r = client.post("/v1/namespaces/lake/tables", json={"name": "u", "infer-from": str(outside)}, headers=ADMIN)
    assert_error(r, 403, "path_not_allowed", field="body.infer-from")
    assert opened == []
    # And to client-side statistics (lexically).
    body = {
        "path": str(outside), "file-size-bytes": 100, "record-count": 0, "footer-size": 10, "variant-columns": ["v"],
    }
    r = client.post(url, json={"files": [body]}, headers=WRITER)
    assert_error(r, 403, "path_not_allowed", field="body.files[0].path")
    # Nothing was committed by any of these.
    assert client.get("/v1/namespaces/lake/tables/t", headers=ADMIN).json()["live-file-count"] == 0
    # The good file alone goes through.
    r = client.post(url, json={"paths": [str(lake / "ok.parquet")]}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert opened == [os.path.realpath(lake / "ok.parquet")]


def test_the_stored_form_is_what_a_commit_stores(lake: Path) -> None:
    """Removals and lookups compare paths in :func:`stored_path`'s form: for every path a commit
    accepts it is the path the commit stored (client-side statistics: no symlink resolved)."""
    from service.api.paths import lookup_path
    from service.storage.objects import stored_path

    roots = parse_roots([str(lake), "s3://bucket/lake/", "gs://b"])
    base = os.path.realpath(lake)
    for given in [
        f"{base}/t/a.parquet",
        f"file://{base}/t/a.parquet",
        f"file:{base}/t/./b%20c.parquet",
        f"{base}//t///a.parquet",
        f"/{base}/t/a.parquet",
        "s3://bucket/lake/ts=1 2%3A0/a.parquet",
        "S3://bucket/lake/a.parquet",
        "GS://b/x/y.parquet",
        f"FILE://{base}/t/a.parquet",
        f"File:{base}/t/a.parquet",
    ]:
        assert check_file_path(given, roots, resolve=False).path == stored_path(given) == lookup_path(given), given
    # No stored form: as given, never resolved against the server's directory, never a 500.
    for given in ["file://host/x.parquet", "x.parquet", "file:rel.parquet", "FILE:rel.parquet", "file://[x/a.parquet"]:
        assert lookup_path(given) == given
    assert lookup_path("S3:/b/x.parquet") == "s3:/b/x.parquet"  # a URI, of no store: its scheme lower-cased
    with pytest.raises(InvalidFilePathError, match="NUL"):
        lookup_path("/a\x00.parquet")
