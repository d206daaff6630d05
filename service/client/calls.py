"""Every REST call of the client, described once and sent by either transport.

A function per route builds a :class:`Call`: method, path (names percent-encoded), query, body,
headers, whether it is safe to send again after a failure that may have reached the server, how
its answer is parsed (a :mod:`service.client.models` type) and its error map (statuses that have a
meaning of their own for this call; :data:`service.client.errors.DEFAULT_ERRORS` covers the rest).
The clients expose these functions as methods (``client.load_table(...)`` sends
``load_table(...)``), so the sync and async clients cannot drift apart.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, cast
from urllib.parse import quote

import httpx

from service.client.errors import (
    CommitConflict,
    ErrorMap,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchNamespace,
    NoSuchTable,
    TableAlreadyExists,
    error_from_response,
    unexpected_response,
)
from service.client.models import (
    ColumnStatsRowJSON,
    CommitResult,
    FilesPage,
    FileStatsJSON,
    Health,
    Namespace,
    PlanResult,
    RemoveResult,
    SnapshotsPage,
    Table,
    TableStatsJSON,
    VariantStatsRowJSON,
    dropped_snapshot_id,
    file_stats_json,
    namespace_names,
    table_names,
    table_stats_json,
)

if TYPE_CHECKING:
    from service.stats.model import ColumnStats, FileStats

T = TypeVar("T")


class Page(Protocol):
    """One page of a paged answer."""

    @property
    def next_page_token(self) -> str | None: ...


PageT = TypeVar("PageT", bound=Page)


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    path: str
    #: The value of a successful answer.
    parse: Callable[[httpx.Response], T]
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Safe to send again after a failure that may have reached the server.
    idempotent: bool = False
    errors: ErrorMap = field(default_factory=dict)
    #: A read that takes ``min-snapshot-id`` (in the ``query`` or the ``body``): the client adds
    #: the newest snapshot it committed, so the answer includes its own writes (read replicas).
    min_snapshot: Literal["query", "body"] | None = None
    #: The snapshot id an answer is at (a write's new snapshot, the snapshot a read was answered
    #: at): the client's later reads ask for at least the newest, so what it sees never goes back,
    #: whichever server or standby answers.
    at_snapshot: Callable[[T], int | None] | None = None

    def with_min_snapshot(self, snapshot_id: int | None) -> Call[T]:
        """This call carrying ``min-snapshot-id`` (unless it has one, or takes none)."""
        if snapshot_id is None or self.min_snapshot is None:
            return self
        if self.min_snapshot == "query":
            params = dict(self.params or {})
            params.setdefault("min-snapshot-id", snapshot_id)
            return replace(self, params=params)
        body = dict(self.json)
        body.setdefault("min-snapshot-id", snapshot_id)
        return replace(self, json=body)

    def result(self, r: httpx.Response) -> T:
        """The parsed answer, or the error answer raised."""
        if r.is_success:
            try:
                return self.parse(r)
            except (ValueError, TypeError, KeyError) as e:  # pydantic's ValidationError is a ValueError
                raise unexpected_response(r, f"{self.method} {self.path}") from e
        raise error_from_response(r, self.errors)


def paged(build: Callable[..., Call[PageT]], *args: Any, **kwargs: Any) -> Callable[[str | None], Call[PageT]]:
    """The call of one page of ``build(*args, **kwargs)`` by page token (None: the first page)."""
    return lambda token: build(*args, **kwargs, page_token=token)


def _json(parse: Callable[[Any], T]) -> Callable[[httpx.Response], T]:
    return lambda r: parse(r.json())


def _text(r: httpx.Response) -> str:
    return r.text


def _seg(name: str) -> str:
    """``name`` as one URL path segment. A dot segment is percent-encoded: left as ``..``, URL
    normalization (httpx's too) would remove it with the segment before, so that dropping table
    ``..`` of ``ns`` would send ``DELETE /v1/namespaces/ns``."""
    if name in (".", ".."):
        return name.replace(".", "%2E")
    return quote(name, safe="")


def _namespace_path(namespace: str) -> str:
    return f"/v1/namespaces/{_seg(namespace)}"


def _table_path(namespace: str, table: str) -> str:
    return f"{_namespace_path(namespace)}/tables/{_seg(table)}"


def _params(**kw: Any) -> dict[str, Any]:
    return {k.replace("_", "-"): v for k, v in kw.items() if v is not None}


_ON_NAMESPACE: ErrorMap = {404: NoSuchNamespace}
_ON_TABLE: ErrorMap = {404: NoSuchTable}


# --- operations -------------------------------------------------------------------------------


def health() -> Call[Health]:
    """Readiness (backend, schema revision, version); 503 raises."""
    return Call("GET", "/health", _json(Health.model_validate), idempotent=True)


def metrics() -> Call[str]:
    """The Prometheus exposition text."""
    return Call("GET", "/metrics", _text, idempotent=True)


# --- namespaces -------------------------------------------------------------------------------


def list_namespaces() -> Call[list[str]]:
    return Call("GET", "/v1/namespaces", _json(namespace_names), idempotent=True)


def create_namespace(namespace: str) -> Call[Namespace]:
    return Call(
        "POST", "/v1/namespaces", _json(Namespace.model_validate), json={"namespace": [namespace]},
        errors={409: NamespaceAlreadyExists},
    )


def load_namespace(namespace: str) -> Call[Namespace]:
    return Call("GET", _namespace_path(namespace), _json(Namespace.model_validate), idempotent=True, errors=_ON_NAMESPACE)


def drop_namespace(namespace: str) -> Call[int | None]:
    """Drop an empty namespace; returns the snapshot id of the drop."""
    return Call(
        "DELETE", _namespace_path(namespace), _json(dropped_snapshot_id),
        errors={**_ON_NAMESPACE, 409: NamespaceNotEmpty}, at_snapshot=lambda s: s,
    )


# --- tables -----------------------------------------------------------------------------------


def list_tables(namespace: str) -> Call[list[str]]:
    return Call("GET", f"{_namespace_path(namespace)}/tables", _json(table_names), idempotent=True, errors=_ON_NAMESPACE)


def create_table(
    namespace: str,
    name: str,
    *,
    variant_columns: Sequence[str] | None = None,
    infer_from: str | None = None,
    partition_columns: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
    location: str | None = None,
) -> Call[Table]:
    """Create a table with these Variant columns, or those of the file ``infer_from`` (read by the
    server, inside its warehouse roots). ``partition_columns``: Hive partition columns with
    declared types (``{"event_date": "date"}``), in path order; ``location``: the table's base
    path (only ``name=value`` directories below it are partition values). Plain columns come from
    the committed files."""
    body: dict[str, Any] = {"name": name}
    if variant_columns is not None:
        body["variant-columns"] = list(variant_columns)
    if infer_from is not None:
        body["infer-from"] = infer_from
    if partition_columns is not None:
        items = partition_columns.items() if isinstance(partition_columns, Mapping) else partition_columns
        body["partition-columns"] = [{"name": n, "type": t} for n, t in items]
    if location is not None:
        body["location"] = location
    return Call(
        "POST", f"{_namespace_path(namespace)}/tables", _json(Table.model_validate), json=body,
        errors={**_ON_NAMESPACE, 409: TableAlreadyExists}, at_snapshot=lambda t: t.current_snapshot_id,
    )


def load_table(namespace: str, table: str, *, min_snapshot_id: int | None = None) -> Call[Table]:
    return Call(
        "GET",
        _table_path(namespace, table),
        _json(Table.model_validate),
        params=_params(min_snapshot_id=min_snapshot_id),
        idempotent=True,
        errors=_ON_TABLE,
        min_snapshot="query",
        at_snapshot=lambda t: t.current_snapshot_id,
    )


def drop_table(namespace: str, table: str) -> Call[int | None]:
    """Drop the table; returns the snapshot id of the drop."""
    return Call(
        "DELETE", _table_path(namespace, table), _json(dropped_snapshot_id), errors=_ON_TABLE, at_snapshot=lambda s: s
    )


# --- commits ----------------------------------------------------------------------------------


def file_stats_payload(fs: FileStats) -> FileStatsJSON:
    """A :class:`~service.stats.model.FileStats` (from :func:`service.stats.extract.extract_file`) as
    the JSON a commit with client-side statistics carries."""
    rows = [cast(VariantStatsRowJSON, {"column": ps.column, **ps.ducklake_row()}) for ps in fs.paths]
    out: FileStatsJSON = {
        "path": fs.path,
        "file-size-bytes": fs.file_size_bytes,
        "record-count": fs.record_count,
        "footer-size": fs.footer_size,
        "content-id": fs.content_id,
        "variant-columns": list(fs.variant_columns),
        "variant-stats": rows,
    }
    if fs.columns:  # absent otherwise: a server before plain-column statistics accepts the body
        out["column-stats"] = [column_stats_json(c) for c in fs.columns]
    if fs.objects:  # likewise: a server before issue 34 refuses the field
        out["shredded-objects"] = [
            {"column": o.column, "variant-path": o.variant_path, "fields": list(o.fields)} for o in fs.objects
        ]
    return out


def column_stats_json(c: ColumnStats) -> ColumnStatsRowJSON:
    """A plain column's ``ducklake_file_column_stats`` row with its name and type."""
    return cast(ColumnStatsRowJSON, {"column": c.column, "column_type": c.column_type.name, **c.ducklake_row()})


def commit(
    namespace: str,
    table: str,
    *,
    paths: Sequence[str] | None = None,
    prefixes: Sequence[str] | None = None,
    files: Sequence[FileStats | Mapping[str, Any]] | None = None,
    idempotency_key: str | None = None,
    remove: Sequence[str] | None = None,
    remove_missing_ok: bool = False,
    create_if_missing: bool | Sequence[str] = False,
) -> Call[CommitResult]:
    """Register files as one snapshot: ``paths`` the server reads itself, the data files the server
    lists under ``prefixes`` (directories or object-store prefixes), and/or ``files`` with
    statistics extracted here (FileStats from ``extract_file``, or their JSON). ``remove``: live
    files ended in the same snapshot (a replacement readers see whole; a path that is not live is
    a NotFound unless ``remove_missing_ok``). ``create_if_missing``: a missing table (and
    namespace) is created in the commit's own transaction, so a refused commit leaves none behind;
    True: with the committed files' Variant columns, a list: with these. The idempotency key (a
    new uuid4 unless given) is reused by every retry of this call."""
    key = idempotency_key or uuid.uuid4().hex
    body: dict[str, Any] = {}
    if paths is not None:
        body["paths"] = list(paths)
    if prefixes is not None:
        body["prefixes"] = list(prefixes)
    if files is not None:
        body["files"] = [f if isinstance(f, Mapping) else file_stats_payload(f) for f in files]
    if remove:
        body["remove"] = list(remove)
        if remove_missing_ok:
            body["remove-missing-ok"] = True
    if isinstance(create_if_missing, str):
        raise TypeError("create_if_missing: True or a list of Variant column names, not a string")
    if create_if_missing is True:
        body["create-if-missing"] = {}
    elif create_if_missing is not False:
        body["create-if-missing"] = {"variant-columns": list(create_if_missing)}
    return Call(
        "POST",
        f"{_table_path(namespace, table)}/commits",
        _json(lambda d: CommitResult.sent_with(d, key)),
        json=body,
        headers={"Idempotency-Key": key},
        idempotent=True,
        errors={**_ON_TABLE, 409: CommitConflict},
        at_snapshot=lambda r: r.snapshot_id,
    )


def commit_paths(
    namespace: str, table: str, paths: Sequence[str], *, idempotency_key: str | None = None
) -> Call[CommitResult]:
    return commit(namespace, table, paths=paths, idempotency_key=idempotency_key)


def commit_prefixes(
    namespace: str, table: str, prefixes: Sequence[str], *, idempotency_key: str | None = None
) -> Call[CommitResult]:
    """Register the data files the server lists under ``prefixes`` (directories or object-store
    prefixes inside its warehouse roots) as one snapshot."""
    return commit(namespace, table, prefixes=prefixes, idempotency_key=idempotency_key)


def commit_files(
    namespace: str,
    table: str,
    files: Sequence[FileStats | Mapping[str, Any]],
    *,
    idempotency_key: str | None = None,
) -> Call[CommitResult]:
    return commit(namespace, table, files=files, idempotency_key=idempotency_key)


def remove_files(namespace: str, table: str, paths: Sequence[str], *, missing_ok: bool = False) -> Call[RemoveResult]:
    # A 404 names a missing table or a missing path: the default NotFound says no more than that.
    return Call(
        "POST",
        f"{_table_path(namespace, table)}/files/remove",
        _json(RemoveResult.model_validate),
        json={"paths": list(paths), "missing-ok": missing_ok},
        # Removing the same paths again is harmless only when missing ones are tolerated.
        idempotent=missing_ok,
        at_snapshot=lambda r: r.snapshot_id,
    )


# --- reading ----------------------------------------------------------------------------------


def list_files(
    namespace: str,
    table: str,
    *,
    prefix: str | None = None,
    snapshot_id: int | None = None,
    page_size: int | None = None,
    page_token: str | None = None,
    min_snapshot_id: int | None = None,
) -> Call[FilesPage]:
    """One page of files (path order); pass ``next_page_token`` back for the next.
    ``min_snapshot_id``: answer from a database holding that snapshot (the client adds its own
    last commit's by itself)."""
    return Call(
        "GET",
        f"{_table_path(namespace, table)}/files",
        _json(FilesPage.model_validate),
        params=_params(
            prefix=prefix, snapshot_id=snapshot_id, page_size=page_size, page_token=page_token, min_snapshot_id=min_snapshot_id
        ),
        idempotent=True,
        min_snapshot="query",
        at_snapshot=lambda p: p.snapshot_id,
    )


def file_stats(namespace: str, table: str, path: str, *, snapshot_id: int | None = None) -> Call[FileStatsJSON]:
    """One file's stats as committed: the commit JSON shape, with DuckLake rows in ``variant-stats``."""
    return Call(
        "GET",
        f"{_table_path(namespace, table)}/files/stats",
        _json(file_stats_json),
        params=_params(path=path, snapshot_id=snapshot_id),
        idempotent=True,
        min_snapshot="query",
    )


def table_stats(namespace: str, table: str, *, snapshot_id: int | None = None) -> Call[TableStatsJSON]:
    """Global stats: ``{"snapshot-id", "file-count", "columns": {col: [DuckLake objects]},
    "extra-stats": {col: DuckLake JSON text}}``."""
    return Call(
        "GET",
        f"{_table_path(namespace, table)}/stats",
        _json(table_stats_json),
        params=_params(snapshot_id=snapshot_id),
        idempotent=True,
        min_snapshot="query",
    )


def list_snapshots(
    namespace: str, table: str, *, page_size: int | None = None, page_token: str | None = None
) -> Call[SnapshotsPage]:
    return Call(
        "GET",
        f"{_table_path(namespace, table)}/snapshots",
        _json(SnapshotsPage.model_validate),
        params=_params(page_size=page_size, page_token=page_token),
        idempotent=True,
        errors=_ON_TABLE,
        min_snapshot="query",
    )


def plan(
    namespace: str,
    table: str,
    *,
    filter: Any = None,
    sql: str | None = None,
    snapshot_id: int | None = None,
    explain: bool = False,
    page_size: int | None = None,
    page_token: str | None = None,
    counts: bool = False,
    session_time_zone: str | None = None,
    min_snapshot_id: int | None = None,
) -> Call[PlanResult]:
    """Prune: the candidate files for a predicate (filter JSON or SQL text), one page; ``counts``:
    count the whole answer on the first page even when it spans several pages;
    ``session_time_zone``: what timestamp literals without a zone are read in (Spark's session
    time zone; default UTC); ``min_snapshot_id``: answer from a database holding that snapshot
    (the client adds its own last commit's by itself)."""
    body: dict[str, Any] = {"explain": explain}
    if counts:
        body["counts"] = True
    if filter is not None:
        body["filter"] = filter
    if sql is not None:
        body["sql"] = sql
    if snapshot_id is not None:
        body["snapshot-id"] = snapshot_id
    if page_size is not None:
        body["page-size"] = page_size
    if page_token is not None:
        body["page-token"] = page_token
    if session_time_zone is not None:
        body["session-time-zone"] = session_time_zone
    if min_snapshot_id is not None:
        body["min-snapshot-id"] = min_snapshot_id
    return Call(
        "POST",
        f"{_table_path(namespace, table)}/plan",
        _json(PlanResult.model_validate),
        json=body,
        idempotent=True,
        min_snapshot="body",
        at_snapshot=lambda p: p.snapshot_id,
    )
