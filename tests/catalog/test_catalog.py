"""Catalog behaviour, on SQLite and PostgreSQL (the ``catalog`` fixture is parametrized)."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest
from sqlalchemy import text

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.errors import (
    AlreadyExistsError,
    BadInputError,
    ConflictError,
    InvalidStatsError,
    LimitExceededError,
    NotFoundError,
    ShredcatError,
)
from service.stats.model import FileStats, ShreddedObject
from tests.catalog.factories import (
    BLOB,
    DATE,
    DEC,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    VARCHAR,
    assert_consistent,
    assert_live_counters,
    cs,
    fs,
    int_file,
    ps,
    with_columns,
)

NS, T = "lake", "events"


@pytest.fixture
def cat(catalog: Catalog) -> Catalog:
    catalog.create_table(NS, T, ["v"])
    return catalog


def files_of(cat: Catalog, snapshot: int | None = None) -> list[str]:
    return [f.path for f in cat.list_files(NS, T, snapshot=snapshot, limit=10_000)]


def gjson(cat: Catalog, column: str = "v") -> list[dict] | None:
    s = cat.global_stats_json(NS, T)[column]
    return None if s is None else json.loads(s)


def by_field(cat: Catalog, column: str = "v") -> dict[str, dict]:
    return {o["field_name"]: o for o in gjson(cat, column) or []}


# --- tables -----------------------------------------------------------------------------------


def test_create_and_list_tables(catalog: Catalog) -> None:
    info = catalog.create_table("ns1", "t1", ["v", "s.w"])
    assert (info.namespace, info.name, info.variant_columns) == ("ns1", "t1", ("v", "s.w"))
    assert (info.live_file_count, info.live_record_count, info.live_bytes) == (0, 0, 0)
    assert info.snapshot_count == 1 and info.last_commit_time is not None
    catalog.create_table("ns1", "t0", ["v"])
    catalog.create_table("ns2", "t1", ["v"])
    assert [t.qualified_name for t in catalog.list_tables()] == ["ns1.t0", "ns1.t1", "ns2.t1"]
    assert [t.qualified_name for t in catalog.list_tables("ns2")] == ["ns2.t1"]
    assert [n.name for n in catalog.list_namespaces()] == ["ns1", "ns2"]
    with pytest.raises(AlreadyExistsError):
        catalog.create_table("ns1", "t1", ["v"])
    again = catalog.create_table("ns1", "t1", ["other"], if_not_exists=True)
    assert again.table_id == info.table_id and again.variant_columns == ("v", "s.w")
    with pytest.raises(NotFoundError):
        catalog.create_table("nope", "t", ["v"], create_namespace=False)
    with pytest.raises(BadInputError):
        catalog.create_table("ns1", "dup", ["v", "v"])
    with pytest.raises(NotFoundError):
        catalog.get_table("ns1", "missing")


def test_namespace_create(catalog: Catalog) -> None:
    catalog.create_namespace("n")
    with pytest.raises(AlreadyExistsError):
        catalog.create_namespace("n")
    assert catalog.create_namespace("n", if_not_exists=True).name == "n"


@pytest.mark.parametrize(
    "name",
    [".", "..", "a/b", "/etc", "a\tb", "line1\nline2", "x\x7f", "caf\udce9", "x\x85", "cafe\u0301", "a\u202eb", "a\u200bb"],
)
def test_names_that_no_url_or_output_line_can_hold_are_refused(catalog: Catalog, name: str) -> None:
    """Namespace and table names are REST path segments and fields of the CLI's tab-separated
    output, whichever way they are created (the CLI creates tables as it registers)."""
    with pytest.raises(InvalidStatsError, match=r"invalid (namespace|table) name"):
        catalog.create_namespace(name)
    with pytest.raises(InvalidStatsError, match=r"invalid (namespace|table) name"):
        catalog.create_table("ok", name, ["v"])
    with pytest.raises(InvalidStatsError, match=r"invalid (namespace|table) name"):
        catalog.register(name, "t", ["a.parquet"], extract=int_file)
    assert catalog.list_tables() == [] and catalog.list_namespaces() == []
    # Looking such a name up is not an error of the database: not found, or a clear bad input.
    with pytest.raises((NotFoundError, BadInputError)):
        catalog.get_table("ok", name)


def test_a_table_named_before_the_rules_still_takes_registrations(catalog: Catalog) -> None:
    """Names refused for new tables (a tab here) may exist from before: registering into such a
    table is a commit into it, not a creation, so its name is not checked again."""
    from service.catalog import repository as repo
    from service.catalog.db import run_transaction

    def make(conn: object) -> None:
        ns = repo.insert_namespace(conn, "old")  # type: ignore[arg-type]
        repo.insert_table(conn, ns, "a\tb", ("v",))  # type: ignore[arg-type]

    run_transaction(catalog.engine, make)
    assert catalog.register("old", "a\tb", ["x.parquet"], extract=int_file).added == ("x.parquet",)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("cafe\u0301", r"'cafe\\u0301': not in Unicode NFC \(composed\) form; its NFC form is 'caf\\xe9'"),
        ("invoice\u202egpj", r"holds U\+202E RIGHT-TO-LEFT OVERRIDE, an invisible or bidirectional control character"),
        ("a\u2066b", r"holds U\+2066 LEFT-TO-RIGHT ISOLATE"),
        ("a\u200db", r"holds U\+200D ZERO WIDTH JOINER"),
        ("\ufeffa", r"holds U\+FEFF"),
        ("a\u2029b", r"holds U\+2029 PARAGRAPH SEPARATOR"),
    ],
)
def test_new_names_are_nfc_and_show_as_they_are(catalog: Catalog, name: str, message: str) -> None:
    """NFC and NFD "café" would be two namespaces that look the same, and a right-to-left override
    shows a name as another: new names are refused with the reason (escaped, so it reads the same
    on any terminal); NFC names of any script are accepted."""
    for create in (lambda: catalog.create_namespace(name), lambda: catalog.create_table("ok", name, ["v"])):
        with pytest.raises(InvalidStatsError, match=message) as e:
            create()
        assert e.value.http_status == 422
    assert catalog.list_namespaces() == []
    for fine in ("caf\u00e9", "日本語", "Ωmega", "עברית", "a b-c_d.e"):  # right-to-left scripts are letters, not controls
        catalog.create_namespace(fine)
        catalog.create_table(fine, fine, ["v"])
    assert sorted(t.name for t in catalog.list_tables()) == sorted(["caf\u00e9", "日本語", "Ωmega", "עברית", "a b-c_d.e"])


def test_names_from_before_the_unicode_rules_keep_working(catalog: Catalog) -> None:
    """An NFD name or one with a bidirectional control, created before the rules, is looked up,
    registered into and dropped by its exact spelling; its NFC spelling is another (new) name."""
    from service.catalog import repository as repo
    from service.catalog.db import run_transaction

    def make(conn: object) -> None:
        ns = repo.insert_namespace(conn, "cafe\u0301")  # type: ignore[arg-type]
        repo.insert_table(conn, ns, "a\u202eb", ("v",))  # type: ignore[arg-type]

    run_transaction(catalog.engine, make)
    assert catalog.register("cafe\u0301", "a\u202eb", ["x.parquet"], extract=int_file).added == ("x.parquet",)
    assert catalog.get_table("cafe\u0301", "a\u202eb").name == "a\u202eb"
    with pytest.raises(NotFoundError):
        catalog.get_table("caf\u00e9", "a\u202eb")
    catalog.create_namespace("caf\u00e9")
    assert {n.name for n in catalog.list_namespaces()} == {"caf\u00e9", "cafe\u0301"}
    catalog.drop_table("cafe\u0301", "a\u202eb")


def test_drop_table_keeps_history_and_frees_the_name(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a")])
    snap = cat.drop_table(NS, T)
    assert snap.changes_made.startswith("dropped_table:") and snap.removed_files == 1
    with pytest.raises(NotFoundError):
        cat.list_files(NS, T)
    assert cat.list_tables() == []
    cat.create_table(NS, T, ["v"])
    assert files_of(cat) == []
    cat.commit(NS, T, [int_file("a")])  # the path is free again in the new table
    assert files_of(cat) == ["a"]


def test_drop_table_ends_its_counters_as_removing_every_file_would(catalog: Catalog) -> None:
    # Variant paths, a plain column and an object shape: every kind of live counter a file adds.
    files = [
        dataclasses.replace(
            with_columns(int_file(f"s3://b/t/{i}.parquet", i, i + 5), cs("x", INT64, i, i + 1)),
            objects=(ShreddedObject("v", "root", ("a",)),),
        )
        for i in range(3)
    ]
    ids = {}
    for name in ("removed", "dropped"):
        catalog.create_table(NS, name, ["v"])
        catalog.commit(NS, name, files)
        ids[name] = catalog.get_table(NS, name).table_id
    catalog.remove(NS, "removed", [f.path for f in files])
    catalog.drop_table(NS, "dropped")
    with catalog.engine.connect() as c:
        assert_live_counters(c, ids["dropped"])
        left = {
            name: [
                c.execute(text(f"SELECT {cols} FROM {table} WHERE table_id = :t ORDER BY {order}"), {"t": t}).all()
                for table, cols, order in _LIVE_COUNTERS
            ]
            for name, t in ids.items()
        }
    assert left["dropped"] == left["removed"]


#: A table's counters of live files, and its global stats: (table, columns, order).
_LIVE_COUNTERS = (
    ("ducklake_table", "live_file_count, live_record_count, live_bytes", "table_id"),
    ("shredcat_variant_path", "variant_path, shredded_type, live_file_count, live_value_count, files_ever, had_values", "path_id"),
    ("shredcat_object_shape", "object_path, fields, live_file_count", "shape_id"),
    ("ducklake_table_column_stats", "extra_stats", "column_id"),
)


def test_list_tables_counts(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", records=5, size=200), int_file("b", records=7, size=150)])
    cat.remove(NS, T, ["a"])
    (info,) = cat.list_tables()
    assert (info.live_file_count, info.live_record_count, info.live_bytes) == (1, 7, 150)
    assert info.snapshot_count == 3
    assert info.current_snapshot_id == cat.list_snapshots(NS, T)[-1].snapshot_id


# --- commit -----------------------------------------------------------------------------------


def test_commit_is_one_snapshot(cat: Catalog) -> None:
    r = cat.commit(NS, T, [int_file("b"), int_file("a")])
    assert r.snapshot_id is not None and r.added == ("b", "a") and r.unchanged == ()
    assert files_of(cat) == ["a", "b"]
    snaps = cat.list_snapshots(NS, T)
    assert [s.changes_made for s in snaps] == [
        'created_table:"lake"."events"',
        f"inserted_into_table:{cat.get_table(NS, T).table_id}",
    ]
    assert snaps[-1].snapshot_id == r.snapshot_id and snaps[-1].added_files == 2
    assert {f.begin_snapshot for f in cat.list_files(NS, T)} == {r.snapshot_id}
    assert_consistent(cat, NS, T)


def test_ducklake_columns_byte_for_byte(cat: Catalog) -> None:
    f = fs(
        "a",
        ps('"l_tax"', DEC, Decimal("0.00"), Decimal("0.08"), values=15974400, nulls=0, size=806245),
        ps('"x.y"."s t".element', VARCHAR, " Tiresias", "zzle? furiously iro", values=3, nulls=1, size=7),
        ps("root", FLOAT32, -0.0, 0.3333333432674408, nan=True, size=9),
        ps('"d"', DATE, -719528, 10957, size=4),
        ps('"b"', BLOB, b"\x00\xff", b"\xff", extra='{"x":1}'),
        ps('"n"', INT32, None, None, values=0, nulls=10),
        size=2_000_000,  # holds its largest column
    )
    cat.commit(NS, T, [f])
    with cat.engine.connect() as c:
        rows = c.execute(
            text(
                "SELECT data_file_id, table_id, column_id, variant_path, shredded_type, column_size_bytes, value_count, "
                "null_count, min_value, max_value, contains_nan, extra_stats FROM ducklake_file_variant_stats "
                "ORDER BY variant_path"
            )
        ).all()
    got = {r.variant_path: tuple(r)[4:] for r in rows}
    assert got == {
        '"b"': ("blob", 100, 10, 0, "00FF", "FF", None, '{"x":1}'),
        '"d"': ("date", 4, 10, 0, "0001-01-01 (BC)", "2000-01-01", None, None),
        '"l_tax"': ("decimal(38,2)", 806245, 15974400, 0, "0.00", "0.08", None, None),
        '"n"': ("int32", 100, 0, 10, None, None, None, None),
        '"x.y"."s t".element': ("varchar", 7, 3, 1, " Tiresias", "zzle? furiously iro", None, None),
        "root": ("float32", 9, 10, 0, "-0.0", "0.33333334", True, None),
    }
    assert len({(r.data_file_id, r.table_id, r.column_id) for r in rows}) == 1


def test_file_stats_round_trip(cat: Catalog) -> None:
    f = fs(
        "a",
        ps('"a"', INT64, -5, 7),
        ps('"f"', FLOAT64, -1.5, float("inf"), nan=True),
        ps('"s"', VARCHAR, "10", "9", column="w"),
        ps('"p"', DEC, Decimal("-1.25"), Decimal("99999999999999999999999999999999.99")),
        columns=("v", "w"),
    )
    cat.create_table(NS, "two", ["v", "w"])
    cat.commit(NS, "two", [f])
    got = cat.file_stats(NS, "two", "a")
    assert got.path == f.path and got.variant_columns == ("v", "w")
    assert sorted(got.paths, key=lambda p: p.variant_path) == sorted(f.paths, key=lambda p: p.variant_path)
    with pytest.raises(NotFoundError):
        cat.file_stats(NS, "two", "missing")


def test_invalid_file_fails_the_whole_commit(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("keep")])
    before = (files_of(cat), cat.global_stats_json(NS, T), len(cat.list_snapshots(NS, T)))
    bad_batches = [
        [int_file("ok1"), fs("bad.parquet", ps('"a"', INT64, 10, 1))],  # min > max
        [int_file("ok1"), fs("bad.parquet", ps('"a"', INT32, 0, 2**40))],  # out of range
        [int_file("ok1"), fs("bad.parquet", ps('"a"', INT64, 0, 1, nan=True))],  # NaN flag on an int
        [int_file("ok1"), fs("bad.parquet", ps('"a"', INT64, 0, 1, column="w"))],  # column not in the file
        [int_file("ok1"), fs("bad.parquet", ps('"a"'), ps('"a"'))],  # path twice
        [int_file("ok1"), fs("bad.parquet", ps('"a"', FLOAT64, float("nan"), 1.0))],  # NaN bound
        [int_file("ok1"), fs("bad.parquet", ps('"a"', INT64, "1", "2"))],  # wrong Python type
    ]
    for batch in bad_batches:
        with pytest.raises(InvalidStatsError) as e:
            cat.commit(NS, T, batch)
        assert "bad.parquet" in e.value.message and e.value.details["path"] == "bad.parquet"
    with pytest.raises(InvalidStatsError, match=r"bad\.parquet.*'w'.* not in table"):
        cat.commit(NS, T, [int_file("ok1"), fs("bad.parquet", ps('"a"', column="w"), columns=("v", "w"))])
    with pytest.raises(LimitExceededError):
        cat.commit(NS, T, [fs("x" * 3000, ps())])
    assert (files_of(cat), cat.global_stats_json(NS, T), len(cat.list_snapshots(NS, T))) == before
    assert_consistent(cat, NS, T)


def test_register_extract_failure_names_the_file_and_changes_nothing(catalog: Catalog) -> None:
    def extract(src: str) -> FileStats:
        if "broken" in src:
            raise InvalidStatsError("not a Parquet file (bad magic)")
        return int_file(src)

    with pytest.raises(InvalidStatsError) as e:
        catalog.register(NS, T, ["a.parquet", "broken.parquet", "c.parquet"], extract=extract)
    assert e.value.message == "broken.parquet: not a Parquet file (bad magic)"
    assert e.value.details["path"] == "broken.parquet"
    assert catalog.list_tables() == []  # not even the table was created
    r = catalog.register(NS, T, ["a.parquet", "c.parquet"], extract=extract)
    assert r.added == ("a.parquet", "c.parquet")
    assert catalog.get_table(NS, T).variant_columns == ("v",)
    assert catalog.register(NS, T, ["a.parquet"], extract=extract).unchanged == ("a.parquet",)


def test_a_registration_refused_by_its_commit_creates_no_table(catalog: Catalog) -> None:
    """Errors found once the files are read (inside the commit) leave no table and no namespace:
    the table is created in the commit's own transaction."""
    failing = [
        # Partition columns that differ between two files of one commit.
        (["s3://b/t/k=1/f.parquet", "s3://b/t/g.parquet"], {}, "conflicting partition column names"),
        # A path to remove that is not live.
        (["s3://b/t/h.parquet"], {"remove": ["s3://b/t/nothing.parquet"]}, "not a live file"),
    ]
    for sources, kw, needle in failing:
        with pytest.raises(ShredcatError, match=needle):
            if kw:
                catalog.commit("fresh", T, [int_file(s) for s in sources], create_with=["v"], **kw)
            else:
                catalog.register("fresh", T, sources, extract=int_file)
        assert catalog.list_tables() == [] and catalog.list_namespaces() == []
    r = catalog.register("fresh", T, ["s3://b/t/k=1/f.parquet"], extract=int_file)
    assert r.added == ("s3://b/t/k=1/f.parquet",)
    assert [t.name for t in catalog.list_tables()] == [T]
    # Into an existing table, create_with changes nothing of it.
    again = catalog.commit("fresh", T, [int_file("s3://b/t/k=2/f.parquet")], create_with=["other"])
    assert again.added == ("s3://b/t/k=2/f.parquet",) and catalog.get_table("fresh", T).variant_columns == ("v",)


