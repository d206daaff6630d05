"""``shredcat register --bulk``: a directory of real files (the writer zoo's and shredded ones)
loaded through ``Catalog.bulk_load`` leaves the plain register's rows at one snapshot, a file that
fails anywhere leaves nothing, and the batches are extracted only as the load takes them; on both
backends, through the command's own entry point."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog
from service.cli import main
from service.settings import get_settings
from tests.catalog.test_bulk_load import _by_name, _dump, other_url, pg_url  # noqa: F401
from tests.support.shred_writer import MISSING, write_shredded
from tests.writers.zoo import write_zoo

NS, T = "lake", "ev"
#: Files per batch of these tests' loads (SHREDCAT_MAX_FILES_PER_COMMIT).
BATCH = 4


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shredded files of several layouts (objects, decimals, dates, partial shredding, SQL NULL
    rows, many row groups) and every writer of the zoo: 26 files, in 7 batches of 4."""
    root = tmp_path_factory.mktemp("lake")
    spec = {"a": "int64", "s": "varchar", "o": {"d": "decimal(9,2)", "t": "date"}}
    (root / "a").mkdir()
    for i in range(15):
        rows = [
            {"a": i * 10 + r, "s": f"k{i:02d}{r}", "o": {"d": Decimal(f"{i}.{r}5"), "t": dt.date(2026, 1, 1 + r)}}
            if r % 4
            else {"a": "not an int", "s": MISSING, "o": None}
            for r in range(12)
        ]
        write_shredded(root / "a" / f"f{i:02d}.parquet", rows, spec, row_group_size=5, sql_null_rows=[7] if i % 3 else [])
    write_zoo(root / "z")
    return root


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", str(BATCH))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _written(root: Path, tmp_path: Path) -> Path:
    """``root``'s files copied under ``tmp_path`` (a file may then be replaced by a bad one)."""
    import shutil

    shutil.copytree(root, tmp_path / "lake")
    return tmp_path / "lake"


