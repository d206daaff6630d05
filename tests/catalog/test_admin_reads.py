"""The catalog's reads for the admin pages (recent snapshots, sorted file pages, counts, one file,
a path's per-file bounds) on both backends, against the catalog library's own listings."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.errors import BadInputError, NotFoundError
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType
from tests.support.events import write_event_files


@pytest.fixture(scope="module")
def events_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return write_event_files(Path(tmp_path_factory.mktemp("admin-reads")) / "warehouse" / "events")


@pytest.fixture
def filled_catalog(catalog: Catalog, events_files: list[str]) -> Catalog:
    catalog.register("lake", "events", events_files[:3])
    catalog.register("lake", "events", events_files[3:])
    # A file registered with client-side statistics whose "id" bounds are unknown.
    catalog.commit(
        "lake",
        "events",
        [
            FileStats(
                path="/lake/unknown-bounds.parquet",
                file_size_bytes=4096,
                record_count=10,
                footer_size=100,
                content_id="etag-1",
                variant_columns=("v",),
                paths=(PathStats("v", '"id"', ShreddedType.parse("int64"), 10, 10, 0, None, None, None),),
            )
        ],
    )
    catalog.create_table("lake", "dropped", ["v"])
    catalog.drop_table("lake", "dropped")
    return catalog


def test_recent_snapshots_newest_first_with_keyset(filled_catalog: Catalog) -> None:
    everything = admin_reads(filled_catalog).recent_snapshots(limit=100)
    ids = [s.snapshot_id for s in everything]
    assert ids == sorted(ids, reverse=True)
    dropped = [s for s in everything if s.table == "lake.dropped"]
    assert dropped and not any(s.table_live for s in dropped)
    events = admin_reads(filled_catalog).recent_snapshots(namespace="lake", table="events", limit=100)
    lib = filled_catalog.list_snapshots("lake", "events")
    assert [s.snapshot_id for s in events] == [s.snapshot_id for s in reversed(lib)]
    assert all(s.table_live and s.table == "lake.events" for s in events)
    page1 = admin_reads(filled_catalog).recent_snapshots(namespace="lake", table="events", limit=2)
    page2 = admin_reads(filled_catalog).recent_snapshots(
        namespace="lake", table="events", before=page1[-1].snapshot_id, limit=100
    )
    assert [s.snapshot_id for s in page1 + page2] == [s.snapshot_id for s in events]
    with pytest.raises(NotFoundError):
        admin_reads(filled_catalog).recent_snapshots(namespace="lake", table="nope")
    with pytest.raises(BadInputError):
        admin_reads(filled_catalog).recent_snapshots(limit=0)


@pytest.mark.parametrize("sort", ["path", "size", "rows"])
@pytest.mark.parametrize("descending", [False, True])
def test_sorted_file_pages_cover_every_file_once(filled_catalog: Catalog, sort: str, descending: bool) -> None:
    every = filled_catalog.list_files("lake", "events")
    key = {"path": lambda f: (f.path,), "size": lambda f: (f.file_size_bytes, f.path), "rows": lambda f: (f.record_count, f.path)}[sort]
    expected = [f.path for f in sorted(every, key=key, reverse=descending)]
    seen: list[str] = []
    after = None
    while True:
        page = admin_reads(filled_catalog).list_files_sorted(
            "lake", "events", sort=sort, descending=descending, after=after, limit=2  # type: ignore[arg-type]
        )
        if not page:
            break
        seen += [f.path for f in page]
        last = page[-1]
        after = ({"path": last.path, "size": last.file_size_bytes, "rows": last.record_count}[sort], last.path)
    assert seen == expected  # rows tie everywhere (100): the path breaks ties, in the same direction


def test_prefix_count_and_find_file(filled_catalog: Catalog, events_files: list[str]) -> None:
    prefix = events_files[0].rsplit("/", 1)[0] + "/part-"
    assert admin_reads(filled_catalog).count_files("lake", "events", prefix=prefix) == 5
    assert admin_reads(filled_catalog).count_files("lake", "events") == 6
    sized = admin_reads(filled_catalog).list_files_sorted("lake", "events", sort="size", prefix="/lake/", limit=10)
    assert [f.path for f in sized] == ["/lake/unknown-bounds.parquet"]
    f = admin_reads(filled_catalog).find_file("lake", "events", events_files[2])
    lib = filled_catalog.list_files("lake", "events", prefix=events_files[2], limit=1)[0]
    assert f == lib
    with pytest.raises(NotFoundError):
        admin_reads(filled_catalog).find_file("lake", "events", "/nope.parquet")
    with pytest.raises(BadInputError):
        admin_reads(filled_catalog).list_files_sorted("lake", "events", sort="colour")  # type: ignore[arg-type]


def test_path_bounds(filled_catalog: Catalog) -> None:
    pb = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"')
    assert pb.shredded_type == ShreddedType.parse("int64") and pb.total == 6 and pb.live_files == 6
    assert [(f.min_value, f.max_value) for f in pb.files] == [
        ("0", "99"), ("100", "199"), ("200", "299"), ("300", "399"), ("400", "499"), (None, None)
    ]  # unknown bounds last when ordered by min
    by_path = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', order="path")
    assert [f.path for f in by_path.files] == sorted(f.path for f in pb.files)
    capped = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', limit=2)
    assert len(capped.files) == 2 and capped.total == 6
    # Beyond the limit, evenly spaced picks of the whole order (first and last included)...
    assert [(f.min_value, f.max_value) for f in capped.files] == [("0", "99"), (None, None)]
    three = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', limit=3)
    assert [f.min_value for f in three.files] == ["0", "200", None]
    # ...and the point-lookup estimate over every file, whatever the limit: each probe keeps its
    # own file and the one whose bounds are unknown, 2 of 6.
    for b in (pb, capped, three, by_path):
        assert b.point_keep == pytest.approx(2 / 6)
        assert b.with_values == 6
    assert [f.min_value for f in admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', order="path", limit=2).files] == [
        by_path.files[0].min_value, by_path.files[-1].min_value
    ]
    name = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"name"')
    assert name.types == (("varchar", 4), ("int64", 1)) and name.shredded_type == ShreddedType.parse("varchar")
    as_int = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"name"', shredded_type="int64")
    assert [(f.min_value, f.max_value) for f in as_int.files] == [("7", "106")]
    none = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"nope"')
    assert none.shredded_type is None and none.files == () and none.live_files == 6
    with pytest.raises(NotFoundError):
        admin_reads(filled_catalog).path_bounds("lake", "events", "w", '"id"')
    with pytest.raises(NotFoundError):
        admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', shredded_type="varchar")


def test_path_bounds_are_kept_per_snapshot(filled_catalog: Catalog) -> None:
    """A path's bounds are read once per table snapshot: asked again, one statement (the table
    row, which carries the snapshot); a commit or a removal moves the snapshot and they are read
    anew, with the new file in them and in the estimate."""
    from sqlalchemy import event

    statements: list[str] = []

    def count(*args: Any) -> None:
        if args[2].lstrip().upper().startswith("SELECT"):  # not SQLite's BEGIN
            statements.append(args[2])

    first = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"')
    event.listen(filled_catalog.engine, "before_cursor_execute", count)
    try:
        again = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"')
        assert again == first and len(statements) == 1, statements
        # Another limit, order or type is another answer.
        capped = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"', limit=2)
        assert len(capped.files) == 2 and len(statements) > 1
    finally:
        event.remove(filled_catalog.engine, "before_cursor_execute", count)
    # A file spanning every other: each probe now keeps it too (and the unknown one, and its own).
    stats = PathStats("v", '"id"', ShreddedType.parse("int64"), 10, 10, 0, 0, 499, None)
    filled_catalog.commit("lake", "events", [FileStats("/lake/new.parquet", 4096, 10, 100, "etag-2", ("v",), (stats,))])
    grown = admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"')
    assert grown.total == 7 and "/lake/new.parquet" in [f.path for f in grown.files]
    assert first.point_keep == pytest.approx(2 / 6) and grown.point_keep == pytest.approx(3 / 7)
    filled_catalog.remove("lake", "events", ["/lake/new.parquet"])
    assert admin_reads(filled_catalog).path_bounds("lake", "events", "v", '"id"').total == 6


def test_path_bounds_of_a_path_in_many_files_come_from_a_sample(filled_catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past PATH_BOUNDS_EXACT_FILES a path's chart reads a sample of its files, not every key: a
    sample probing every id holds every file and gives what every file's keys give; a sample of
    two holds the first and the last file in commit order, and the files with values and the
    estimate are scaled from it to every file."""
    from service.catalog import admin

    reads = admin_reads(filled_catalog)
    exact = {order: reads.path_bounds("lake", "events", "v", '"id"', order=order, limit=3) for order in ("min", "path")}
    assert exact["min"].sample == 0
    monkeypatch.setattr(admin, "PATH_BOUNDS_EXACT_FILES", 5)
    monkeypatch.setattr(admin, "PATH_BOUNDS_SAMPLE", 1000)
    for order in ("min", "path"):
        whole = reads.path_bounds("lake", "events", "v", '"id"', order=order, limit=4)
        assert whole.sample == 6 and whole.total == 6 and whole.with_values == 6
        assert whole.point_keep == pytest.approx(exact[order].point_keep)
        assert [f.path for f in whole.files] == [f.path for f in reads.path_bounds("lake", "events", "v", '"id"', order=order, limit=4).files]
        assert [f.path for f in whole.files][::3] == [f.path for f in exact[order].files][::2]  # first and last
    monkeypatch.setattr(admin, "PATH_BOUNDS_SAMPLE", 2)
    two = reads.path_bounds("lake", "events", "v", '"id"', limit=10)
    assert two.sample == 2 and two.total == 6 and two.live_files == 6 and two.types == (("int64", 6),)
    # The first file's known range, then the unknown one (committed last): each probe of the known
    # range is held by both files of the sample, so by every file.
    assert [(f.min_value, f.max_value) for f in two.files] == [(exact["min"].files[0].min_value, exact["min"].files[0].max_value), (None, None)]
    assert two.with_values == 6 and two.point_keep == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("type_name", "bounds"),
    [
        ("float64", [(-math.inf, 1.0), (2.0, math.inf), (0.5, 0.7), (0.1 + 0.2, 1 / 3), (-0.0, 5e-324)]),
        ("varchar", [("apple", "kiwi"), ("lemon", "zebra"), ("é", "ü"), ("", "a")]),
        ("int64", [(-(2**62), 2**62), (5, 5), (5, 9)]),
    ],
)
def test_path_bounds_estimate_reads_every_key_exactly(catalog: Catalog, type_name: str, bounds: list[tuple[Any, Any]]) -> None:
    """The estimate is computed from the keys as the database returns them (one array value on
    PostgreSQL, rows off the cursor on SQLite): floats to the last bit and infinities, strings as
    their UTF-8 bytes, 64-bit integers; the same as from the keys computed in Python. (SQLite keeps
    no sign on a zero; -0.0 == 0.0 to Python's comparisons, which are all the estimate makes.)"""
    from sqlalchemy import text

    from service.catalog import repository as repo
    from service.catalog.estimates import point_keep_ratio
    from service.values import family, index_key

    st = ShreddedType.parse(type_name)
    files = [
        FileStats(f"/lake/f{i}.parquet", 4096, 10, 100, f"etag-{i}", ("v",), (PathStats("v", '"x"', st, 10, 10, 0, lo, hi, False if st.kind.name.startswith("FLOAT") else None),))
        for i, (lo, hi) in enumerate(bounds)
    ]
    catalog.create_table("lake", "keys", ["v"])
    catalog.commit("lake", "keys", files)
    lows = sorted(getattr(index_key(st, lo), family(st)) for lo, _ in bounds)
    highs = sorted(getattr(index_key(st, hi), family(st)) for _, hi in bounds)
    with catalog.engine.connect() as conn:
        (path_id,) = conn.execute(text("SELECT path_id FROM shredcat_variant_path WHERE variant_path = '\"x\"'")).one()
        got = repo.sorted_keys(conn, path_id, st)
    assert got == (lows, highs) and [type(k) for k in got[0]] == [type(k) for k in lows]
    assert admin_reads(catalog).path_bounds("lake", "keys", "v", '"x"').point_keep == point_keep_ratio(st, lows, highs, len(bounds))


