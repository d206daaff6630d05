"""The form of a catalog database URL, checked the same way by the settings and by the command
line before anything connects (import-cheap: the CLI checks it on its fast path, where neither
pydantic nor SQLAlchemy is imported)."""

from __future__ import annotations


def database_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a catalog database URL, or None. Only the backend is checked here;
    SQLAlchemy parses the rest when the catalog opens."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme.split("+", 1)[0] not in ("sqlite", "postgresql", "postgres"):
        return "must be a sqlite:///PATH or postgresql://... URL"
    return None
