"""One error tree for the whole service.

Bad input (a caller's fault, mapped to HTTP 4xx) is kept apart from misuse and internal faults.
Every third-party library is wrapped by one module that translates its exceptions into these.
The API maps each class to one status code in one handler (``service.api.errors``).
"""

from __future__ import annotations

from typing import Any


class ShredcatError(Exception):
    """Base of every error shredcat raises on purpose."""

    #: Stable machine-readable name, used as ``error.type`` in API bodies.
    code: str = "internal_error"
    #: HTTP status the API maps this class to.
    http_status: int = 500

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


# --- Bad input: the caller can fix it ---------------------------------------------------------


class BadInputError(ShredcatError):
    code = "bad_input"
    http_status = 422


class InvalidParquetError(BadInputError):
    """The bytes are not a readable Parquet file (magic, truncated or corrupt footer)."""

    code = "invalid_parquet"


class UnsupportedShreddingError(BadInputError):
    """A Variant group whose shredding the spec forbids or shredcat cannot read
    (unsigned ints, a wrong fixed length, unknown fields beside value/typed_value)."""

    code = "unsupported_shredding"


class InvalidPathError(BadInputError):
    """A JSON path or DuckLake variant path that cannot be parsed."""

    code = "invalid_path"


class InvalidPredicateError(BadInputError):
    """A predicate that cannot be parsed or uses something shredcat does not support.

    ``position``: for a syntax error, the 0-based character offset in the predicate text where
    the parser stopped (also ``details["position"]``), so a form can point at it; else None."""

    code = "invalid_predicate"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, position: int | None = None) -> None:
        if position is not None:
            details = {**(details or {}), "position": position}
        super().__init__(message, details=details)
        self.position = position


class UnrenderablePredicateError(InvalidPredicateError):
    """A predicate (or part of one) that has no exact rendering in another engine's SQL (DuckDB):
    refused rather than rendered as something that could select other rows."""

    code = "unrenderable_predicate"


class UnknownColumnError(BadInputError):
    """A predicate names a Variant column the table does not have."""

    code = "unknown_column"


class InvalidStatsError(BadInputError):
    """Client-supplied statistics that are malformed or inconsistent."""

    code = "invalid_stats"


class LimitExceededError(BadInputError):
    code = "limit_exceeded"
    http_status = 413


class UnsupportedMediaTypeError(BadInputError):
    """A request body of a content type the route does not read (a JSON route given a form, text...)."""

    code = "unsupported_media_type"
    http_status = 415


class FileAccessError(BadInputError):
    """A file that cannot be opened or read (missing, permission, storage error)."""

    code = "file_access"


# Object stores (service.storage.objects): the same ``file_access`` answer, told apart by class and
# by ``details["reason"]`` so that callers (and API clients) can react to the kind of failure.


class ObjectStoreError(FileAccessError):
    """A request to an object store failed; ``details["reason"]`` says how."""

    reason = "error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details={"reason": self.reason, **(details or {})})


class ObjectNotFoundError(ObjectStoreError):
    """No object under that name (HTTP 404 of the store)."""

    reason = "not_found"


class ObjectAccessDeniedError(ObjectStoreError):
    """The store refused the credentials or the request (HTTP 401/403)."""

    reason = "denied"


class ObjectTruncatedError(ObjectStoreError):
    """Fewer bytes arrived than the store promised, or a range lies past the object's end."""

    reason = "truncated"


class ObjectChangedError(ObjectStoreError):
    """The object was rewritten between two reads of one extraction (a precondition failed)."""

    reason = "changed"


class ObjectStoreUnavailableError(ObjectStoreError):
    """The store cannot be reached or keeps failing (connection refused or cut, timeouts, 5xx)."""

    reason = "unavailable"


# --- Catalog state ----------------------------------------------------------------------------


class NotFoundError(ShredcatError):
    code = "not_found"
    http_status = 404


class AlreadyExistsError(ShredcatError):
    code = "already_exists"
    http_status = 409


class ConflictError(ShredcatError):
    """The request contradicts the catalog (same path, different content; stale snapshot)."""

    code = "conflict"
    http_status = 409


# --- Security ---------------------------------------------------------------------------------


class UnauthorizedError(ShredcatError):
    code = "unauthorized"
    http_status = 401


class ForbiddenError(ShredcatError):
    code = "forbidden"
    http_status = 403


# --- Infrastructure ---------------------------------------------------------------------------


class StorageUnavailableError(ShredcatError):
    """The catalog database cannot be reached; safe to retry."""

    code = "storage_unavailable"
    http_status = 503


class DatabaseUnresponsiveError(StorageUnavailableError):
    """A catalog database kept its connection open but did not answer a read within the read
    timeout (its processes stopped, a paused VM, a network black hole): the client closed the
    connection (:mod:`service.catalog.deadlines`). Only reads have this deadline, so nothing was
    half written; the message names the database (never its host)."""

    code = "database_unresponsive"


class SchemaNotMigratedError(StorageUnavailableError):
    """The catalog database's schema is not the one this code needs: ``shredcat migrate``."""

    code = "schema_not_migrated"


class QueryError(ShredcatError):
    """DuckDB refused or failed a query shredcat built (service.duckdb translates its errors):
    ``details["duckdb"]`` names DuckDB's error class. A Variant value whose cast DuckDB cannot
    make exactly as Spark makes it fails the query this way (message ``shredcat: ...``)."""

    code = "query_failed"
    http_status = 422


class SettingsError(ShredcatError):
    """A ``SHREDCAT_*`` variable has a value the process cannot run with (a misconfiguration:
    commands exit 2 naming the variable)."""

    code = "invalid_settings"
