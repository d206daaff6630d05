"""Signed-out dashboard sessions (``shredcat_revoked_session``): a cookie's digest, kept until the
cookie's own expiry. Revoking also deletes the rows whose cookies have expired, so the table holds
at most the sessions signed out within one session lifetime."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Executable, delete, exists, select

from service.catalog import models as m
from service.catalog.repository.common import utcnow


def revoke_session(conn: Connection, digest: str, expires_at: datetime) -> None:
    conn.execute(delete(m.RevokedSession).where(m.RevokedSession.expires_at < utcnow()))
    # Signed out at the same moment elsewhere: revoked either way (both dialects take this form).
    # Each dialect's insert imported by its own catalog only (the other dialect is never loaded).
    values = {"session_digest": digest, "expires_at": expires_at}
    stmt: Executable
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt = pg_insert(m.RevokedSession).values(values).on_conflict_do_nothing()
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(m.RevokedSession).values(values).on_conflict_do_nothing()
    conn.execute(stmt)


def session_revoked(conn: Connection, digest: str) -> bool:
    return bool(conn.execute(select(exists().where(m.RevokedSession.session_digest == digest))).scalar())
