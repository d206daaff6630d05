"""The first step of a commit, before any transaction: the request checked and its rows prepared."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from service.catalog.creation import check_variant_columns
from service.catalog.encode import PreparedBatch, prepare_batch
from service.catalog.partitions import path_partitions
from service.catalog.validate import (
    Limits,
    check_batch_partitions,
    check_file_count,
    check_name,
    request_hash,
    validate_batch,
)
from service.errors import InvalidStatsError
from service.stats.model import FileStats


@dataclass(frozen=True)
class CommitRequest:
    """A commit's request, checked: what every step inside the transaction reads (see
    :meth:`service.catalog.Catalog.commit` for the meaning of each argument)."""

    namespace: str
    table: str
    #: The files, validated, with the partition values of their paths.
    batch: Sequence[FileStats]
    #: ``batch`` encoded, with its own merged global stats (done before the table lock).
    prepared: PreparedBatch
    #: The distinct paths to remove, in the order given.
    removing: Sequence[str]
    remove_missing_ok: bool
    idempotency_key: str | None
    principal: str
    #: The request's digest (empty without an idempotency key).
    request_hash: str
    #: Paths whose stats the caller extracted itself (restated when the stored ones differ).
    trusted: frozenset[str]
    #: The Variant columns a missing table is created with, or None: it must exist.
    creating: tuple[str, ...] | None
    may_create: bool
    limits: Limits


def check_request(
    namespace: str,
    table: str,
    files: Iterable[FileStats],
    *,
    limits: Limits,
    idempotency_key: str | None,
    principal: str,
    extracted: Collection[str],
    remove: Iterable[str],
    remove_missing_ok: bool,
    create_with: Sequence[str] | None,
    may_create: bool,
) -> CommitRequest:
    """Validate a commit's request outside any transaction (InvalidStatsError naming the first bad
    file, BadInputError...); encoding and the batch's own merge happen here, before the lock."""
    creating = None
    if create_with is not None:
        check_name("namespace", namespace)  # valid text; the rules for new names apply below
        check_name("table", table)
        creating = check_variant_columns(create_with)
    # Partition values are read from the paths (every name=value segment; under the table's
    # location and typed as it declares once the table row is read: resolve_table).
    batch = validate_batch(path_partitions(files), limits)
    check_batch_partitions(batch)
    prepared = prepare_batch(batch)
    removing = list(dict.fromkeys(remove))
    check_file_count(len(removing), limits, "paths to remove")
    for p in removing:
        if not isinstance(p, str) or not p:
            raise InvalidStatsError(f"invalid path to remove {p!r}", details={"attribute": "remove"})
    if idempotency_key is not None:
        check_name("idempotency key", idempotency_key)
        check_name("principal", principal)
    req_hash = (
        request_hash(batch, removing, remove_missing_ok=remove_missing_ok) if idempotency_key is not None else ""
    )
    return CommitRequest(
        namespace,
        table,
        batch,
        prepared,
        removing,
        remove_missing_ok,
        idempotency_key,
        principal,
        req_hash,
        frozenset(extracted),
        creating,
        may_create,
        limits,
    )
