"""The response bodies both sides share (service/wire.py): what the server builds from the
catalog's results comes back, through the JSON it sends, as the same values in the client's
types (the wire's own models); and the client reads them without importing the server's stack."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from service.api import schemas
from service.api.tables import table_response
from service.catalog.results import CommitResult as CatalogCommit
from service.catalog.results import TableColumn as CatalogColumn
from service.catalog.results import TableInfo
from service.client import CommitResult, PlanResult, PlanWarning, Table
from service.client.models import FileExplanation, PlanFile, TableColumn
from service.pruning.diagnostics import PlanWarning as CatalogWarning
from service.wire import FileExplanation as WireExplanation
from service.wire import PlanFile as WirePlanFile
from service.wire import PlanMetrics, PlanResponse
from service.wire import PlanWarning as WireWarning
from tests.support.imports import modules_loaded_by


def _sent(model: object) -> dict[str, object]:
    """The JSON body FastAPI sends for a response model (by alias), parsed again."""
    assert isinstance(model, schemas.ApiModel)
    body: dict[str, object] = json.loads(model.model_dump_json(by_alias=True))
    return body


def test_a_table_reaches_the_client_as_the_catalog_described_it() -> None:
    same: dict[str, Any] = {
        "table_id": 3,
        "live_file_count": 8,
        "live_record_count": 8000,
        "live_bytes": 123456,
        "current_snapshot_id": 5,
        "snapshot_count": 3,
        "last_commit_time": datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        "begin_snapshot": 2,
        "location": "/lake/events",
    }
    columns = (("v", "variant", "variant", False), ("day", "date", "partition", True))
    info = TableInfo(
        namespace="lake", name="events", variant_columns=("v",), columns=tuple(CatalogColumn(*c) for c in columns), **same
    )
    body = _sent(table_response(info))
    assert {"table-id", "variant-columns", "live-record-count", "last-commit-time", "partition-columns"} <= set(body)
    t = Table.model_validate(body)
    assert t == Table(
        identifier={"namespace": ["lake"], "name": "events"},
        variant_columns=("v",),
        columns=tuple(TableColumn(name=n, type=ty, kind=k, declared=d) for n, ty, k, d in columns),
        partition_columns=("day",),
        **same,
    )
    assert (t.namespace, t.name, t.variant_columns, t.partition_columns) == ("lake", "events", ("v",), ("day",))


def test_an_older_servers_table_lacks_the_later_fields() -> None:
    # A server before plain-column statistics sent no columns, partition columns or location.
    body = _sent(table_response(TableInfo(1, "lake", "t", ("v",), 0, 0, 0, 1, 1, None, 1)))
    for key in ("columns", "partition-columns", "location"):
        body.pop(key)
    t = Table.model_validate(body)
    assert (t.columns, t.partition_columns, t.location, t.last_commit_time) == ((), (), None, None)


def test_a_commit_result_round_trips() -> None:
    result = CatalogCommit(7, ("a", "b"), ("c",), replayed=True, restated=("d",), removed=("e",), missing=("f",))
    body = _sent(schemas.CommitResponse.of(result))
    assert body == {
        "snapshot-id": 7, "added": ["a", "b"], "unchanged": ["c"], "restated": ["d"], "replayed": True,
        "removed": ["e"], "missing": ["f"],
    }  # fmt: skip
    got = CommitResult.sent_with(body, "key-1")
    assert got == CommitResult(
        snapshot_id=7, added=("a", "b"), unchanged=("c",), replayed=True, idempotency_key="key-1", restated=("d",),
        removed=("e",), missing=("f",),
    )  # fmt: skip
    assert "idempotency-key" not in got.model_dump(by_alias=True)  # the client's own, not the answer's
    del body["removed"], body["missing"]  # a server before atomic replacement
    assert CommitResult.sent_with(body, "key-2").removed == ()


def test_a_plan_page_round_trips_with_its_warnings_and_explanations() -> None:
    warning = CatalogWarning("path_not_shredded", "no file shreds $.x", "v", "$.x", ("$.y",))
    response = PlanResponse(
        snapshot_id=4,
        files=[WirePlanFile(path="/f1", file_size_bytes=10, record_count=2)],
        next_page_token="tok",
        metrics=PlanMetrics(files_considered=3, files_pruned=2, files_kept=1, rows_skipped=None, bytes_skipped=5),
        explain=[WireExplanation(path="/f1", kept=True, reason="bounds admit it")],
        warnings=[WireWarning.of(warning)],
    )
    body = _sent(response)
    assert body["warnings"] == [
        {"type": "path_not_shredded", "column": "v", "path": "$.x", "message": "no file shreds $.x", "suggestions": ["$.y"]}
    ]
    got = PlanResult.model_validate(body)
    assert got == PlanResult(
        snapshot_id=4,
        files=(PlanFile(path="/f1", file_size_bytes=10, record_count=2),),
        next_page_token="tok",
        metrics=PlanMetrics(files_considered=3, files_pruned=2, files_kept=1, rows_skipped=None, bytes_skipped=5),
        explain=(FileExplanation(path="/f1", kept=True, reason="bounds admit it"),),
        warnings=(
            PlanWarning(type="path_not_shredded", message="no file shreds $.x", column="v", path="$.x", suggestions=("$.y",)),
        ),
    )
    # The counts and the paths, as the client's users read them.
    assert (got.files_considered, got.files_pruned, got.files_kept, got.rows_skipped, got.bytes_skipped) == (3, 2, 1, None, 5)
    assert got.paths == ["/f1"]


def test_the_server_describes_the_shared_models() -> None:
    # One declaration: the routes' response models are the client's.
    import service.wire as wire

    for name in ("TableResponse", "TableColumn", "CommitResponse", "PlanResponse", "PlanWarning", "PlanFile",
                 "HealthResponse", "NamespaceResponse", "ListFilesResponse", "ListSnapshotsResponse", "DropResponse"):
        assert getattr(schemas, name) is getattr(wire, name)
    # ... and what the client returns.
    from service import client

    returned = {"Table": "TableResponse", "TableColumn": "TableColumn", "PlanResult": "PlanResponse",
                "PlanWarning": "PlanWarning", "PlanFile": "PlanFile", "FileExplanation": "FileExplanation",
                "FilesPage": "ListFilesResponse", "DataFile": "DataFile", "SnapshotsPage": "ListSnapshotsResponse",
                "Snapshot": "Snapshot", "RemoveResult": "RemoveFilesResponse", "Health": "HealthResponse",
                "Namespace": "NamespaceResponse"}  # fmt: skip
    for name, wire_name in returned.items():
        assert getattr(client, name) is getattr(wire, wire_name), name
    assert issubclass(client.CommitResult, wire.CommitResponse)


def test_the_client_imports_neither_the_server_nor_the_catalog() -> None:
    bad = ("fastapi", "starlette", "sqlalchemy", "service.catalog", "service.api", "service.dashboard")
    loaded = modules_loaded_by("import service.client, service.client.models")
    assert "service.client.models" in loaded
    assert [m for m in loaded if m.startswith(bad)] == []


def test_listings_and_removals_round_trip() -> None:
    from service.client.models import DataFile, FilesPage, RemoveResult, Snapshot, SnapshotsPage

    files = schemas.ListFilesResponse(
        snapshot_id=4,
        files=[schemas.DataFile(path="/f", file_size_bytes=9, record_count=3, footer_size=2, content_id=None,
                                begin_snapshot=1, end_snapshot=None)],
        next_page_token="t",
    )  # fmt: skip
    page = FilesPage.model_validate(_sent(files))
    assert page == files and page.files == (
        DataFile(path="/f", file_size_bytes=9, record_count=3, footer_size=2, content_id=None, begin_snapshot=1,
                 end_snapshot=None),
    )  # fmt: skip
    when = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    snaps = schemas.ListSnapshotsResponse(
        snapshots=[schemas.Snapshot(snapshot_id=2, snapshot_time=when, changes_made="x", added_files=1, removed_files=0)]
    )
    assert SnapshotsPage.model_validate(_sent(snaps)) == SnapshotsPage(
        snapshots=(Snapshot(snapshot_id=2, snapshot_time=when, changes_made="x", added_files=1, removed_files=0),),
        next_page_token=None,
    )
    removed = schemas.RemoveFilesResponse(snapshot_id=None, removed=[], missing=["/g"])
    assert RemoveResult.model_validate(_sent(removed)) == RemoveResult(snapshot_id=None, removed=(), missing=("/g",))


def test_the_pages_of_a_plan_merge_into_one_result() -> None:
    """``PlanResult.merged`` (what ``plan_all`` returns): every page's files and explanations, the
    first page's snapshot and warnings, and the kept and pruned counts from the files when the
    server did not count them."""

    def page(paths: list[str], metrics: PlanMetrics, token: str | None) -> PlanResult:
        return PlanResult(
            snapshot_id=4,
            files=[PlanFile(path=p, file_size_bytes=1, record_count=1) for p in paths],
            next_page_token=token,
            metrics=metrics,
            explain=[FileExplanation(path=p, kept=True, reason="r") for p in paths],
            warnings=[PlanWarning(type="term_not_used", message="m")] if token else [],
        )

    uncounted = PlanMetrics(files_considered=5, files_pruned=None, files_kept=None, rows_skipped=None, bytes_skipped=None)
    later = PlanMetrics(files_considered=None, files_pruned=None, files_kept=None, rows_skipped=None, bytes_skipped=None)
    first, second = page(["/a", "/b"], uncounted, "t"), page(["/c"], later, None)
    merged = PlanResult.merged([first, second])
    assert merged.paths == ["/a", "/b", "/c"] and merged.next_page_token is None
    assert [x.path for x in merged.explain or ()] == ["/a", "/b", "/c"]
    assert (merged.files_considered, merged.files_kept, merged.files_pruned) == (5, 3, 2)
    assert merged.warnings == first.warnings and merged.snapshot_id == 4
    # Counted by the server: its counts stand.
    counted = first.model_copy(update={"metrics": uncounted.model_copy(update={"files_kept": 1, "files_pruned": 4})})
    assert (PlanResult.merged([counted, second]).files_kept, PlanResult.merged([counted]).files_pruned) == (1, 4)
    assert first.files_kept is None  # the pages are not changed


def test_a_reader_types_partition_columns_as_the_plan_did_and_refuses_an_older_servers_past() -> None:
    """:func:`partition_types_read` (the DuckDB and Spark helpers' REST reads): the plan's types of
    its snapshot over loadTable's (today's); from a server that sends none, today's, except for a
    past snapshot of a table with an inferred partition column, which that snapshot's files may
    type otherwise: refused, naming the columns."""
    import pytest

    from service.errors import BadInputError
    from service.spark._common import partition_types_read

    cols = [
        CatalogColumn("v", "variant", "variant"),
        CatalogColumn("p", "varchar", "partition"),
        CatalogColumn("d", "date", "partition", declared=True),
    ]
    table = Table.model_validate(_sent(table_response(TableInfo(1, "lake", "t", ("v",), 3, 3, 9, 7, 3, None, 1, tuple(cols)))))
    metrics = PlanMetrics(files_considered=3, files_pruned=0, files_kept=3, rows_skipped=0, bytes_skipped=0)
    body = _sent(PlanResponse(snapshot_id=4, files=[], metrics=metrics, partition_types={"p": "int32", "d": "date"}))
    assert body["partition-types"] == {"p": "int32", "d": "date"}
    planned = PlanResult.model_validate(body)
    assert partition_types_read(table, planned, 4) == {"p": "int32", "d": "date"}
    body.pop("partition-types")  # a server before them
    older = PlanResult.model_validate(body)
    assert older.partition_types is None
    assert partition_types_read(table, older, None) == partition_types_read(table, older, 7) == {"p": "varchar", "d": "date"}
    with pytest.raises(BadInputError, match=r"past snapshot 4: .*\(p\)") as e:
        partition_types_read(table, older, 4)
    assert e.value.details == {"field": "snapshot", "columns": ["p"]}
    declared = table.model_copy(update={"columns": tuple(c for c in table.columns if c.name != "p")})
    assert partition_types_read(declared, older, 4) == {"d": "date"}
