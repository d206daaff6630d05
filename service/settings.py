"""Process-wide settings, read from the environment (prefix ``SHREDCAT_``).

Keep this module small and import-cheap: settings are built lazily by :func:`get_settings`, never at
import time, so a test or a CLI flag can set the environment first. Call
``get_settings.cache_clear()`` after changing the environment in a test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Literal, get_origin

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service import limits
from service.urls import database_url_problem

Role = Literal["reader", "writer", "admin"]
#: The server's log levels (uvicorn's, which Python's logging also knows).
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHREDCAT_", extra="ignore")

    #: SQLAlchemy URL of the catalog database. The embedded default is a SQLite file in the working
    #: directory; production uses PostgreSQL (``postgresql://...`` is read as psycopg 3).
    database_url: str = "sqlite:///./shredcat.db"
    #: PostgreSQL hot standbys of ``database_url`` (JSON list of URLs, default none) that serve the
    #: server's reads (plans, listings, table loads, global stats, dashboard pages), in turn; writes
    #: always go to ``database_url``. See README "Read replicas".
    read_database_urls: list[str] = Field(default_factory=list)
    #: A standby more than this many seconds behind the primary is skipped by reads.
    read_max_lag_s: float = Field(default=5.0, ge=0)
    #: How long a read naming ``min-snapshot-id`` waits for a standby to replay it before the
    #: primary answers it (seconds).
    read_wait_s: float = Field(default=2.0, ge=0, le=60)
    #: How often each server process measures its standbys' lag and retries one that errored (s).
    read_check_interval_s: float = Field(default=1.0, gt=0, le=3600)
    #: Seconds a statement on a standby may run (its ``statement_timeout``); one second later the
    #: client closes a connection whose standby has not answered at all (a frozen server), the
    #: standby is skipped until a measure gets an answer, and the read runs elsewhere. A read on the
    #: primary that has not answered within it fails (503 ``database_unresponsive``); writes wait.
    read_timeout_s: float = Field(default=10.0, gt=0, le=3600)

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
    #: Largest plan request body (bytes), refused (413) before it is read or decoded: a SQL text of
    #: ``max_predicate_length`` characters in any UTF-8 plus the other fields (1 MiB + 64 KiB).
    max_plan_body_bytes: int = Field(default=limits.MAX_PLAN_BODY_BYTES, ge=1024)
    #: Seconds a request body may take to arrive in full (then 408 and the connection is closed).
    #: Routes taking small bodies (forms, plans) get at most 10 s of it.
    body_timeout_seconds: float = Field(default=60.0, gt=0)
    #: Seconds a connection may take to send its request line and headers, from the connection's
    #: start or the request's first byte (then 408 and the connection is closed).
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    #: Seconds an idle keep-alive connection is kept open between requests.
    keepalive_timeout_seconds: int = Field(default=5, ge=1)
    #: Most connections a server process holds open (0: three quarters of its open-file limit).
    #: Past it the oldest connection still waiting for its headers is closed to make room, or,
    #: when every one is busy with a request, the new one gets 503.
    max_connections: int = Field(default=0, ge=0)
    #: Most files in one commit or removal (REST, CLI and library commits alike).
    max_files_per_commit: int = Field(default=limits.MAX_FILES_PER_COMMIT, ge=1)
    #: Most statistics rows (fully shredded paths) of one file in a commit.
    max_stats_rows_per_file: int = Field(default=limits.MAX_STATS_ROWS_PER_FILE, ge=1)
    #: Longest ``min_value``/``max_value`` of a statistics row (characters of a string bound, bytes
    #: of a blob bound). DuckLake truncates string bounds to 256 bytes, so real files stay far below.
    max_bound_chars: int = Field(default=limits.MAX_BOUND_CHARS, ge=1)
    #: Longest ``extra_stats`` of a statistics row (characters).
    max_extra_stats_chars: int = Field(default=limits.MAX_EXTRA_STATS_CHARS, ge=1)
    #: Longest IN list in a predicate.
    max_in_list: int = Field(default=limits.MAX_IN_LIST, ge=1)
    #: Deepest predicate nesting (and/or/not levels).
    max_predicate_depth: int = Field(default=limits.MAX_PREDICATE_DEPTH, ge=1)
    #: Most terms in one predicate: comparisons (and TRUE/FALSE) joined by AND/OR, a BETWEEN
    #: counting as two. Counted before the predicate is parsed; the planner needs at least one
    #: index probe per term and refuses plans of more than 400 probes. Also the most binary
    #: arithmetic operators (``+ - * / %``) a SQL predicate may hold (pruning uses none).
    max_predicate_terms: int = Field(default=limits.MAX_PREDICATE_TERMS, ge=1)
    #: Most steps of one path written in a SQL predicate (``v:a.b[0]``, ``s.a.b``), counted on
    #: the raw text before it is parsed; all its paths together may have four times
    #: ``max_predicate_terms``. At most 256: a column reference is resolved one recursion per step.
    max_path_depth: int = Field(default=limits.MAX_PATH_DEPTH, ge=1, le=256)
    #: Longest SQL predicate (characters), refused before it is parsed (parsing costs ~3 ms per
    #: KiB). Enough for an IN list of 10,000 values of up to ~25 characters each.
    max_predicate_length: int = Field(default=limits.MAX_PREDICATE_LENGTH, ge=1)
    #: Seconds a commit's idempotency key replays its result; older keys are deleted by later
    #: keyed commits (a retried request after that commits anew).
    idempotency_retention_seconds: int = Field(default=limits.IDEMPOTENCY_RETENTION_SECONDS, ge=60)
    #: Largest page of files/candidates/snapshots a list call returns.
    max_page_size: int = Field(default=limits.MAX_PAGE_SIZE, ge=1)
    #: Longest Parquet footer read from a file registered by path (or by ``shredcat stats`` and
    #: ``shredcat register``); checked from the file's last 8 bytes before the footer is read. The
    #: default is 16 MiB.
    max_footer_bytes: int = Field(default=limits.MAX_FOOTER_BYTES, ge=1024)
    #: Per file extracted (by path, ``shredcat stats``/``register``/``verify``): most bytes of column
    #: data decompressed (past it, the facts still needing data are unknown), deepest schema, most
    #: leaf columns and most ``typed_value`` leaves (over those three: the file is refused, 413).
    max_decompressed_bytes: int = Field(default=limits.MAX_DECOMPRESSED_BYTES, ge=0)
    max_schema_depth: int = Field(default=limits.MAX_SCHEMA_DEPTH, ge=1)
    max_schema_leaves: int = Field(default=limits.MAX_SCHEMA_LEAVES, ge=1)
    max_shredded_paths: int = Field(default=limits.MAX_SHREDDED_PATHS, ge=0)
    #: Threads extracting statistics of files registered by path (shared by all requests).
    extract_workers: int = Field(default=4, ge=1, le=64)
    #: Requests in flight to an object store per process (footers of ``s3://`` files are fetched
    #: this many at a time, over reused connections, by the CLI, the REST commit and the Spark
    #: helpers alike). Local files are not affected.
    object_store_concurrency: int = Field(default=64, ge=1, le=1024)
    #: Bytes read from the end of a remote file by its first (and usually only) request: the
    #: footer and the object size come in one ranged GET; a second request is made only for a
    #: footer larger than this or a column chunk the page scan needs.
    object_store_tail_bytes: int = Field(default=64 * 1024, ge=16, le=64 * 1024 * 1024)
    #: Seconds to wait for an object store's connection or response before giving up on it.
    object_store_timeout: float = Field(default=30.0, gt=0)
    #: PostgreSQL connections each server process keeps for its request threads (no overflow: a
    #: request beyond them waits for a free one, so a steady load opens no new sessions).
    db_pool_size: int = Field(default=16, ge=1, le=200)
    #: Plan requests each server process runs at once (the rest wait for a turn, off any thread).
    #: A plan is a few ms of Python holding the GIL between short database waits: more at once only
    #: contend for it (32 clients on one worker: 2.5 ms of CPU per plan with 40 at once, 2.3 ms with
    #: 8, and p99 144 -> 104 ms; medians of 3 runs). Capped by ``db_pool_size``.
    plan_concurrency: int = Field(default=8, ge=1, le=200)
    #: Keys that sign dashboard session cookies, as a JSON list: the first signs new sessions, all
    #: verify (rotate by putting a new key first and dropping the old one after a session lifetime).
    #: Each at least 32 characters. Empty: ``shredcat serve`` makes one random key per start
    #: (shared by its workers) and warns that sessions then end with every restart.
    session_secrets: list[SecretStr] = Field(default_factory=list)
    #: Failed dashboard logins allowed per client address in a minute (then 429 with Retry-After).
    login_failures_per_address: int = Field(default=10, ge=1)
    #: Failed dashboard logins allowed from all addresses together in a minute.
    login_failures_total: int = Field(default=100, ge=1)
    #: Reverse proxies whose ``X-Forwarded-For``/``X-Forwarded-Proto`` headers are believed
    #: (uvicorn's ``forwarded_allow_ips``: comma-separated addresses or networks, ``*`` for any).
    #: Empty (default): the headers are ignored. Behind a TLS-terminating proxy, list it here so that
    #: the client's address is the real one and session cookies get the ``Secure`` flag.
    forwarded_allow_ips: str = ""
    #: Python logging level of the server.
    log_level: str = "INFO"
    #: Server log lines: ``json`` (default; one object per line with the request id) or ``text``.
    log_format: Literal["json", "text"] = "json"

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, v: str) -> str:
        problem = database_url_problem(v)
        if problem is not None:
            raise ValueError(problem)
        return v

    @field_validator("read_database_urls")
    @classmethod
    def _check_read_database_urls(cls, v: list[str], info: ValidationInfo) -> list[str]:
        for url in v:
            if url.split("://", 1)[0].split("+", 1)[0] not in ("postgresql", "postgres"):
                raise ValueError("each must be a postgresql://... URL of a hot standby")
        primary = str(info.data.get("database_url", ""))
        if v and not primary.startswith(("postgresql", "postgres")):
            raise ValueError("hot standbys need a PostgreSQL SHREDCAT_DATABASE_URL (their primary)")
        return v

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, v: str) -> str:
        if v.upper() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(x.lower() for x in LOG_LEVELS)}")
        return v

    @field_validator("session_secrets")
    @classmethod
    def _check_session_secrets(cls, v: list[SecretStr]) -> list[SecretStr]:
        if any(len(x.get_secret_value()) < 32 for x in v):
            raise ValueError("SHREDCAT_SESSION_SECRETS entries must be at least 32 characters long")
        return v

    @property
    def predicate_limits(self) -> limits.PredicateLimits:
        return limits.PredicateLimits(
            max_depth=self.max_predicate_depth,
            max_in_list=self.max_in_list,
            max_terms=self.max_predicate_terms,
            max_length=self.max_predicate_length,
            max_path_depth=self.max_path_depth,
        )

    @property
    def file_limits(self) -> limits.FileLimits:
        return limits.FileLimits(
            max_decompressed_bytes=self.max_decompressed_bytes,
            max_schema_depth=self.max_schema_depth,
            max_schema_leaves=self.max_schema_leaves,
            max_shredded_paths=self.max_shredded_paths,
        )

    @property
    def commit_limits(self) -> limits.Limits:
        return limits.Limits(
            max_files_per_commit=self.max_files_per_commit,
            max_stats_rows_per_file=self.max_stats_rows_per_file,
            max_bound_chars=self.max_bound_chars,
            max_extra_stats_chars=self.max_extra_stats_chars,
            max_page_size=self.max_page_size,
            idempotency_retention_seconds=self.idempotency_retention_seconds,
        )

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
    """The environment's settings; a bad ``SHREDCAT_*`` value is a SettingsError naming each bad
    variable (not echoing its value, which may be a token pasted by mistake)."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError as SourceError

    from service.errors import SettingsError

    try:
        return Settings()
    except ValidationError as e:
        why = "; ".join(
            f"SHREDCAT_{'.'.join(map(str, x['loc'])).upper()}: {x['msg']}" for x in e.errors()
        )
        raise SettingsError(f"invalid settings: {why}") from None
    except SourceError as e:
        # pydantic-settings decodes list and mapping variables as JSON before validating them and
        # raises on a value that is not JSON (`SHREDCAT_WAREHOUSE_ROOTS=/data/lake`), a traceback
        # naming the field, not the variable: name the variable(s) instead.
        raise SettingsError(f"invalid settings: {_not_json(os.environ) or e}") from None


def _not_json(environ: Mapping[str, str]) -> str:
    """The JSON-valued settings whose variable holds no JSON, in the form of the other errors."""
    bad = []
    for name, field in Settings.model_fields.items():
        origin = get_origin(field.annotation)
        kind = "a JSON list" if origin is list else "a JSON object" if origin is dict else None
        variable = f"SHREDCAT_{name.upper()}"
        # Variable names are matched case-insensitively, as pydantic-settings matches them.
        values = [v for k, v in environ.items() if k.upper() == variable]
        if kind is None or not values:
            continue
        try:
            json.loads(values[-1])
        except ValueError:
            bad.append(f"{variable}: must be {kind} (not JSON)")
    return "; ".join(bad)
