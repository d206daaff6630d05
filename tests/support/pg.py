"""PostgreSQL helpers shared by the fixtures and the operations tests."""

from __future__ import annotations


def psycopg_dsn(url: str) -> str:
    """A libpq DSN for a SQLAlchemy-style URL (psycopg connects without SQLAlchemy)."""
    from sqlalchemy import make_url

    u = make_url(url)
    parts = [f"host={u.host or '127.0.0.1'}", f"port={u.port or 5432}", f"dbname={u.database or 'postgres'}"]
    if u.username:
        parts.append(f"user={u.username}")
    if u.password:
        parts.append(f"password={u.password}")
    return " ".join(parts)