def test_bulk_register_leaves_the_plain_registers_rows(
    lake: Path, catalog_url: str, other_url: str, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """Every catalog table's rows equal the plain register's, but clock, UUIDs, snapshot ids and
    the order ids were given in: the table as its commit creates it, then every file at the
    load's one snapshot."""
    assert main(["register", "--database-url", catalog_url, "--table", f"{NS}.{T}", str(lake)]) == 0
    monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", str(BATCH))
    get_settings.cache_clear()
    try:
        assert main(["register", "--bulk", "--database-url", other_url, "--table", f"{NS}.{T}", str(lake)]) == 0
    finally:
        get_settings.cache_clear()
    with Catalog(catalog_url) as plain, Catalog(other_url) as bulk:
        assert _by_name(bulk) == _by_name(plain)
        info = bulk.get_table(NS, T)
        assert info.live_file_count == 26
        with bulk.engine.connect() as c:
            snaps = c.execute(text("SELECT snapshot_id, changes_made, added_files FROM ducklake_snapshot ORDER BY 1")).all()
            load = snaps[-1]
            assert load == (info.current_snapshot_id, f"inserted_into_table:{info.table_id}", 26)
            assert [s[1].split(":")[0] for s in snaps] == ["created_schema", "created_table", "inserted_into_table"]
            begins = c.execute(text("SELECT DISTINCT begin_snapshot FROM ducklake_data_file")).scalars().all()
            assert begins == [load[0]]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _interrupting(at: str) -> Callable[[Any], Any]:
    from service.stats.extract import extract_file

    def extract(path: str, **kw: Any) -> Any:
        if path.endswith(at):
            raise KeyboardInterrupt
        return extract_file(path, **kw)

    return extract


#: (case, existing table): a later batch's other Variant column is refused only by a table that
#: exists (one the load creates takes it: test_later_batches_columns_give_the_plain_registers_table).
FAILING = [
    *((case, existing) for case in ("unreadable", "partitioned", "interrupted") for existing in (False, True)),
    ("other-variant-column", True),
]


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize(("case", "existing"), FAILING, ids=[f"{c}-{'existing' if e else 'new'}-table" for c, e in FAILING])
def test_a_file_failing_in_the_middle_leaves_nothing(
    lake: Path,
    catalog_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    existing: bool,
) -> None:
    """A file the extractor refuses, one the load refuses (a partitioned file among unpartitioned
    ones; a Variant column an existing table lacks), or Ctrl-C, in the third batch: the plain
    register's error (exit 1, one line naming the file) or exit 130, and every catalog table's rows
    as before the run (a table the load would have created is created in its transaction: no
    table, namespace or snapshot stays)."""
    root = _written(lake, tmp_path)
    bad = root / "a" / "f09.parquet"
    if case == "unreadable":
        bad.write_bytes(b"not parquet at all")
    elif case == "partitioned":
        (root / "a" / "k=1").mkdir()
        bad = bad.rename(root / "a" / "k=1" / bad.name)
    elif case == "other-variant-column":
        write_shredded(bad, [{"a": 1}], {"a": "int64"}, column="w")
    else:
        monkeypatch.setattr("service.stats.extract.extract_file", _interrupting(bad.name))
    base = ["--database-url", catalog_url, "--table", f"{NS}.{T}", "--workers", "1"]
    if existing:
        assert main(["register", *base, str(root / "a" / "f00.parquet")]) == 0
    with Catalog(catalog_url) as cat:
        before = _dump(cat, frozenset())
    capsys.readouterr()
    code, out, err = _run(["register", "--bulk", *base, str(root)], capsys)
    assert (code, out) == ((130, "") if case == "interrupted" else (1, ""))
    errors = [line for line in err.splitlines() if not line.startswith("extracting")]
    if case != "interrupted":
        assert len(errors) == 1 and str(bad) in errors[0], err
    with Catalog(catalog_url) as cat:
        assert _dump(cat, frozenset()) == before


@pytest.mark.usefixtures("small_batches")
def test_batches_are_extracted_as_the_load_takes_them(
    lake: Path, catalog_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Memory bounded whatever the number of files: when the load writes a batch, at most that
    batch and the next have been extracted beyond what it has written (never every file)."""
    from service.catalog.commit import bulk
    from service.stats.extract import extract_file

    extracted = 0
    loaded = 0
    ahead: list[int] = []

    def counting(path: str, **kw: Any) -> Any:
        nonlocal extracted
        extracted += 1
        return extract_file(path, **kw)

    add = bulk._add

    def adding(conn: Any, r: Any, new: Any, load: Any) -> None:
        nonlocal loaded
        ahead.append(extracted - loaded)
        add(conn, r, new, load)
        loaded += len(new)

    monkeypatch.setattr("service.stats.extract.extract_file", counting)
    monkeypatch.setattr(bulk, "_add", adding)
    args = ["register", "--bulk", "--database-url", catalog_url, "--table", f"{NS}.{T}", "--workers", "1", str(lake)]
    code, out, _ = _run(args, capsys)
    assert code == 0 and out.startswith(f"{NS}.{T}: 26 added, 0 unchanged in 7 batches (snapshot "), out
    assert len(ahead) == 7 and max(ahead) <= 2 * BATCH, ahead


def test_bulk_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Options that make no sense with --bulk (a load only adds, and is not replayed): exit 2
    before anything is read or any catalog created."""
    monkeypatch.chdir(tmp_path)
    for extra, named in (
        (["--remove", "old.parquet"], "--remove"),
        (["--remove-missing-ok"], "--remove-missing-ok"),
        (["--idempotency-key", "k"], "--idempotency-key"),
    ):
        code, out, err = _run(["register", "--bulk", "--table", f"{NS}.{T}", "missing.parquet", *extra], capsys)
        assert (code, out) == (2, "") and err == f"shredcat register: --bulk cannot be combined with {named}\n"
    assert not (tmp_path / "shredcat.db").exists()


def test_batches_from_worker_processes_are_the_files_in_order(tmp_path: Path) -> None:
    """Many local files: each batch extracted in worker processes as it is asked for, the same
    stats in the same order as one after the other in this process."""
    from service.cli.register import _extracted

    paths = [str(write_shredded(tmp_path / f"f{i:03d}.parquet", [{"a": i}], {"a": "int64"})) for i in range(70)]
    in_processes = list(_extracted(paths, 2, 32))
    assert [len(b) for b in in_processes] == [32, 32, 6]
    assert [f for b in in_processes for f in b] == [f for b in _extracted(paths, 1, 70) for f in b]
    assert [f.path for b in in_processes for f in b] == paths


def _with_plain_column(path: Path, name: str) -> Path:
    """The shredded file at ``path`` rewritten with one more plain column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    pq.write_table(t.append_column(name, pa.array([f"x{i}" for i in range(t.num_rows)])), path)
    return path


def test_later_batches_columns_give_the_plain_registers_table(
    tmp_path: Path, catalog_url: str, other_url: str, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """A table the load creates gets every batch's columns, not only the first batch's: later
    batches bringing another Variant column and another plain column load, and every catalog row
    equals the plain register's over the same files (the Variant columns first, as it creates
    them)."""
    root = tmp_path / "lake"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for i in range(5):
        _with_plain_column(write_shredded(root / "a" / f"f{i}.parquet", [{"a": i}], {"a": "int64"}), "p")
    for i in range(4):
        f = write_shredded(root / "b" / f"g{i}.parquet", [{"b": f"s{i}"}], {"b": "varchar"}, column="w")
        if i % 2:
            _with_plain_column(f, "q")
    base = ["--workers", "1", "--table", f"{NS}.{T}", str(root)]
    assert main(["register", "--database-url", catalog_url, *base]) == 0
    monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", str(BATCH))
    get_settings.cache_clear()
    try:
        assert main(["register", "--bulk", "--database-url", other_url, *base]) == 0
    finally:
        get_settings.cache_clear()
    with Catalog(catalog_url) as plain, Catalog(other_url) as bulk:
        assert bulk.get_table(NS, T).live_file_count == 9
        assert _by_name(bulk) == _by_name(plain)
