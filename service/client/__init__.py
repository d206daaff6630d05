"""Python client of shredcat's REST API (httpx), for Spark drivers, scripts and dashboards.

>>> from service.client import ShredcatClient
>>> with ShredcatClient("http://127.0.0.1:8181", token="...") as c:           # doctest: +SKIP
...     c.create_table("lake", "events", variant_columns=["v"])
...     c.commit_paths("lake", "events", ["/data/lake/events/part-0.parquet"])
...     plan = c.plan("lake", "events", sql="variant_get(v, '$.user.id', 'bigint') = 42")
...     paths = [f.path for f in plan.files]

Every route has a typed method returning small frozen dataclasses (or plain dicts for the
DuckLake-shaped statistics). :class:`AsyncShredcatClient` has the same methods as coroutines.

**Retries** (``retries`` extra attempts, exponential backoff from ``backoff`` seconds with jitter,
honouring ``Retry-After``): a connection that could not be opened is always retried (the request
never reached the server); a broken connection, a timeout, 500, 502, 503 and 504 are retried only
for calls that are safe to repeat: reads, plans, and commits, which always carry an
``Idempotency-Key`` (generated once per logical commit, reused by every retry, so a retried commit
is applied exactly once).

**Errors**: every error answer raises a :class:`ShredcatAPIError` subclass chosen by status
(:class:`NotFound`, :class:`Conflict`, :class:`Unprocessable`...) carrying the server's body
(``type``, ``message``, ``details``); transport failures after the last retry raise
:class:`ShredcatConnectionError`.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

if TYPE_CHECKING:
    from service.stats.model import FileStats

__all__ = [
    "AsyncShredcatClient",
    "BadRequest",
    "ClientError",
    "CommitResult",
    "Conflict",
    "DataFile",
    "FileExplanation",
    "FilesPage",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "PlanFile",
    "PlanResult",
    "RemoveResult",
    "ServerError",
    "ServiceUnavailable",
    "ShredcatAPIError",
    "ShredcatClient",
    "ShredcatConnectionError",
    "Snapshot",
    "SnapshotsPage",
    "Table",
    "Unauthorized",
    "Unprocessable",
    "file_stats_payload",
]

DEFAULT_TIMEOUT = 60.0
MAX_BACKOFF = 10.0


# --- errors -------------------------------------------------------------------------------------


class ShredcatAPIError(Exception):
    """An error answer of the server: ``status`` and the body's ``type``, ``message``, ``details``."""

    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
    ) -> None:
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message
        self.details = dict(details or {})
        self.request_id = request_id


class ClientError(ShredcatAPIError):
    """4xx: the request was refused; retrying it unchanged will not help."""


class BadRequest(ClientError):
    pass


class Unauthorized(ClientError):
    pass


class Forbidden(ClientError):
    pass


class NotFound(ClientError):
    pass


class Conflict(ClientError):
    pass


class PayloadTooLarge(ClientError):
    pass


class Unprocessable(ClientError):
    """422: a field of the request is invalid (``details["field"]`` names it)."""


class ServerError(ShredcatAPIError):
    """5xx."""


class ServiceUnavailable(ServerError):
    pass


class ShredcatConnectionError(Exception):
    """The server could not be reached (after every retry)."""


_BY_STATUS: dict[int, type[ShredcatAPIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    503: ServiceUnavailable,
}


def error_from_response(r: httpx.Response) -> ShredcatAPIError:
    status = r.status_code
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ClientError)
    type_, message, details = "http_error", r.reason_phrase or f"HTTP {status}", {}
    try:
        body = r.json()
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            type_ = str(err.get("type", type_))
            message = str(err.get("message", message))
            details = err.get("details") if isinstance(err.get("details"), dict) else {}
    except ValueError:
        text = r.text.strip()
        if text:
            message = text[:500]
    return cls(status, type_, message, details, request_id=r.headers.get("x-request-id"))


# --- results --------------------------------------------------------------------------------------


