"""``shredcat backfill``: a directory of a few hundred Spark-written files registered through a real
service (uvicorn on 127.0.0.1, which the Spark executors could reach too), each exactly once:
on rerun, after a lost commit answer, and around a file that cannot be extracted."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.client import NotFound, ShredcatClient
from service.spark import LocalService, backfill, list_parquet_files

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

N_FILES = 300


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("backfill-lake")


@pytest.fixture(scope="module")
def lake(spark: Any, root: Path) -> Path:
    """N_FILES small Spark-written shredded files in two directories (nested listing)."""
    out = root / "events"

    def write(start: int, stop: int, tasks: int, where: Path) -> None:
        # Files of 10 consecutive ids each, cut by the writer from a task per 1000 rows: the same
        # files (rows, shredding, footer statistics: compared) as one task per file, without a
        # few hundred Spark tasks.
        spark.range(start, stop, 1, tasks).selectExpr(
            "to_variant_object(named_struct('user', named_struct('id', id DIV 10), 'n', id, "
            "'tags', array(concat('t', id % 5)))) AS v"
        ).write.option("maxRecordsPerFile", 10).parquet(str(where))

    write(0, 2000, 2, out / "day=1")
    write(2000, 3000, 1, out / "day=2")
    files = list_parquet_files(str(out))
    assert len(files) == N_FILES
    return out


@pytest.fixture(scope="module")
def service(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    db = tmp_path_factory.mktemp("backfill-catalog") / "catalog.db"
    with LocalService(f"sqlite:///{db}", [str(root)]) as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[ShredcatClient]:
    with service.client() as c:
        yield c


def _live(client: ShredcatClient, name: str) -> list[str]:
    return [f.path for f in client.iter_files("lake", name)]


def test_backfill_registers_each_file_once_also_when_rerun(spark: Any, lake: Path, client: ShredcatClient) -> None:
    lines: list[str] = []
    first = backfill(spark, str(lake), "lake.events", client=client, batch_size=128, progress=lines.append)
    assert first.ok and first.table_created
    assert (first.files_listed, first.already_live, first.files_added, first.batches) == (N_FILES, 0, N_FILES, 3)
    live = _live(client, "events")
    assert len(live) == len(set(live)) == N_FILES
    assert set(live) == set(list_parquet_files(str(lake)))
    assert client.load_table("lake", "events").live_record_count == N_FILES * 10
    assert client.load_table("lake", "events").snapshot_count == 1 + 3  # creation + one per batch
    assert any("batch 3/3 committed" in line for line in lines), lines

    again = backfill(spark, str(lake), "lake.events", client=client, batch_size=128, progress=None)
    assert again.ok and (again.already_live, again.files_added, again.batches) == (N_FILES, 0, 0)
    assert sorted(_live(client, "events")) == sorted(live)

    # The statistics are those the server extracts itself, and pruning works on them.
    plan = client.plan_all("lake", "events", sql="variant_get(v, '$.user.id', 'bigint') = 7")
    assert plan.files_kept == 1 and "day=1" in plan.paths[0]


class _LoseFirstCommitAnswer(httpx.BaseTransport):
    """Sends every request, but for the first commit drops the answer (as a network cut would)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/commits") and self.lost == 0:
            response.read()
            response.close()
            self.lost += 1
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


def test_a_batch_whose_answer_was_lost_is_retried_and_applied_once(
    spark: Any, lake: Path, service: LocalService
) -> None:
    transport = _LoseFirstCommitAnswer()
    # No client-level retries: backfill's own batch retry must reuse the batch's key.
    with ShredcatClient(service.url, retries=0, transport=transport) as c:
        lines: list[str] = []
        result = backfill(spark, str(lake), "lake.retried", client=c, batch_size=100, retry_backoff=0.01, progress=lines.append)
        assert transport.lost == 1
        assert result.ok and result.batches == 3 and result.batches_committed == 3
        assert result.batches_replayed == 1, lines
        assert any("retrying" in line for line in lines)
        live = _live(c, "retried")
        assert len(live) == len(set(live)) == N_FILES
        snapshots = list(c.iter_snapshots("lake", "retried"))
        assert len(snapshots) == 1 + 3


def test_a_bad_file_fails_its_batch_only_and_a_rerun_completes(
    spark: Any, lake: Path, root: Path, client: ShredcatClient
) -> None:
    mixed = root / "mixed"
    shutil.copytree(lake, mixed)
    files = list_parquet_files(str(mixed))
    bad = Path(files[150])
    bad.write_bytes(b"PAR1 this is not a parquet file PAR1")
    lines: list[str] = []
    result = backfill(spark, str(mixed), "lake.mixed", client=client, batch_size=100, progress=lines.append)
    assert not result.ok and result.batches == 3 and result.batches_committed == 2
    (failed,) = result.failed
    assert failed.index == 2 and [p for p, _ in failed.bad_files] == [str(bad)]
    assert any(str(bad) in line for line in lines)
    live = set(_live(client, "mixed"))
    assert len(live) == 200 and not live & set(failed.paths)  # nothing of the failed batch

    bad.unlink()
    rerun = backfill(spark, str(mixed), "lake.mixed", client=client, batch_size=100, progress=None)
    assert rerun.ok and (rerun.already_live, rerun.files_added) == (200, 99)
    live = _live(client, "mixed")
    assert len(live) == len(set(live)) == N_FILES - 1


