"""The steps of a commit inside its transaction, in order, each a function of the previous steps'
typed results: resolve the table (and the batch's partition values as it types them) → replay an
idempotency key → validate against the table's layout (removals, a replaced layout, columns) →
detect conflicts (new, unchanged or conflicting paths) → restate → write the snapshot → merge the
global stats → record the result under the idempotency key. :func:`run` drives them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import Connection

from service.catalog import replay
from service.catalog import repository as repo
from service.catalog.commit.request import CommitRequest
from service.catalog.creation import table_for_commit
from service.catalog.encode import PreparedBatch, prepare_batch
from service.catalog.partitions import partitions_depend_on, table_partitions
from service.catalog.results import CommitResult
from service.catalog.validate import (
    check_batch_partitions,
    check_file_columns,
    check_table_columns,
    check_table_totals,
    replaced_layout,
    request_hash,
    same_content,
    validate_batch,
)
from service.catalog.verify import compare_file_stats
from service.errors import ConflictError, InvalidStatsError, NotFoundError, ShredcatError
from service.stats.merge import GlobalStatsAccumulator, from_ducklake_json
from service.stats.model import FileStats


@dataclass(frozen=True)
class Resolved:
    """The table a commit goes into, locked, and the batch with the partition values it sees."""

    table: repo.TableRow
    batch: Sequence[FileStats]
    prepared: PreparedBatch


@dataclass(frozen=True)
class Layout:
    """The live files the commit ends (``gone``, by path in ``ending``), the paths to remove that
    are not live, and the partition columns a replaced layout ends."""

    ending: Mapping[str, repo.LiveFile]
    missing: tuple[str, ...]
    gone: Sequence[repo.LiveFile]
    relayout: Sequence[str]


@dataclass(frozen=True)
class Matched:
    """The batch's files by what is live at their paths: ``new`` (none) or ``same`` (the same
    content), as indexes into the batch; ``live`` the live files at those paths."""

    live: Mapping[str, repo.LiveFile]
    new: Sequence[int]
    same: Sequence[int]


@dataclass(frozen=True)
class Written:
    """The snapshot a commit wrote: the table after it, the rows added, the files ended, the
    global stats before it and the live file count after it."""

    snapshot_id: int
    table: repo.TableRow
    adding: PreparedBatch
    ended: Sequence[repo.LiveFile]
    old_json: dict[str, str | None]
    live_files: int


def resolve_table(conn: Connection, req: CommitRequest) -> Resolved:
    """The table, locked (created when missing and the request creates it), and the batch typed
    as its location and declared partition types say."""
    t = (
        repo.require_table(conn, req.namespace, req.table, lock=True)
        if req.creating is None
        else table_for_commit(conn, req.namespace, req.table, req.creating, may_create=req.may_create)
    )
    if partitions_depend_on(t) and any(f.partitions for f in req.batch):
        # Rare (a table with a location or declared partition types): read again, re-prepare.
        batch = validate_batch(table_partitions(t, list(req.batch)), req.limits)
        check_batch_partitions(batch)
        return Resolved(t, batch, prepare_batch(batch))
    return Resolved(t, req.batch, req.prepared)


def replay_key(conn: Connection, req: CommitRequest, r: Resolved) -> CommitResult | None:
    """The stored result of the request's idempotency key, if it has one (ConflictError for
    another request under the same key); None: commit."""
    if req.idempotency_key is None:
        return None
    t = r.table
    # Keys older than the retention are gone (this one, and a batch of the oldest).
    cutoff = repo.utcnow() - timedelta(seconds=req.limits.idempotency_retention_seconds)
    repo.expire_commit_keys(conn, t.table_id, req.principal, req.idempotency_key, cutoff)
    stored = repo.get_commit_key(conn, t.table_id, req.principal, req.idempotency_key)
    if stored is None:
        return None
    # The hash without plain-column and partition rows is what keys stored before schema 0003
    # hold. Matching it means the same paths, contents and Variant stats: the same files,
    # whatever their column rows; so it replays too.
    if stored[0] != req.request_hash and stored[0] != request_hash(
        r.batch, req.removing, remove_missing_ok=req.remove_missing_ok, columns=False
    ):
        raise ConflictError(
            f"idempotency key {req.idempotency_key!r} was used for a different commit to {t.qualified_name}",
            details={"idempotency_key": req.idempotency_key},
        )
    return replay.decode(stored[1], [f.path for f in r.batch], req.removing)


def validate_layout(conn: Connection, req: CommitRequest, r: Resolved) -> Layout:
    """The files to end, and the batch checked against the table's columns and partition layout
    as the commit leaves them (a commit replacing every live file may bring another layout)."""
    t = r.table
    ending, missing = (
        live_or_missing(conn, t, req.removing, req.remove_missing_ok, ", so it cannot be removed")
        if req.removing
        else ({}, ())
    )
    gone = [ending[p] for p in req.removing if p in ending]
    kinds = {name: c.kind for name, c in t.plain.items()}
    relayout = replaced_layout(
        r.batch,
        kinds,
        declared=any(c.partition and c.declared for c in t.plain.values()),
        replacing_all=len(gone) == t.live_file_count,
    )
    if relayout:
        kinds = {name: kind for name, kind in kinds.items() if name not in relayout}
    layout = [] if relayout else t.partition_columns
    for f in r.batch:
        check_table_columns(f, t.columns, t.qualified_name)
        if f.columns or f.partitions or t.plain:
            try:
                check_file_columns(
                    f, t.columns, kinds, layout, t.qualified_name, unpartitioned_files=t.live_file_count > len(gone)
                )
            except InvalidStatsError as e:
                partitions = e.details.get("attribute") == "partitions"
                if partitions and f.partitions and not layout and _unrefreshed_partitioned(conn, t):
                    raise InvalidStatsError(
                        f"{e.message}; its files committed before schema revision 0003 have no partition "
                        f"values yet: run `shredcat refresh --table {t.qualified_name}` once",
                        details=e.details,
                    ) from None
                raise
    return Layout(ending, missing, gone, relayout)


def detect_conflicts(conn: Connection, r: Resolved, layout: Layout) -> Matched:
    """Which files are new and which are live with the same content; a live path with other
    content is a ConflictError (unless the commit also removes it)."""
    t, batch = r.table, r.batch
    live = repo.live_files_by_path(conn, t.table_id, [f.path for f in batch if f.path not in layout.ending])
    new: list[int] = []
    same: list[int] = []
    for i, f in enumerate(batch):
        lf = live.get(f.path)
        if lf is None:
            new.append(i)
        elif same_content(lf.identity, f):
            same.append(i)
        else:
            raise ConflictError(
                f"{f.path}: already registered in {t.qualified_name} with different content "
                f"(content_id {lf.content_id!r}, {lf.file_size_bytes} bytes; now "
                f"{f.content_id!r}, {f.file_size_bytes} bytes): remove it first, or replace it in one commit by "
                "also giving it to remove",
                details={"path": f.path},
            )
    return Matched(live, new, same)


def restate(conn: Connection, req: CommitRequest, r: Resolved, matched: Matched) -> list[int]:
    """The unchanged files (indexes) the caller extracted itself whose stored stats differ."""
    return [i for i in matched.same if r.batch[i].path in req.trusted and _stats_differ(conn, r.table, r.batch[i])]


def write_snapshot(
    conn: Connection, r: Resolved, layout: Layout, matched: Matched, restated: Sequence[int]
) -> Written | None:
    """The new snapshot: ended files (removed or restated), ended partition columns, added files
    and their columns. None when nothing changes."""
    t, batch, new, gone = r.table, r.batch, matched.new, layout.gone
    if not (new or restated or gone):
        return None
    check_table_totals(t.qualified_name, t.live_record_count, t.live_bytes, [batch[i] for i in new])
    ended = [*gone, *(matched.live[batch[i].path] for i in restated)]
    changes = ",".join(
        ([f"inserted_into_table:{t.table_id}"] if new or restated else [])
        + ([f"deleted_from_table:{t.table_id}"] if ended else [])
    )
    snap = repo.new_snapshot(conn, t.table_id, changes, added=len(new) + len(restated), removed=len(ended))
    old_json = repo.read_global_json(conn, t)
    keep = sorted([*new, *restated])
    adding = r.prepared if len(keep) == len(batch) else r.prepared.subset(keep)
    if ended:
        # The old rows end first: a path has one live row at a time.
        repo.end_files(conn, t, snap, ended)
    if layout.relayout:
        t = repo.end_columns(conn, t, snap, layout.relayout)
    if adding.files:
        t = repo.add_file_columns(conn, t, snap, adding.files)
        repo.add_files(conn, t, snap, adding)
    return Written(snap, t, adding, ended, old_json, t.live_file_count + len(new) - len(gone))


def merge_global_stats(conn: Connection, w: Written) -> None:
    """The table's global stats after the snapshot: rebuilt from the per-path counters when files
    ended, else the stored ones merged with the batch's own (never a rescan)."""
    t = w.table
    if w.ended:
        g = repo.rebuild_global(conn, t, w.live_files)
    else:
        merged = GlobalStatsAccumulator(from_ducklake_json(t.live_file_count, w.old_json))
        merged.merge(w.adding.aggregate)
        g = merged.freeze()
    repo.write_global_json(conn, t, g.column_json(t.columns), w.old_json)


