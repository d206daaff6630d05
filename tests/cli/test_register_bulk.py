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

from service.catalog import Catalog, models
from service.cli import main
from service.settings import get_settings
from tests.catalog.test_bulk_load import CLOCK_AND_UUIDS, SNAPSHOT_IDS, _dump, other_url, pg_url  # noqa: F401
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


#: Surrogate keys a load allocates as it meets their objects: one commit of every file and a load
#: of batches meet them in another order. Compared by what they name.
SURROGATES = ("column_id", "parent_column", "path_id", "shape_id")


def _by_name(cat: Catalog) -> dict[str, list[tuple[Any, ...]]]:
    """Every catalog table's rows (:func:`_dump`, but clock, UUIDs, snapshot ids and the
    snapshot table), column, path and shape ids replaced by what they name."""
    ignore = CLOCK_AND_UUIDS | SNAPSHOT_IDS
    with cat.engine.connect() as c:
        col: dict[int, str] = dict(c.execute(text("SELECT column_id, column_name || ':' || column_kind FROM ducklake_column")).all())
        name = {
            "column_id": col,
            "parent_column": col,
            "path_id": {
                p: (col[cid], vp, ty)
                for p, cid, vp, ty in c.execute(text("SELECT path_id, column_id, variant_path, shredded_type FROM shredcat_variant_path"))
            },
            "shape_id": {
                s: (col[cid], op, d)
                for s, cid, op, d in c.execute(text("SELECT shape_id, column_id, object_path, fields_digest FROM shredcat_object_shape"))
            },
        }
    out = {}
    for table, rows in _dump(cat, ignore, ("ducklake_snapshot",)).items():
        cols = [x.name for x in models.schema().tables[table].columns if x.name not in ignore]
        out[table] = sorted(
            (tuple(name[k].get(v, v) if k in name and v is not None else v for k, v in zip(cols, r, strict=True)) for r in rows),
            key=repr,
        )
    return out


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


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize("existing", [False, True], ids=["new-table", "existing-table"])
@pytest.mark.parametrize("case", ["unreadable", "other-variant-column", "interrupted"])
def test_a_file_failing_in_the_middle_leaves_nothing(
    lake: Path,
    catalog_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    existing: bool,
) -> None:
    """A file the extractor refuses, one the load refuses (a Variant column the table created
    from the first batch lacks), or Ctrl-C, in the third batch: the plain register's error (exit
    1, one line naming the file) or exit 130, and the catalog as before the run (a table created
    for the load, and its namespace, dropped again)."""
    root = _written(lake, tmp_path)
    bad = root / "a" / "f09.parquet"
    if case == "unreadable":
        bad.write_bytes(b"not parquet at all")
    elif case == "other-variant-column":
        write_shredded(bad, [{"a": 1}], {"a": "int64"}, column="w")
    else:
        monkeypatch.setattr("service.stats.extract.extract_file", _interrupting(bad.name))
    base = ["--database-url", catalog_url, "--table", f"{NS}.{T}", "--workers", "1"]
    if existing:
        assert main(["register", *base, str(root / "a" / "f00.parquet")]) == 0
    with Catalog(catalog_url) as cat:
        before = _dump(cat, frozenset(), ("ducklake_snapshot",) if not existing else ())
    capsys.readouterr()
    code, out, err = _run(["register", "--bulk", *base, str(root)], capsys)
    assert (code, out) == ((130, "") if case == "interrupted" else (1, ""))
    errors = [line for line in err.splitlines() if not line.startswith(("extracting", "shredcat register: created table"))]
    if case != "interrupted":
        assert len(errors) == 1 and str(bad) in errors[0], err
    assert ("created table" in err) is not existing
    with Catalog(catalog_url) as cat:
        if existing:
            assert _dump(cat, frozenset()) == before
        else:
            # Nothing live: the table and namespace made for the load ended (their rows stay as
            # the history of a dropped table, with a created and a dropped snapshot each).
            assert cat.list_tables() == [] and cat.list_namespaces() == []
            history = ("ducklake_snapshot", "ducklake_schema", "ducklake_table", "ducklake_column", "ducklake_table_column_stats")
            assert _dump(cat, frozenset(), history) == {k: v for k, v in before.items() if k not in history}
            with cat.engine.connect() as c:
                live = c.execute(text("SELECT count(*) FROM ducklake_table WHERE end_snapshot IS NULL")).scalar_one()
                assert live == 0


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
