"""Python client of shredcat's REST API (httpx), for Spark drivers, scripts and dashboards.

>>> from service.client import ShredcatClient
>>> with ShredcatClient("http://127.0.0.1:8181", token="...") as c:           # doctest: +SKIP
...     c.create_table("lake", "events", variant_columns=["v"])
...     c.commit_paths("lake", "events", ["/data/lake/events/part-0.parquet"])
...     plan = c.plan("lake", "events", sql="variant_get(v, '$.user.id', 'bigint') = 42")
...     paths = [f.path for f in plan.files]

Every route has a typed method returning the server's own response models, frozen (pydantic,
:mod:`service.wire`), or plain dicts, typed by ``TypedDict``, for the DuckLake-shaped statistics. :class:`AsyncShredcatClient` has the same
methods as coroutines. Both send below ``base_url`` when it is given, else below the base URL of the
``http`` client they are handed.

**Retries** (``retries`` extra attempts, exponential backoff from ``backoff`` seconds with jitter,
honouring ``Retry-After``): a connection that could not be opened is always retried (the request
never reached the server); a broken connection, a timeout, 500, 502, 503 and 504 are retried only
for calls that are safe to repeat: reads, plans, and commits, which always carry an
``Idempotency-Key`` (generated once per logical commit, reused by every retry, so a retried commit
is applied exactly once).

**Errors**: every error answer raises a :class:`ShredcatAPIError` subclass chosen by status
(:class:`NotFound`, :class:`Conflict`, :class:`Unprocessable`...) or, where a status has one meaning
for a call, by call (:class:`NoSuchTable` from ``load_table``, :class:`NamespaceAlreadyExists` from
``create_namespace``..., subclasses of the status's class), carrying the server's body (``type``,
``message``, ``details``); a success status whose body is not the call's answer raises
:class:`UnexpectedResponse`; transport failures after the last retry raise
:class:`ShredcatConnectionError`.

Modules: :mod:`~service.client.errors` (exceptions, status maps), :mod:`~service.client.models`
(response types: the wire's models under the client's names), :mod:`~service.client.calls` (each route's request, parser and error map),
:mod:`~service.client.retry` (the retry policy), :mod:`~service.client.base` (what both clients
share), :mod:`~service.client.sync` and :mod:`~service.client.async_` (the two transports).
"""

from service.client.async_ import AsyncShredcatClient
from service.client.calls import file_stats_payload
from service.client.errors import (
    BadRequest,
    ClientError,
    CommitConflict,
    Conflict,
    Forbidden,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchNamespace,
    NoSuchTable,
    NotFound,
    PayloadTooLarge,
    ServerError,
    ServiceUnavailable,
    ShredcatAPIError,
    ShredcatConnectionError,
    TableAlreadyExists,
    Unauthorized,
    UnexpectedResponse,
    Unprocessable,
    UnsupportedMediaType,
)
from service.client.models import (
    ColumnStatsRowJSON,
    CommitResult,
    DataFile,
    FileExplanation,
    FilesPage,
    FileStatsJSON,
    GlobalPathStatsJSON,
    Health,
    Namespace,
    PartitionValueJSON,
    PlanFile,
    PlanResult,
    PlanWarning,
    RemoveResult,
    Snapshot,
    SnapshotsPage,
    Table,
    TableColumn,
    TableStatsJSON,
    VariantStatsRowJSON,
)
from service.client.sync import ShredcatClient

__all__ = [
    "AsyncShredcatClient",
    "BadRequest",
    "ClientError",
    "ColumnStatsRowJSON",
    "CommitConflict",
    "CommitResult",
    "Conflict",
    "DataFile",
    "FileExplanation",
    "FileStatsJSON",
    "FilesPage",
    "Forbidden",
    "GlobalPathStatsJSON",
    "Health",
    "Namespace",
    "NamespaceAlreadyExists",
    "NamespaceNotEmpty",
    "NoSuchNamespace",
    "NoSuchTable",
    "NotFound",
    "PartitionValueJSON",
    "PayloadTooLarge",
    "PlanFile",
    "PlanResult",
    "PlanWarning",
    "RemoveResult",
    "ServerError",
    "ServiceUnavailable",
    "ShredcatAPIError",
    "ShredcatClient",
    "ShredcatConnectionError",
    "Snapshot",
    "SnapshotsPage",
    "Table",
    "TableAlreadyExists",
    "TableColumn",
    "TableStatsJSON",
    "Unauthorized",
    "UnexpectedResponse",
    "Unprocessable",
    "UnsupportedMediaType",
    "VariantStatsRowJSON",
    "file_stats_payload",
]