def record_key(conn: Connection, req: CommitRequest, r: Resolved, result: CommitResult) -> None:
    """Store the result under the request's idempotency key, if it has one."""
    if req.idempotency_key is not None:
        repo.put_commit_key(
            conn, r.table.table_id, req.principal, req.idempotency_key, req.request_hash, result.snapshot_id,
            replay.encode(result, [f.path for f in r.batch], req.removing),
        )  # fmt: skip


def run(conn: Connection, req: CommitRequest) -> CommitResult:
    """The commit of ``req`` in ``conn``'s transaction: every step in order."""
    r = resolve_table(conn, req)
    replayed = replay_key(conn, req, r)
    if replayed is not None:
        return replayed
    layout = validate_layout(conn, req, r)
    matched = detect_conflicts(conn, r, layout)
    restated = restate(conn, req, r, matched)
    written = write_snapshot(conn, r, layout, matched, restated)
    if written is not None:
        merge_global_stats(conn, written)
    again = set(restated)
    result = CommitResult(
        None if written is None else written.snapshot_id,
        tuple(r.batch[i].path for i in matched.new),
        tuple(r.batch[i].path for i in matched.same if i not in again),
        restated=tuple(r.batch[i].path for i in restated),
        removed=tuple(lf.path for lf in layout.gone),
        missing=layout.missing,
    )
    record_key(conn, req, r, result)
    return result