def test_cli_backfill(lake: Path, service: LocalService, client: ShredcatClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main

    monkeypatch.setenv("SHREDCAT_URL", service.url)
    target = str(lake / "day=2")
    assert main(["backfill", "--table", "lake.cli", target, "--batch-size", "50"]) == 0
    out = capsys.readouterr()
    assert "lake.cli:" in out.out and "added" in out.out
    assert "batch 2/2 committed" in out.err
    assert set(_live(client, "cli")) == set(list_parquet_files(target))
    # A rerun has nothing to do; with --no-create a missing table is an error.
    assert main(["backfill", "--table", "lake.cli", target, "--json"]) == 0
    assert '"added": 0' in capsys.readouterr().out
    assert main(["backfill", "--table", "lake.absent", target, "--no-create"]) == 1
    assert "absent" in capsys.readouterr().err
    assert main(["backfill", "--table", "nodot", target]) == 2


def test_cli_backfill_local_runs_without_spark(
    lake: Path, service: LocalService, client: ShredcatClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--local``: the same waves, batches and idempotent commits, extracted on this machine (a
    process pool for these 300 local files): no SparkSession is asked for."""
    import service.cli.backfill as cli_backfill
    from service.cli import main

    def no_spark(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("--local must not start Spark")

    monkeypatch.setattr(cli_backfill, "_spark_session", no_spark)
    monkeypatch.setenv("SHREDCAT_URL", service.url)
    assert main(["backfill", "--local", "--table", "lake.local", str(lake), "--batch-size", "100"]) == 0
    out = capsys.readouterr()
    assert "batch 3/3 committed" in out.err
    live = _live(client, "local")
    assert len(live) == len(set(live)) == N_FILES and set(live) == set(list_parquet_files(str(lake)))
    plan = client.plan_all("lake", "local", sql="variant_get(v, '$.user.id', 'bigint') = 7")
    assert plan.files_kept == 1 and "day=1" in plan.paths[0]
    # A rerun has nothing to do; --local with --master is a usage error.
    assert main(["backfill", "--local", "--table", "lake.local", str(lake), "--json"]) == 0
    assert '"added": 0' in capsys.readouterr().out
    assert main(["backfill", "--local", "--master", "local[1]", "--table", "lake.local", str(lake)]) == 2
    capsys.readouterr()
    # A root holding no data file (a typo, an unmounted volume) is a failure, not a clean run.
    for root in (lake.parent / "no-such-dir", lake.parent / "empty-dir"):
        if root.name == "empty-dir":
            root.mkdir(exist_ok=True)
        assert main(["backfill", "--local", "--table", "lake.local", str(root)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("shredcat backfill: ") and "no Parquet data files" in err and "Traceback" not in err


def test_a_backfill_whose_every_batch_fails_creates_no_table(root: Path, client: ShredcatClient) -> None:
    broken = root / "broken"
    broken.mkdir()
    (broken / "part-0.parquet").write_bytes(b"PAR1 this is not a parquet file PAR1")
    result = backfill(None, str(broken), "nothing.here", client=client, progress=None)
    assert not result.ok and result.batches_committed == 0 and not result.table_created
    with pytest.raises(NotFound):
        client.load_table("nothing", "here")
    assert "nothing" not in client.list_namespaces()


@pytest.mark.parametrize("table", ["lake.b/f", "lake.tab\x01le", "sp/ace.t", "lake.cafe\u0301"])
@pytest.mark.parametrize("no_create", [False, True])
def test_cli_backfill_local_refuses_a_new_tables_bad_name_before_listing(
    table: str, no_create: bool, root: Path, service: LocalService, client: ShredcatClient,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A name the catalog refuses for a new table (as `shredcat register` checks it): one line,
    exit 2, before the root is listed, let alone extracted; no table or namespace created. A '/'
    was a bare "404 not_found: Not Found" from each batch, after extracting the whole lake."""
    import importlib

    from service.cli import main

    spark_backfill = importlib.import_module("service.spark.backfill")  # the package exports the function

    def not_reached(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("listed or extracted before the table's name was checked")

    monkeypatch.setattr(spark_backfill, "list_data_files", not_reached)
    monkeypatch.setattr(spark_backfill, "extract_locally", not_reached)
    monkeypatch.setenv("SHREDCAT_URL", service.url)
    before = client.list_namespaces()
    args = ["backfill", "--local", "--table", table, str(root), *(["--no-create"] if no_create else [])]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("shredcat backfill: invalid ") and err.count("\n") == 1, err
    assert "Not Found" not in err and "Traceback" not in err
    assert client.list_namespaces() == before


def test_cli_backfill_local_fails_on_an_unreachable_service_before_listing(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every batch's commit would fail: one line, exit 1, the root never listed (a lake on an
    object store may take minutes to list)."""
    import importlib

    from service.cli import main
    from tests.support.server import free_port

    def not_reached(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("listed before the service was reached")

    monkeypatch.setattr(importlib.import_module("service.spark.backfill"), "list_data_files", not_reached)
    monkeypatch.setenv("SHREDCAT_URL", f"http://127.0.0.1:{free_port()}")
    assert main(["backfill", "--local", "--table", "lake.t", str(root)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("shredcat backfill: ") and "Connect" in err and err.count("\n") == 1, err