def test_substring_search_takes_wildcards_literally(catalog: Catalog) -> None:
    def stats(path: str) -> FileStats:
        return FileStats(path, 100, 1, 10, None, ("v",), ())

    names = [
        "/lake/a/part_1.parquet",
        "/lake/a/partX1.parquet",
        "/lake/b/50%.parquet",
        "/lake/b/5.parquet",
        "/lake/c/back\\slash.parquet",
        "/lake/c/PART-upper.parquet",
    ]
    catalog.create_namespace("lake", if_not_exists=True)
    catalog.create_table("lake", "t", ["v"])
    first = catalog.commit("lake", "t", [stats(p) for p in names[:3]])
    catalog.commit("lake", "t", [stats(p) for p in names[3:]])

    def found(text: str, added_in: int | None = None) -> list[str]:
        files = admin_reads(catalog).list_files_sorted("lake", "t", sort="path", descending=False, contains=text, added_in=added_in)
        assert admin_reads(catalog).count_files("lake", "t", contains=text, added_in=added_in) == len(files)
        return [f.path for f in files]

    assert found("part_") == ["/lake/a/part_1.parquet"]  # "_" is not "any character"
    assert found("0%") == ["/lake/b/50%.parquet"]  # "%" is not "anything"
    assert found("k\\s") == ["/lake/c/back\\slash.parquet"]
    assert found("part") == ["/lake/a/partX1.parquet", "/lake/a/part_1.parquet", "/lake/c/PART-upper.parquet"]
    assert found("/b/") == ["/lake/b/5.parquet", "/lake/b/50%.parquet"]
    assert found("parquet", added_in=first.snapshot_id) == sorted(names[:3])
    assert found("nowhere") == []
    assert admin_reads(catalog).count_files("lake", "t", added_in=first.snapshot_id) == 3
    removed = catalog.remove("lake", "t", [names[0]])
    assert [f.path for f in admin_reads(catalog).files_removed_at("lake", "t", removed.snapshot_id)] == [names[0]]
    assert admin_reads(catalog).files_removed_at("lake", "t", first.snapshot_id) == []
    with pytest.raises(BadInputError):
        admin_reads(catalog).count_files("lake", "t", added_in=2**70)


