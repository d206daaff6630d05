"""Failed dashboard sign-ins (``shredcat_login_failure``), read and written in the one transaction
that decides an attempt (:meth:`service.catalog.Catalog.login_attempt`). Writing one deletes those
older than the window, so the table holds at most the failures of one window."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, delete, insert, select

from service.catalog import models as m

F = m.LoginFailure


def lock_login_failures(conn: Connection) -> None:
    """Serialize sign-in attempts until the transaction ends, so that a check and the count of
    its failure cannot interleave with another attempt's (both would pass a limit of one left).
    PostgreSQL: a table lock only these transactions take (plain reads are not blocked); SQLite:
    writers already hold the database's write lock from ``BEGIN IMMEDIATE``."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("LOCK TABLE shredcat_login_failure IN SHARE ROW EXCLUSIVE MODE")


def newest_login_failures(conn: Connection, since: datetime, limit: int, digest: str | None = None) -> list[datetime]:
    """The ``limit`` newest failures after ``since`` (of the address with this digest, else of
    all), newest first."""
    q = select(F.failed_at).where(F.failed_at > since)
    if digest is not None:
        q = q.where(F.address_digest == digest)
    rows = conn.execute(q.order_by(F.failed_at.desc()).limit(limit)).scalars()
    return [t if t.tzinfo is not None else t.replace(tzinfo=UTC) for t in rows]  # SQLite's are naive (UTC)


def record_login_failure(conn: Connection, digest: str, at: datetime, *, forget_before: datetime) -> None:
    conn.execute(delete(F).where(F.failed_at <= forget_before))
    conn.execute(insert(F).values(address_digest=digest, failed_at=at))