def test_same_content_is_a_noop_and_different_content_conflicts(cat: Catalog) -> None:
    first = cat.commit(NS, T, [int_file("a"), int_file("b")])
    again = cat.commit(NS, T, [int_file("a"), int_file("b")])
    assert again.snapshot_id is None and again.added == () and again.unchanged == ("a", "b")
    mixed = cat.commit(NS, T, [int_file("a"), int_file("c")])
    assert mixed.added == ("c",) and mixed.unchanged == ("a",)
    n_snaps = len(cat.list_snapshots(NS, T))
    for changed in (
        int_file("a", size=2000),
        fs("a", ps(), content_id="other-etag"),
        fs("a", ps(), records=11),
        fs("a", ps(), content_id=None),
    ):
        with pytest.raises(ConflictError) as e:
            cat.commit(NS, T, [int_file("new"), changed])
        assert e.value.message.startswith("a: already registered") and e.value.details["path"] == "a"
    assert len(cat.list_snapshots(NS, T)) == n_snaps and files_of(cat) == ["a", "b", "c"]
    # A repeat inside one batch: identical is folded, different conflicts.
    assert cat.commit(NS, T, [int_file("d"), int_file("d")]).added == ("d",)
    with pytest.raises(ConflictError):
        cat.commit(NS, T, [int_file("e"), int_file("e", size=500)])
    assert first.snapshot_id is not None
    assert_consistent(cat, NS, T)


