"""Commit idempotency keys: the request hash and result stored under a key, written in the
commit's own transaction. Keys are scoped per table and per principal (the caller's identity),
so two writers never see each other's results.
"""

from __future__ import annotations

from sqlalchemy import Connection, insert, select

from service.catalog import models as m
from service.catalog.repository.common import utcnow


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
