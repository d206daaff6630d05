"""Commit idempotency keys: the request hash and result stored under a key, written in the
commit's own transaction. Keys are scoped per table and per principal (the caller's identity),
so two writers never see each other's results. A key lives for the retention
(``SHREDCAT_IDEMPOTENCY_RETENTION_SECONDS``): every commit with a key first deletes its own key if
expired and up to :data:`EXPIRE_BATCH` of the oldest expired keys, so the table drains by itself
at least as fast as keyed commits fill it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, and_, delete, insert, or_, select

from service.catalog import models as m
from service.catalog.repository.common import utcnow

#: Expired keys deleted by one keyed commit (besides its own).
EXPIRE_BATCH = 100


def expire_commit_keys(conn: Connection, table_id: int, principal: str, key: str, cutoff: datetime) -> int:
    """Delete this key if it was made before ``cutoff``, and up to :data:`EXPIRE_BATCH` of the
    oldest keys made before it (found through the ``created_at`` index); returns how many."""
    k = m.CommitKey
    oldest = conn.execute(
        select(k.table_id, k.principal, k.idempotency_key).where(k.created_at < cutoff).order_by(k.created_at)
        .limit(EXPIRE_BATCH)
    ).all()
    rows = {(table_id, principal, key), *((r[0], r[1], r[2]) for r in oldest)}
    match = or_(*(and_(k.table_id == t, k.principal == p, k.idempotency_key == i) for t, p, i in rows))
    return int(conn.execute(delete(k).where(k.created_at < cutoff, match)).rowcount or 0)


def get_commit_key(conn: Connection, table_id: int, principal: str, key: str) -> tuple[str, str] | None:
    row = conn.execute(
        select(m.CommitKey.request_hash, m.CommitKey.result).where(
            m.CommitKey.table_id == table_id,
            m.CommitKey.principal == principal,
            m.CommitKey.idempotency_key == key,
        )
    ).first()
    return None if row is None else (row[0], row[1])


def put_commit_key(
    conn: Connection, table_id: int, principal: str, key: str, request_hash: str, snapshot: int | None, result: str
) -> None:
    conn.execute(
        insert(m.CommitKey).values(
            table_id=table_id,
            principal=principal,
            idempotency_key=key,
            request_hash=request_hash,
            snapshot_id=snapshot,
            result=result,
            created_at=utcnow(),
        )
    )
