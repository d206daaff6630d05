"""Object storage through a real S3 API server (moto on loopback, IAM enforced, so signatures are
checked): the shared object-store suite (:mod:`tests.storage.remote_suite`: ``stats`` rows equal to
the local rows, listing by Spark's rules, ``register``/``prune`` and REST commits by prefix, the
warehouse-root checks and the per-file error model) plus what is S3's own: a listing of more than
one page whose server dies before the last page, and the prefix limit and the client's commits of
prefixes, measured here once for every store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.errors import FileAccessError
from service.storage import list_data_files
from tests.api.conftest import WRITER, assert_error
from tests.storage.conftest import BUCKET, S3Server, start_s3_server
from tests.storage.remote_suite import *  # noqa: F403 - the shared suite, run for this store
from tests.storage.remote_suite import T, data_files, nothing_committed, rest

ROOT = f"s3://{BUCKET}/lake/"


@pytest.fixture(scope="module")
def server(s3_server: S3Server) -> S3Server:
    return s3_server


def test_prefix_expansion_counts_against_the_file_limit(s3: S3Server, lake: str, app_factory: Any) -> None:
    c = rest(app_factory, s3, max_files_per_commit=2)
    assert_error(c.post(T + "/commits", json={"prefixes": [lake]}, headers=WRITER), 413, "limit_exceeded", "body.prefixes[0]")
    # Named paths count too: one named + two listed is one too many.
    three = {"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake + "_c=2/", lake + "_c=1/"]}
    assert_error(c.post(T + "/commits", json=three, headers=WRITER), 413, "limit_exceeded", "body.prefixes[1]")
    nothing_committed(c)
    two = {"paths": [lake + "_c=0/part-0.parquet"], "prefixes": [lake + "_c=2/"]}
    assert c.post(T + "/commits", json=two, headers=WRITER).status_code == 200


def test_a_server_dying_mid_listing_fails_the_commit(app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server = start_s3_server()
    try:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        # More objects than one listing page (1,000): the second page never comes. Stored by the
        # server itself (1,100 signed PUTs took 27 s of moto's CPU).
        server.put_many([f"lake/big/part-{i:05d}.parquet" for i in range(1100)], b"x")
        c = rest(app_factory, server)
        server.control("/_test/reset")
        assert len(list_data_files(ROOT + "big/")) == 1100
        pages = [r for r in server.requests() if "continuation-token" in r["query"]]
        lists = [r for r in server.requests() if server.is_listing(r)]
        assert pages, lists  # the listing is paginated
        # The server dies when the last page is asked for: earlier pages were answered.
        server.control(f"/_test/die-after-lists/{len(lists) - 1}")
        r = c.post(T + "/commits", json={"prefixes": [ROOT + "big/"]}, headers=WRITER)
        assert r.status_code == 422, r.text
        assert f"cannot list {ROOT}big/" in r.text
        assert server.process.wait(10) is not None  # it really died
        nothing_committed(c)
    finally:
        server.stop()


def test_an_unknown_access_key_is_refused(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite signs with a wrong secret; a key id IAM does not know is refused as well.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "no-such-key")
    with pytest.raises(FileAccessError, match=f"cannot list {ROOT}"):
        list_data_files(ROOT)


def test_the_client_commits_prefixes(s3: S3Server, lake: str, app_factory: Any) -> None:
    from service.client import AsyncShredcatClient, ShredcatClient
    from service.client.calls import commit

    c = rest(app_factory, s3)
    client = ShredcatClient(http=c, token="writer-token-2")
    result = client.commit_prefixes("lake", "events", [lake])
    assert sorted(result.added) == data_files(lake)
    assert sorted(client.commit("lake", "events", prefixes=[lake]).unchanged) == data_files(lake)
    # The async client sends the very same call (one request builder for both).
    assert AsyncShredcatClient.commit_prefixes is ShredcatClient.commit_prefixes
    assert commit("lake", "events", prefixes=[lake], idempotency_key="k").json == {"prefixes": [lake]}


def test_a_named_profile_is_resolved_by_boto3(s3: S3Server, lake: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``AWS_PROFILE`` (keys in a shared credentials file here; SSO and credential_process the
    same way): boto3 resolves it, obstore signs with what it gives; keys in the environment win."""
    creds = tmp_path / "credentials"
    creds.write_text(f"[lakeprofile]\naws_access_key_id = {s3.key_id}\naws_secret_access_key = {s3.secret}\n")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_PROFILE", "lakeprofile")
    assert list_data_files(lake) == data_files(lake)
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    with pytest.raises(FileAccessError, match="AWS_PROFILE='no-such-profile': ProfileNotFound"):
        list_data_files(lake)


def test_each_prefix_is_listed_once(s3: S3Server, lake: str, app_factory: Any) -> None:
    """A prefix given 3,000 times, or lying under another given prefix, costs no listing of its
    own; an empty one is still an error; the listed files count against the limit once."""
    c = rest(app_factory, s3, max_files_per_commit=3)
    s3.control("/_test/reset")
    body = {"prefixes": [lake] * 3000 + [lake + "_c=1/", lake.replace("s3://", "s3a://") + "_c=2/"]}
    r = c.post(T + "/commits", json=body, headers=WRITER)
    assert r.status_code == 200 and sorted(r.json()["added"]) == data_files(lake), r.text
    lists = [q for q in s3.requests() if s3.is_listing(q)]
    assert len(lists) == 2, lists  # the prefix, flat, once (and from past its _temporary/)
    empty = c.post(T + "/commits", json={"prefixes": [lake, lake + "_c=9/"]}, headers=WRITER)
    assert_error(empty, 422, "file_access", "body.prefixes[1]")
