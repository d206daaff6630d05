"""Process-wide settings, read from the environment (prefix ``SHREDCAT_``).

Keep this module small and import-cheap: settings are built lazily by :func:`get_settings`, never at
import time, so a test or a CLI flag can set the environment first. Call
``get_settings.cache_clear()`` after changing the environment in a test.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Role = Literal["reader", "writer", "admin"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHREDCAT_", extra="ignore")

    #: SQLAlchemy URL of the catalog database. The embedded default is a SQLite file in the working
    #: directory; production uses PostgreSQL (``postgresql://...`` is read as psycopg 3).
    database_url: str = "sqlite:///./shredcat.db"

    # --- REST API (service.api) ---------------------------------------------------------------

    #: ``on`` (default): every route but ``/health`` needs a bearer token. ``off``: no checks, every
    #: caller is admin (local use only; the server logs a warning at start).
    auth: Literal["on", "off"] = "on"
    #: Bearer tokens, as a JSON object mapping the **sha256 hex digest** of each token to its role
    #: (``reader``, ``writer`` or ``admin``); the tokens themselves are never stored.
    tokens: dict[str, Role] = Field(default_factory=dict)
    #: Where files registered *by path* may live: local directories (``/data/lake`` or
    #: ``file:///data/lake``) and object-store prefixes (``s3://bucket/lake/``). JSON list. Empty:
    #: registration by path (and of client statistics) is refused.
    warehouse_roots: list[str] = Field(default_factory=list)
    #: Largest request body accepted (bytes).
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    #: Most files in one commit or removal.
    max_files_per_commit: int = Field(default=10_000, ge=1)
    #: Longest IN list in a predicate.
    max_in_list: int = Field(default=10_000, ge=1)
    #: Deepest predicate nesting (and/or/not levels).
    max_predicate_depth: int = Field(default=64, ge=1)
    #: Most terms in one predicate: comparisons (and TRUE/FALSE) joined by AND/OR, a BETWEEN
    #: counting as two. Counted before the predicate is parsed; the planner needs at least one
    #: index probe per term and refuses plans of more than 400 probes.
    max_predicate_terms: int = Field(default=400, ge=1)
    #: Longest SQL predicate (characters), refused before it is parsed (parsing costs ~3 ms per
    #: KiB). Enough for an IN list of 10,000 values of up to ~25 characters each.
    max_predicate_length: int = Field(default=256 * 1024, ge=1)
    #: Largest page of files/candidates/snapshots a list call returns.
    max_page_size: int = Field(default=10_000, ge=1)
    #: Threads extracting statistics of files registered by path (shared by all requests).
    extract_workers: int = Field(default=4, ge=1, le=64)
    #: Python logging level of the server.
    log_level: str = "INFO"
    #: Server log lines: ``json`` (default; one object per line with the request id) or ``text``.
    log_format: Literal["json", "text"] = "json"

    @field_validator("tokens")
    @classmethod
    def _check_token_hashes(cls, v: dict[str, str]) -> dict[str, str]:
        out = {}
        for digest, role in v.items():
            d = digest.strip().lower()
            if len(d) != 64 or any(c not in "0123456789abcdef" for c in d):
                raise ValueError(
                    "SHREDCAT_TOKENS keys must be sha256 hex digests of the tokens (64 hex digits)"
                )
            out[d] = role
        return out


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