def live_or_missing(
    conn: Connection, t: repo.TableRow, paths: Sequence[str], missing_ok: bool, why: str = ""
) -> tuple[dict[str, repo.LiveFile], tuple[str, ...]]:
    """The live files among ``paths`` (by path) and the paths that are not live: a NotFoundError
    naming them (its first sentence ending with ``why``) unless ``missing_ok``."""
    live = repo.live_files_by_path(conn, t.table_id, paths)
    missing = tuple(p for p in paths if p not in live)
    if missing and not missing_ok:
        raise NotFoundError(
            f"{missing[0]}: not a live file of {t.qualified_name}{why}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            details={"paths": list(missing[:100])},
        )
    return live, missing


def _unrefreshed_partitioned(conn: Connection, t: repo.TableRow) -> bool:
    """Whether live files of ``t`` committed before the catalog kept partition values (schema
    0003) lie in ``name=value`` directories: ``shredcat refresh`` gives them their values."""
    from service.storage.partitions import partition_values

    def partitioned(path: str) -> bool:
        try:
            return bool(partition_values(path))
        except ShredcatError:
            return True  # name=value segments Spark would refuse: refresh names the file

    return any(partitioned(path) for _, path, _, _ in repo.files_without_column_rows(conn, t.table_id, limit=1000))


def _stats_differ(conn: Connection, t: repo.TableRow, f: FileStats) -> bool:
    stored = repo.file_stats(conn, t, f.path, None)
    return stored is not None and bool(compare_file_stats(stored, f))