def _ts(v: str | None) -> datetime | None:
    if v is None:
        return None
    return datetime.fromisoformat(v.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class Table:
    namespace: str
    name: str
    table_id: int
    variant_columns: tuple[str, ...]
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    snapshot_count: int
    last_commit_time: datetime | None
    begin_snapshot: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Table:
        ident = d["identifier"]
        return cls(
            namespace=".".join(ident["namespace"]),
            name=ident["name"],
            table_id=d["table-id"],
            variant_columns=tuple(d["variant-columns"]),
            live_file_count=d["live-file-count"],
            live_record_count=d["live-record-count"],
            live_bytes=d["live-bytes"],
            current_snapshot_id=d["current-snapshot-id"],
            snapshot_count=d["snapshot-count"],
            last_commit_time=_ts(d.get("last-commit-time")),
            begin_snapshot=d["begin-snapshot"],
        )


@dataclass(frozen=True, slots=True)
class CommitResult:
    snapshot_id: int | None
    added: tuple[str, ...]
    unchanged: tuple[str, ...]
    replayed: bool
    #: The Idempotency-Key the commit was sent with.
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class RemoveResult:
    snapshot_id: int | None
    removed: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DataFile:
    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    content_id: str | None
    begin_snapshot: int
    end_snapshot: int | None


@dataclass(frozen=True, slots=True)
class FilesPage:
    snapshot_id: int
    files: tuple[DataFile, ...]
    next_page_token: str | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: int
    snapshot_time: datetime
    changes_made: str
    added_files: int
    removed_files: int


@dataclass(frozen=True, slots=True)
class SnapshotsPage:
    snapshots: tuple[Snapshot, ...]
    next_page_token: str | None


@dataclass(frozen=True, slots=True)
class PlanFile:
    path: str
    file_size_bytes: int
    record_count: int


@dataclass(frozen=True, slots=True)
class FileExplanation:
    path: str
    kept: bool
    reason: str


@dataclass(frozen=True, slots=True)
class PlanResult:
    snapshot_id: int | None
    files: tuple[PlanFile, ...]
    next_page_token: str | None
    files_considered: int
    files_pruned: int
    files_kept: int
    rows_skipped: int
    bytes_skipped: int
    explain: tuple[FileExplanation, ...] | None = None

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


def _table(d: Any) -> Table:
    return Table.from_json(d)


def _commit(key: str | None) -> Callable[[Any], CommitResult]:
    def parse(d: Any) -> CommitResult:
        return CommitResult(d["snapshot-id"], tuple(d["added"]), tuple(d["unchanged"]), d["replayed"], key)

    return parse


def _remove(d: Any) -> RemoveResult:
    return RemoveResult(d["snapshot-id"], tuple(d["removed"]), tuple(d["missing"]))


def _files_page(d: Any) -> FilesPage:
    files = tuple(
        DataFile(
            f["path"], f["file-size-bytes"], f["record-count"], f["footer-size"], f.get("content-id"),
            f["begin-snapshot"], f.get("end-snapshot"),
        )
        for f in d["files"]
    )
    return FilesPage(d["snapshot-id"], files, d.get("next-page-token"))


def _snapshots_page(d: Any) -> SnapshotsPage:
    snaps = tuple(
        Snapshot(s["snapshot-id"], _ts(s["snapshot-time"]), s["changes-made"], s["added-files"], s["removed-files"])  # type: ignore[arg-type]
        for s in d["snapshots"]
    )
    return SnapshotsPage(snaps, d.get("next-page-token"))


def _plan(d: Any) -> PlanResult:
    m = d["metrics"]
    explain = d.get("explain")
    return PlanResult(
        snapshot_id=d.get("snapshot-id"),
        files=tuple(PlanFile(f["path"], f["file-size-bytes"], f["record-count"]) for f in d["files"]),
        next_page_token=d.get("next-page-token"),
        files_considered=m["files-considered"],
        files_pruned=m["files-pruned"],
        files_kept=m["files-kept"],
        rows_skipped=m["rows-skipped"],
        bytes_skipped=m["bytes-skipped"],
        explain=None if explain is None else tuple(FileExplanation(x["path"], x["kept"], x["reason"]) for x in explain),
    )


def _identity(d: Any) -> Any:
    return d


def _none(_: Any) -> None:
    return None


def file_stats_payload(fs: FileStats) -> dict[str, Any]:
    """A :class:`~service.stats.model.FileStats` (from :func:`service.stats.extract.extract_file`) as
    the JSON a commit with client-side statistics carries."""
    return {
        "path": fs.path,
        "file-size-bytes": fs.file_size_bytes,
        "record-count": fs.record_count,
        "footer-size": fs.footer_size,
        "content-id": fs.content_id,
        "variant-columns": list(fs.variant_columns),
        "variant-stats": [{"column": ps.column, **ps.ducklake_row()} for ps in fs.paths],
    }


# --- requests -------------------------------------------------------------------------------------


def _seg(name: str) -> str:
    return quote(name, safe="")


def _table_path(namespace: str, table: str) -> str:
    return f"/v1/namespaces/{_seg(namespace)}/tables/{_seg(table)}"


def _params(**kw: Any) -> dict[str, Any]:
    return {k.replace("_", "-"): v for k, v in kw.items() if v is not None}


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    parse: Callable[[Any], Any]
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Safe to send again after a failure that may have reached the server.
    idempotent: bool = False
    #: Parse the body as text instead of JSON.
    text: bool = False
    #: Status codes that are not errors (besides 2xx).
    ok_statuses: tuple[int, ...] = ()


_RETRY_STATUSES = (500, 502, 503, 504)


class _Base:
    """Request building shared by the sync and async clients; ``_run`` differs."""

    def __init__(self, retries: int, backoff: float) -> None:
        if retries < 0 or backoff < 0:
            raise ValueError("retries and backoff must be >= 0")
        self.retries = retries
        self.backoff = backoff

    def _run(self, call: _Call) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    # How long to wait before attempt ``attempt + 1`` (None: do not retry).
    def _delay(self, call: _Call, attempt: int, *, exc: Exception | None, response: httpx.Response | None) -> float | None:
        if attempt >= self.retries:
            return None
        if exc is not None:
            never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
            if not (never_sent or (call.idempotent and isinstance(exc, httpx.TransportError))):
                return None
        elif response is not None and (response.status_code not in _RETRY_STATUSES or not call.idempotent):
            return None
        delay = min(MAX_BACKOFF, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)
        if response is not None:
            retry_after = response.headers.get("retry-after")
            if retry_after and retry_after.isdigit():
                delay = max(delay, min(MAX_BACKOFF, float(retry_after)))
        return delay

    @staticmethod
    def _result(call: _Call, r: httpx.Response) -> Any:
        if r.is_success or r.status_code in call.ok_statuses:
            if call.text:
                return call.parse(r.text)
            return call.parse(r.json() if r.content else None)
        raise error_from_response(r)

    # --- operations -------------------------------------------------------------------------

    def health(self) -> Any:
        """Readiness: ``{"status": "ok", "backend", "schema-revision", "version"}``; 503 raises."""
        return self._run(_Call("GET", "/health", _identity, idempotent=True))

    def metrics(self) -> Any:
        """The Prometheus exposition text."""
        return self._run(_Call("GET", "/metrics", _identity, idempotent=True, text=True))

    # --- namespaces -------------------------------------------------------------------------

    def list_namespaces(self) -> Any:
        return self._run(
            _Call("GET", "/v1/namespaces", lambda d: [".".join(n) for n in d["namespaces"]], idempotent=True)
        )

    def create_namespace(self, namespace: str) -> Any:
        return self._run(_Call("POST", "/v1/namespaces", _identity, json={"namespace": [namespace]}))

    def load_namespace(self, namespace: str) -> Any:
        return self._run(_Call("GET", f"/v1/namespaces/{_seg(namespace)}", _identity, idempotent=True))

    def drop_namespace(self, namespace: str) -> Any:
        return self._run(
            _Call("DELETE", f"/v1/namespaces/{_seg(namespace)}", lambda d: d.get("snapshot-id"))
        )

    # --- tables -------------------------------------------------------------------------------

    def list_tables(self, namespace: str) -> Any:
        return self._run(
            _Call(
                "GET",
                f"/v1/namespaces/{_seg(namespace)}/tables",
                lambda d: [i["name"] for i in d["identifiers"]],
                idempotent=True,
            )
        )

    def create_table(
        self,
        namespace: str,
        name: str,
        *,
        variant_columns: Sequence[str] | None = None,
        infer_from: str | None = None,
    ) -> Any:
        """Create a table with these Variant columns, or those of the file ``infer_from`` (read by
        the server, inside its warehouse roots)."""
        body: dict[str, Any] = {"name": name}
        if variant_columns is not None:
            body["variant-columns"] = list(variant_columns)
        if infer_from is not None:
            body["infer-from"] = infer_from
        return self._run(_Call("POST", f"/v1/namespaces/{_seg(namespace)}/tables", _table, json=body))

    def load_table(self, namespace: str, table: str) -> Any:
        return self._run(_Call("GET", _table_path(namespace, table), _table, idempotent=True))

    def drop_table(self, namespace: str, table: str) -> Any:
        """Drop the table; returns the snapshot id of the drop."""
        return self._run(_Call("DELETE", _table_path(namespace, table), lambda d: d["snapshot-id"]))

    # --- commits ------------------------------------------------------------------------------

    def commit(
        self,
        namespace: str,
        table: str,
        *,
        paths: Sequence[str] | None = None,
        files: Sequence[FileStats | Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """Register files as one snapshot: ``paths`` the server reads itself, and/or ``files`` with
        statistics extracted here (FileStats from ``extract_file``, or their JSON). The idempotency
        key (a new uuid4 unless given) is reused by every retry of this call."""
        key = idempotency_key or uuid.uuid4().hex
        body: dict[str, Any] = {}
        if paths is not None:
            body["paths"] = list(paths)
        if files is not None:
            body["files"] = [f if isinstance(f, Mapping) else file_stats_payload(f) for f in files]
        return self._run(
            _Call(
                "POST",
                f"{_table_path(namespace, table)}/commits",
                _commit(key),
                json=body,
                headers={"Idempotency-Key": key},
                idempotent=True,
            )
        )

    def commit_paths(self, namespace: str, table: str, paths: Sequence[str], *, idempotency_key: str | None = None) -> Any:
        return self.commit(namespace, table, paths=paths, idempotency_key=idempotency_key)

    def commit_files(
        self,
        namespace: str,
        table: str,
        files: Sequence[FileStats | Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
    ) -> Any:
        return self.commit(namespace, table, files=files, idempotency_key=idempotency_key)

    def remove_files(self, namespace: str, table: str, paths: Sequence[str], *, missing_ok: bool = False) -> Any:
        return self._run(
            _Call(
                "POST",
                f"{_table_path(namespace, table)}/files/remove",
                _remove,
                json={"paths": list(paths), "missing-ok": missing_ok},
                # Removing the same paths again is harmless only when missing ones are tolerated.
                idempotent=missing_ok,
            )
        )

    # --- reading ------------------------------------------------------------------------------

    def list_files(
        self,
        namespace: str,
        table: str,
        *,
        prefix: str | None = None,
        snapshot_id: int | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> Any:
        """One page of files (path order); pass ``next_page_token`` back for the next."""
        return self._run(
            _Call(
                "GET",
                f"{_table_path(namespace, table)}/files",
                _files_page,
                params=_params(prefix=prefix, snapshot_id=snapshot_id, page_size=page_size, page_token=page_token),
                idempotent=True,
            )
        )

    def file_stats(self, namespace: str, table: str, path: str, *, snapshot_id: int | None = None) -> Any:
        """One file's stats as committed: the commit JSON shape, with DuckLake rows in ``variant-stats``."""
        return self._run(
            _Call(
                "GET",
                f"{_table_path(namespace, table)}/files/stats",
                _identity,
                params=_params(path=path, snapshot_id=snapshot_id),
                idempotent=True,
            )
        )

    def table_stats(self, namespace: str, table: str, *, snapshot_id: int | None = None) -> Any:
        """Global stats: ``{"snapshot-id", "file-count", "columns": {col: [DuckLake objects]},
        "extra-stats": {col: DuckLake JSON text}}``."""
        return self._run(
            _Call(
                "GET",
                f"{_table_path(namespace, table)}/stats",
                _identity,
                params=_params(snapshot_id=snapshot_id),
                idempotent=True,
            )
        )

    def list_snapshots(
        self, namespace: str, table: str, *, page_size: int | None = None, page_token: str | None = None
    ) -> Any:
        return self._run(
            _Call(
                "GET",
                f"{_table_path(namespace, table)}/snapshots",
                _snapshots_page,
                params=_params(page_size=page_size, page_token=page_token),
                idempotent=True,
            )
        )

    def plan(
        self,
        namespace: str,
        table: str,
        *,
        filter: Any = None,
        sql: str | None = None,
        snapshot_id: int | None = None,
        explain: bool = False,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> Any:
        """Prune: the candidate files for a predicate (filter JSON or SQL text), one page."""
        body: dict[str, Any] = {"explain": explain}
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
        return self._run(_Call("POST", f"{_table_path(namespace, table)}/plan", _plan, json=body, idempotent=True))


class ShredcatClient(_Base):
    """Synchronous client. ``http``: an existing ``httpx.Client`` to send with (its base URL is used
    when ``base_url`` is None), e.g. a FastAPI TestClient."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        retries: int = 3,
        backoff: float = 0.2,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        http: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(retries, backoff)
        if http is None:
            if base_url is None:
                raise ValueError("base_url is required")
            http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)
            self._owns_http = True
        else:
            self._owns_http = False
        self._http = http
        self._base_url = base_url
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._sleep = sleep

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> ShredcatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str) -> str:
        return path if self._owns_http or self._base_url is None else self._base_url.rstrip("/") + path

    def _run(self, call: _Call) -> Any:
        attempt = 0
        while True:
            try:
                r = self._http.request(
                    call.method,
                    self._url(call.path),
                    params=call.params,
                    json=call.json,
                    headers={**self._auth, **call.headers},
                )
            except httpx.TransportError as e:
                delay = self._delay(call, attempt, exc=e, response=None)
                if delay is None:
                    raise ShredcatConnectionError(f"{call.method} {call.path}: {type(e).__name__}: {e}") from e
            else:
                delay = None if r.is_success else self._delay(call, attempt, exc=None, response=r)
                if delay is None:
                    return self._result(call, r)
            self._sleep(delay)
            attempt += 1

    # --- iteration over pages ---------------------------------------------------------------

    def iter_files(
        self, namespace: str, table: str, *, prefix: str | None = None, snapshot_id: int | None = None, page_size: int | None = None
    ) -> Iterator[DataFile]:
        token: str | None = None
        while True:
            page: FilesPage = self.list_files(
                namespace, table, prefix=prefix, snapshot_id=snapshot_id, page_size=page_size, page_token=token
            )
            yield from page.files
            if not page.next_page_token:
                return
            token = page.next_page_token

    def iter_snapshots(self, namespace: str, table: str, *, page_size: int | None = None) -> Iterator[Snapshot]:
        token: str | None = None
        while True:
            page: SnapshotsPage = self.list_snapshots(namespace, table, page_size=page_size, page_token=token)
            yield from page.snapshots
            if not page.next_page_token:
                return
            token = page.next_page_token

    def plan_all(self, namespace: str, table: str, **kwargs: Any) -> PlanResult:
        """Every page of a plan, merged into one result (``files`` of all pages)."""
        first: PlanResult = self.plan(namespace, table, **kwargs)
        files, explain = list(first.files), list(first.explain or [])
        token = first.next_page_token
        while token:
            page: PlanResult = self.plan(namespace, table, **{**kwargs, "page_token": token})
            files.extend(page.files)
            explain.extend(page.explain or [])
            token = page.next_page_token
        return PlanResult(
            first.snapshot_id, tuple(files), None, first.files_considered, first.files_pruned, first.files_kept,
            first.rows_skipped, first.bytes_skipped, tuple(explain) if first.explain is not None else None,
        )

    def extract_and_commit(
        self, namespace: str, table: str, paths: Sequence[str], *, idempotency_key: str | None = None
    ) -> CommitResult:
        """Extract the files' statistics here (this process reads the files) and commit them, so the
        server needs no access to the storage."""
        from service.stats.extract import extract_file

        return self.commit_files(namespace, table, [extract_file(p) for p in paths], idempotency_key=idempotency_key)


class AsyncShredcatClient(_Base):
    """Asynchronous client: the same methods as :class:`ShredcatClient`, as coroutines."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        retries: int = 3,
        backoff: float = 0.2,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(retries, backoff)
        if http is None:
            if base_url is None:
                raise ValueError("base_url is required")
            http = httpx.AsyncClient(base_url=base_url, timeout=timeout, transport=transport)
            self._owns_http = True
        else:
            self._owns_http = False
        self._http = http
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncShredcatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: _Call) -> Any:  # type: ignore[override]
        attempt = 0
        while True:
            try:
                r = await self._http.request(
                    call.method, call.path, params=call.params, json=call.json, headers={**self._auth, **call.headers}
                )
            except httpx.TransportError as e:
                delay = self._delay(call, attempt, exc=e, response=None)
                if delay is None:
                    raise ShredcatConnectionError(f"{call.method} {call.path}: {type(e).__name__}: {e}") from e
            else:
                delay = None if r.is_success else self._delay(call, attempt, exc=None, response=r)
                if delay is None:
                    return self._result(call, r)
            await asyncio.sleep(delay)
            attempt += 1

    async def iter_files(
        self, namespace: str, table: str, *, prefix: str | None = None, snapshot_id: int | None = None, page_size: int | None = None
    ) -> AsyncIterator[DataFile]:
        token: str | None = None
        while True:
            page: FilesPage = await self.list_files(
                namespace, table, prefix=prefix, snapshot_id=snapshot_id, page_size=page_size, page_token=token
            )
            for f in page.files:
                yield f
            if not page.next_page_token:
                return
            token = page.next_page_token