def test_a_count_of_files_stops_past_at_most(catalog: Catalog) -> None:
    """``at_most``: the count is exact up to it and ``at_most + 1`` (meaning "more") past it, with
    or without a filter; a bad bound is refused."""
    catalog.create_namespace("lake", if_not_exists=True)
    catalog.create_table("lake", "t", ["v"])
    catalog.commit("lake", "t", [FileStats(f"/lake/a/part-{i}.parquet", 100, 1, 10, None, ("v",), ()) for i in range(5)])
    reads = admin_reads(catalog)
    counts = [reads.count_files("lake", "t", contains="PART-", at_most=n) for n in (0, 3, 4, 5, 9)]
    assert counts == [1, 4, 5, 5, 5]
    assert reads.count_files("lake", "t", contains="t-3", at_most=0) == 1
    assert reads.count_files("lake", "t", contains="nowhere", at_most=0) == 0
    assert [reads.count_files("lake", "t", at_most=n) for n in (2, 5)] == [3, 5]
    assert reads.count_files("lake", "t", prefix="/lake/a/", at_most=2) == 3
    with pytest.raises(BadInputError):
        reads.count_files("lake", "t", contains="part", at_most=-1)


def test_files_behind_each_coverage_status_and_health(filled_catalog: Catalog, events_files: list[str]) -> None:
    # "name" is varchar in four files, int64 in part-4; "extra" only in part-4; "id" everywhere
    # but with unknown bounds in the client-side file (which has no other path).
    def names(files: list[Any]) -> list[str]:
        return [f.path.rsplit("/", 1)[1] for f in files]

    by_type = admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"name"', shredded_type="int64")
    assert names(by_type) == ["part-4.parquet"]
    varchar = admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"name"', shredded_type="varchar")
    assert names(varchar) == [f"part-{i}.parquet" for i in range(4)]
    absent = admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"extra"', shredded_type=None)
    assert sorted(names(absent)) == [f"part-{i}.parquet" for i in range(4)] + ["unknown-bounds.parquet"]
    assert [f.path for f in absent] == sorted(f.path for f in absent)
    page = admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"extra"', shredded_type=None, limit=2)
    rest = admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"extra"', shredded_type=None, after=page[-1].path)
    assert names(page + rest) == names(absent)
    assert admin_reads(filled_catalog).files_by_path("lake", "events", "v", '"id"', shredded_type=None) == []
    with pytest.raises(NotFoundError):
        admin_reads(filled_catalog).files_by_path("lake", "events", "w", '"id"', shredded_type=None)
    # Health: matches path_coverage's statuses.
    coverage = admin_reads(filled_catalog).path_coverage("lake", "events")
    t = filled_catalog.get_table("lake", "events")
    health = admin_reads(filled_catalog).path_health()[t.table_id]
    assert health.in_stats == sum(c.in_global_stats for c in coverage) == 1  # only "id" is in all 6
    assert health.conflict == sum(len(c.types) > 1 for c in coverage) == 1
    assert health.in_stats + health.conflict + health.partial == len(coverage)