def test_removed_path_can_be_registered_again_with_new_content(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", 0, 5)])
    cat.remove(NS, T, ["a"])
    r = cat.commit(NS, T, [int_file("a", 100, 200, size=177)])
    assert r.added == ("a",)
    assert [(f.path, f.file_size_bytes) for f in cat.list_files(NS, T)] == [("a", 177)]
    assert by_field(cat)['"a"']["min"] == "100"
    assert_consistent(cat, NS, T)


def test_idempotency_key(cat: Catalog) -> None:
    r1 = cat.commit(NS, T, [int_file("a"), int_file("b")], idempotency_key="job-1")
    cat.remove(NS, T, ["a"])  # the replay must not re-add it
    r2 = cat.commit(NS, T, [int_file("b"), int_file("a")], idempotency_key="job-1")  # order is irrelevant
    # The same result, listed in the replaying request's order (the stored form keeps no order).
    assert r2.replayed and (r2.snapshot_id, sorted(r2.added), r2.unchanged) == (
        r1.snapshot_id,
        sorted(r1.added),
        r1.unchanged,
    )
    assert r2.added == ("b", "a")
    assert files_of(cat) == ["b"]
    with pytest.raises(ConflictError, match="job-1"):
        cat.commit(NS, T, [int_file("c")], idempotency_key="job-1")
    with pytest.raises(ConflictError):
        cat.commit(NS, T, [int_file("a", 0, 11)], idempotency_key="job-1")  # same path, other stats
    noop = cat.commit(NS, T, [int_file("b")], idempotency_key="job-2")
    assert noop.snapshot_id is None and cat.commit(NS, T, [int_file("b")], idempotency_key="job-2").replayed
    # Keys are per table.
    cat.create_table(NS, "other", ["v"])
    assert not cat.commit(NS, "other", [int_file("c")], idempotency_key="job-1").replayed


def test_errors_for_missing_things(cat: Catalog) -> None:
    with pytest.raises(NotFoundError):
        cat.commit(NS, "missing", [int_file("a")])
    with pytest.raises(NotFoundError):
        cat.remove(NS, T, ["nope"])
    assert cat.remove(NS, T, ["nope"], missing_ok=True).snapshot_id is None
    with pytest.raises(NotFoundError):
        cat.list_files(NS, T, snapshot=10**9)
    with pytest.raises(BadInputError):
        cat.list_files(NS, T, limit=0)


# --- removal, snapshots, listing --------------------------------------------------------------


def test_remove_and_time_travel(cat: Catalog) -> None:
    s1 = cat.commit(NS, T, [int_file("a"), int_file("b")]).snapshot_id
    s2 = cat.commit(NS, T, [int_file("c")]).snapshot_id
    r = cat.remove(NS, T, ["a", "c", "zzz"], missing_ok=True)
    assert r.removed == ("a", "c") and r.missing == ("zzz",)
    s3 = r.snapshot_id
    assert files_of(cat) == ["b"]
    assert files_of(cat, s1) == ["a", "b"]
    assert files_of(cat, s2) == ["a", "b", "c"]
    assert files_of(cat, s3) == ["b"]
    ended = {f.path: f.end_snapshot for f in cat.list_files(NS, T, snapshot=s2)}
    assert ended == {"a": s3, "b": None, "c": s3}
    snaps = cat.list_snapshots(NS, T)
    assert [s.snapshot_id for s in snaps][1:] == [s1, s2, s3]
    assert (snaps[-1].added_files, snaps[-1].removed_files) == (0, 2)
    assert snaps[-1].changes_made.startswith("deleted_from_table:")
    assert [s.snapshot_id for s in cat.list_snapshots(NS, T, after=s1, limit=1)] == [s2]
    # Stats of a removed file stay readable at its snapshots.
    assert cat.file_stats(NS, T, "a", snapshot=s2).path == "a"
    with pytest.raises(NotFoundError):
        cat.file_stats(NS, T, "a")
    # Global stats at a past snapshot are those of its live files.
    past = cat.global_stats(NS, T, snapshot=s2)
    assert past.file_count == 3 and past.snapshot_id == s2
    assert_consistent(cat, NS, T)


# --- replacement: removals and additions in one snapshot ---------------------------------------


def test_a_replacement_is_one_snapshot_readers_see_whole(cat: Catalog) -> None:
    s1 = cat.commit(NS, T, [int_file("a", 0, 5), int_file("b", 10, 20), int_file("keep", 50, 60)]).snapshot_id
    r = cat.commit(NS, T, [int_file("ab", 0, 20)], remove=["a", "b"])
    assert (r.added, r.removed, r.missing, r.unchanged) == (("ab",), ("a", "b"), (), ())
    assert files_of(cat) == ["ab", "keep"]
    assert files_of(cat, s1) == ["a", "b", "keep"]
    snaps = cat.list_snapshots(NS, T)
    # Only one snapshot after s1: no state of the table lacks both the old and the new files.
    assert [s.snapshot_id for s in snaps][-2:] == [s1, r.snapshot_id]
    assert (snaps[-1].added_files, snaps[-1].removed_files) == (1, 2)
    assert snaps[-1].changes_made == f"inserted_into_table:{cat.get_table(NS, T).table_id},deleted_from_table:{cat.get_table(NS, T).table_id}"
    assert cat.get_table(NS, T).live_file_count == 2
    assert by_field(cat)['"a"']["min"] == "0" and by_field(cat)['"a"']["max"] == "60"
    assert_consistent(cat, NS, T)


def test_a_path_to_remove_that_is_not_live_fails_the_whole_commit(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a")])
    before = cat.list_snapshots(NS, T)
    with pytest.raises(NotFoundError, match=r"nope: not a live file .* cannot be removed") as e:
        cat.commit(NS, T, [int_file("new")], remove=["a", "nope"])
    assert e.value.details["paths"] == ["nope"]
    assert cat.list_snapshots(NS, T) == before and files_of(cat) == ["a"]
    r = cat.commit(NS, T, [int_file("new")], remove=["a", "nope"], remove_missing_ok=True)
    assert (r.added, r.removed, r.missing) == (("new",), ("a",), ("nope",))
    assert files_of(cat) == ["new"]
    assert_consistent(cat, NS, T)


def test_a_path_removed_and_given_again_is_replaced_with_the_new_content(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", 0, 5), int_file("b", 0, 5)])
    r = cat.commit(NS, T, [int_file("a", 100, 200, size=777)], remove=["a"])
    assert (r.added, r.removed) == (("a",), ("a",))
    assert {f.path: f.file_size_bytes for f in cat.list_files(NS, T)} == {"a": 777, "b": 1000}
    assert by_field(cat)['"a"']["max"] == "200"
    # Without the removal the same commit is a conflict, as before.
    with pytest.raises(ConflictError):
        cat.commit(NS, T, [int_file("b", 0, 5, size=5000)])
    assert_consistent(cat, NS, T)


def test_a_commit_may_only_remove(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a"), int_file("b")])
    r = cat.commit(NS, T, [], remove=["a"])
    assert (r.added, r.removed) == ((), ("a",))
    assert cat.list_snapshots(NS, T)[-1].changes_made.startswith("deleted_from_table:")
    assert cat.commit(NS, T, [], remove=["zzz"], remove_missing_ok=True).snapshot_id is None
    assert files_of(cat) == ["b"]
    cat.commit(NS, T, [], remove=["b"])
    assert files_of(cat) == [] and gjson(cat) is None
    assert_consistent(cat, NS, T)


def test_removals_are_part_of_a_commits_idempotency(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a"), int_file("b")])
    r1 = cat.commit(NS, T, [int_file("c")], remove=["a"], idempotency_key="swap")
    r2 = cat.commit(NS, T, [int_file("c")], remove=["a"], idempotency_key="swap")
    assert r2.replayed and (r2.snapshot_id, r2.removed, r2.added) == (r1.snapshot_id, ("a",), ("c",))
    with pytest.raises(ConflictError, match="swap"):
        cat.commit(NS, T, [int_file("c")], remove=["b"], idempotency_key="swap")
    with pytest.raises(ConflictError, match="swap"):
        cat.commit(NS, T, [int_file("c")], idempotency_key="swap")
    with pytest.raises(ConflictError, match="swap"):
        cat.commit(NS, T, [int_file("c")], remove=["a"], remove_missing_ok=True, idempotency_key="swap")
    assert files_of(cat) == ["b", "c"]


def test_paths_to_remove_are_checked_and_limited(catalog: Catalog) -> None:
    import dataclasses

    small = Catalog(catalog.engine, limits=dataclasses.replace(catalog.limits, max_files_per_commit=2))
    small.create_table(NS, T, ["v"])
    small.commit(NS, T, [int_file("a")])
    with pytest.raises(LimitExceededError, match="3 paths to remove in one request: at most 2"):
        small.commit(NS, T, [int_file("n")], remove=["a", "x", "y"])
    with pytest.raises(InvalidStatsError, match="invalid path to remove"):
        small.commit(NS, T, [int_file("n")], remove=[""])
    # Duplicates count once.
    assert small.commit(NS, T, [int_file("n")], remove=["a", "a", "a"]).removed == ("a",)
    assert files_of(small) == ["n"]


def test_list_files_keyset_pagination_and_prefix(cat: Catalog) -> None:
    paths = [f"s3://b/t/date=2026-01-0{d}/f{i}.parquet" for d in (1, 2, 3) for i in range(4)]
    # Every file under the one partition column (Spark's layout; its values typed date or string).
    paths += ["s3://b/t/date=2026-01-0\U0010ffff/x", "s3://b/t/date=2026-01-1/x", "s3://b/u/date=u/é", "s3://b/u/date=u/z"]
    cat.commit(NS, T, [int_file(p) for p in reversed(paths)])
    assert files_of(cat) == sorted(paths, key=lambda p: p.encode())
    pages, after = [], None
    while True:
        page = cat.list_files(NS, T, after=after, limit=5)
        if not page:
            break
        pages.append([f.path for f in page])
        after = page[-1].path
    assert [len(p) for p in pages] == [5, 5, 5, 1]
    assert [p for page in pages for p in page] == sorted(paths, key=lambda p: p.encode())
    pre = [f.path for f in cat.list_files(NS, T, prefix="s3://b/t/date=2026-01-02/")]
    assert pre == [f"s3://b/t/date=2026-01-02/f{i}.parquet" for i in range(4)]
    pre = [f.path for f in cat.list_files(NS, T, prefix="s3://b/t/date=2026-01-0")]
    assert len(pre) == 13 and pre[-1].endswith("\U0010ffff/x")
    assert [f.path for f in cat.list_files(NS, T, prefix="s3://b/u/")] == ["s3://b/u/date=u/z", "s3://b/u/date=u/é"]
    assert cat.list_files(NS, T, prefix="s3://b/u/date=u/é", after="s3://b/u/date=u/é") == []


# --- global stats -----------------------------------------------------------------------------


def test_global_stats_layout_is_duckdb_json(cat: Catalog) -> None:
    cat.commit(
        NS, T, [fs("a", ps('"a"', INT64, 0, 9, values=10), ps('"f"', FLOAT32, 0.0, 3.0, values=10, size=65))]
    )
    assert cat.global_stats_json(NS, T)["v"] == (
        '[{"field_name":"\\"a\\"","shredded_type":"int64","null_count":0,"min":"0","max":"9","num_values":10,'
        '"column_size_bytes":100,"any_valid":true},'
        '{"field_name":"\\"f\\"","shredded_type":"float32","null_count":0,"min":"0.0","max":"3.0","num_values":10,'
        '"contains_nan":false,"column_size_bytes":65,"any_valid":true}]'
    )
    with cat.engine.connect() as c:
        row = c.execute(
            text("SELECT contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats")
        ).one()
    assert tuple(row) == (None, None, None, None)


def test_typed_min_max_not_string_order(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", 9, 9), int_file("b", 10, 10)])
    g = by_field(cat)['"a"']
    assert (g["min"], g["max"]) == ("9", "10")  # as strings "10" < "9"
    cat.commit(NS, T, [fs("d1", ps('"a"'), ps('"d"', DEC, Decimal("-1.50"), Decimal("10.00")))])
    cat.commit(NS, T, [fs("d2", ps('"a"'), ps('"d"', DEC, Decimal("-10.00"), Decimal("9.99")))])
    cat.remove(NS, T, ["a", "b"])
    g = by_field(cat)['"d"']
    assert (g["min"], g["max"]) == ("-10.00", "10.00")
    assert_consistent(cat, NS, T)


def test_path_kept_only_if_shredded_in_every_file_with_one_type(cat: Catalog) -> None:
    cat.commit(NS, T, [fs("a", ps('"x"'), ps('"y"'), ps('"z"'))])
    cat.commit(NS, T, [fs("b", ps('"x"'), ps('"y"', VARCHAR, "a", "b"))])  # y: other type, z: missing
    assert set(by_field(cat)) == {'"x"'}
    assert_consistent(cat, NS, T)
    cat.remove(NS, T, ["b"])  # y and z come back (DuckLake never brings them back)
    assert set(by_field(cat)) == {'"x"', '"y"', '"z"'}
    assert by_field(cat)['"y"']["shredded_type"] == "int64"
    assert_consistent(cat, NS, T)
    cat.commit(NS, T, [fs("c", columns=())])  # a file without the column drops everything
    assert gjson(cat) is None
    assert_consistent(cat, NS, T)
    cat.remove(NS, T, ["a", "c"])
    assert gjson(cat) is None and cat.global_stats(NS, T).file_count == 0
    cat.commit(NS, T, [fs("d", ps('"w"'))])  # an empty table starts over
    assert set(by_field(cat)) == {'"w"'}
    assert_consistent(cat, NS, T)


def test_all_null_files_do_not_move_bounds_in_any_order(catalog: Catalog) -> None:
    null_file = fs("nulls", ps('"a"', INT64, None, None, values=0, nulls=10))
    # DuckLake loses min/max for good when the all-null file comes first; shredcat never does.
    for order, name in (([null_file, int_file("v", 3, 4)], "t1"), ([int_file("v", 3, 4), null_file], "t2")):
        catalog.create_table(NS, name, ["v"])
        for f in order:
            catalog.commit(NS, name, [f])
        g = json.loads(catalog.global_stats_json(NS, name)["v"])[0]
        assert (g["min"], g["max"], g["null_count"], g["num_values"]) == ("3", "4", 10, 20)
    catalog.create_table(NS, "t3", ["v"])
    catalog.commit(NS, "t3", [null_file])
    g = json.loads(catalog.global_stats_json(NS, "t3")["v"])[0]
    assert "min" not in g and "max" not in g and g["num_values"] == 10
    assert catalog.global_stats(NS, "t3").columns["v"][0].min_unknown is False


def test_missing_bound_with_values_makes_the_bound_unknown(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", 0, 5), fs("b", ps('"a"', INT64, None, 7))])
    g = cat.global_stats(NS, T).columns["v"][0]
    assert g.min_value is None and g.min_unknown and g.max_value == 7
    cat.commit(NS, T, [int_file("c", -100, 100)])  # unknown beats known
    assert cat.global_stats(NS, T).columns["v"][0].min_unknown
    cat.remove(NS, T, ["a"])  # the unknown file stays: still unknown
    assert cat.global_stats(NS, T).columns["v"][0].min_unknown
    assert_consistent(cat, NS, T)
    cat.remove(NS, T, ["b"])
    g = cat.global_stats(NS, T).columns["v"][0]
    assert (g.min_value, g.max_value) == (-100, 100)
    assert_consistent(cat, NS, T)


def test_counts_sum_and_nan_or(cat: Catalog) -> None:
    cat.commit(NS, T, [fs("a", ps('"f"', FLOAT64, 1.0, 2.0, values=3, nulls=1, size=10))])
    cat.commit(NS, T, [fs("b", ps('"f"', FLOAT64, -0.0, 0.0, values=4, nulls=2, size=20, nan=True))])
    g = by_field(cat)['"f"']
    assert (g["num_values"], g["null_count"], g["column_size_bytes"], g["contains_nan"]) == (10, 3, 30, True)
    assert (g["min"], g["max"]) == ("-0.0", "2.0")
    cat.remove(NS, T, ["a"])
    g = by_field(cat)['"f"']
    assert (g["min"], g["max"], g["contains_nan"]) == ("-0.0", "0.0", True)
    cat.commit(NS, T, [fs("c", ps('"f"', FLOAT64, 0.0, -0.0 + 0.0, nan=False))])
    assert_consistent(cat, NS, T)
    cat.remove(NS, T, ["b"])
    g = by_field(cat)['"f"']
    assert (g["min"], g["max"], g["contains_nan"]) == ("0.0", "0.0", False)
    assert_consistent(cat, NS, T)


def test_signed_zero_ties_after_removal(cat: Catalog) -> None:
    cat.commit(
        NS,
        T,
        [
            fs(f"z{i}", ps('"f"', FLOAT64, lo, hi))
            for i, (lo, hi) in enumerate([(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0)])
        ],
    )
    assert (by_field(cat)['"f"']["min"], by_field(cat)['"f"']["max"]) == ("-0.0", "0.0")
    for gone in ("z1", "z0"):
        cat.remove(NS, T, [gone])
        assert_consistent(cat, NS, T)
    assert (by_field(cat)['"f"']["min"], by_field(cat)['"f"']["max"]) == ("0.0", "0.0")


def test_unknown_nan_and_keyless_decimals_after_removal(cat: Catalog) -> None:
    big = Decimal("99999999999999999999999999999999.99")  # beyond int64: no typed key
    cat.commit(
        NS,
        T,
        [
            fs("a", ps('"f"', FLOAT64, 1.0, 2.0, nan=False), ps('"d"', DEC, Decimal("1.00"), big)),
            fs(
                "b",
                ps('"f"', FLOAT64, 0.5, 3.0, nan=None),
                ps('"d"', DEC, Decimal("-" + str(big)), Decimal("2.00")),
            ),
            fs("c", ps('"f"', FLOAT64, 0.7, 1.0), ps('"d"', DEC, Decimal("-3.00"), Decimal("4.00"))),
        ],
    )
    g = by_field(cat)
    assert "contains_nan" not in g['"f"']  # unknown: omitted
    assert (g['"d"']["min"], g['"d"']["max"]) == ("-" + str(big), str(big))
    cat.remove(NS, T, ["c"])
    assert_consistent(cat, NS, T)
    cat.remove(NS, T, ["b"])
    g = by_field(cat)
    assert g['"f"']["contains_nan"] is False and (g['"d"']["min"], g['"d"']["max"]) == ("1.00", str(big))
    assert_consistent(cat, NS, T)


def test_multiple_columns_and_path_coverage(catalog: Catalog) -> None:
    catalog.create_table(NS, T, ["v", "w"])
    catalog.commit(
        NS,
        T,
        [
            fs("a", ps('"x"'), ps('"y"'), ps('"k"', column="w"), columns=("v", "w")),
            fs("b", ps('"x"'), ps('"y"', VARCHAR, "a", "b"), columns=("v",)),
            fs("c", ps('"x"'), ps('"y"', VARCHAR, "c", "d"), ps('"k"', column="w"), columns=("v", "w")),
        ],
    )
    assert set(by_field_of(catalog, "v")) == {'"x"'}
    assert catalog.global_stats_json(NS, T)["w"] is None
    cov = {(c.column, c.variant_path): c for c in admin_reads(catalog).path_coverage(NS, T)}
    assert list(cov) == [("v", '"x"'), ("v", '"y"'), ("w", '"k"')]
    assert cov[("v", '"x"')].in_global_stats and cov[("v", '"x"')].types == (("int64", 3),)
    assert cov[("v", '"y"')].types == (("varchar", 2), ("int64", 1)) and cov[("v", '"y"')].shredded_files == 3
    assert not cov[("v", '"y"')].in_global_stats
    assert cov[("w", '"k"')].shredded_files == 2 and cov[("w", '"k"')].live_files == 3
    catalog.remove(NS, T, ["b"])
    assert set(by_field_of(catalog, "w")) == {'"k"'}
    assert_consistent(catalog, NS, T)


def by_field_of(cat: Catalog, column: str) -> dict[str, dict]:
    s = cat.global_stats_json(NS, T)[column]
    return {o["field_name"]: o for o in (json.loads(s) if s else [])}


def test_width_helpers_are_monotone_over_estimates(cat: Catalog) -> None:
    cat.commit(NS, T, [int_file("a", 0, 10), fs("f", ps('"a"'), ps('"r"', FLOAT64, 0.1, 0.3))])
    cat.commit(NS, T, [int_file("b", 5, 1000)])
    cat.remove(NS, T, ["b"])
    with cat.engine.connect() as c:
        rows = dict(c.execute(text("SELECT variant_path, max_width_num FROM shredcat_variant_path")).all())
        real = c.execute(
            text("SELECT max_width_real FROM shredcat_variant_path WHERE variant_path = '\"r\"'")
        ).scalar()
    assert rows['"a"'] == 995  # never shrinks
    assert real >= 0.3 - 0.1
    cat.commit(NS, T, [fs("huge", ps('"a"', INT64, -(2**63), 2**63 - 1))])
    with cat.engine.connect() as c:
        assert (
            c.execute(
                text("SELECT max_width_num FROM shredcat_variant_path WHERE variant_path = '\"a\"'")
            ).scalar()
            is None
        )
    assert_consistent(cat, NS, T)


def test_drop_namespace_only_when_empty(catalog: Catalog) -> None:
    catalog.create_table("n1", "t", ["v"])
    with pytest.raises(ConflictError):
        catalog.drop_namespace("n1")
    catalog.drop_table("n1", "t")
    snap = catalog.drop_namespace("n1")
    assert snap.changes_made.startswith("dropped_schema:")
    assert catalog.list_namespaces() == []
    with pytest.raises(NotFoundError):
        catalog.drop_namespace("n1")
    assert catalog.create_table("n1", "t", ["v"]).namespace == "n1"  # the name is free again


def test_a_partition_value_holding_nul_is_refused_by_name(catalog: Catalog) -> None:
    """Spark writes a string partition value holding NUL as `k=a%00b`; PostgreSQL cannot store its
    text, so the file is refused on both backends, with the reason and nothing committed."""
    catalog.create_table("p", "t", ["v"])
    with pytest.raises(InvalidStatsError, match=r"partition column 'k': the value 'a\\x00b' .*NUL character") as e:
        catalog.commit("p", "t", [int_file("s3://b/t/k=a%00b/f.parquet")])
    assert e.value.details["path"] == "s3://b/t/k=a%00b/f.parquet"
    assert catalog.get_table("p", "t").live_file_count == 0


def test_suggested_paths_are_the_most_widely_shredded_first(catalog: Catalog) -> None:
    """What a plan warning suggests among is bounded: the paths in the most live files first."""
    from service.catalog import repository as repo

    catalog.create_table("s", "t", ["v"])
    files = [fs(f"s3://b/t/f{i}.parquet", *(ps(f'"p{j}"', INT64, 1, 2) for j in range(i + 1))) for i in range(4)]
    catalog.commit("s", "t", files)  # "p0" in 4 files, "p1" in 3, "p2" in 2, "p3" in 1
    t = catalog.get_table("s", "t")

    def top(limit: int | None) -> list[str]:
        def op(conn):  # type: ignore[no-untyped-def]
            row = repo.require_table(conn, "s", "t")
            return repo.shredded_paths(conn, t.table_id, row.columns["v"], live=True, limit=limit)

        return catalog._read(op)

    assert top(2) == ['"p0"', '"p1"']
    assert top(None) == ['"p0"', '"p1"', '"p2"', '"p3"']
