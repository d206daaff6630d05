"""Shared helpers of the catalog commands (imported only when one of them runs)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from service import limits
from service.errors import BadInputError

if TYPE_CHECKING:
    from service.catalog.service import Catalog
    from service.errors import ShredcatError


def add_database_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database-url", default=None, help="catalog database (default: SHREDCAT_DATABASE_URL, a SQLite file)")


def add_min_snapshot_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--min-snapshot-id",
        type=int,
        default=None,
        metavar="N",
        help="read from a hot standby (SHREDCAT_READ_DATABASE_URLS) only once it holds snapshot N (a commit's "
        "answer), waiting up to SHREDCAT_READ_WAIT_S, else from the primary",
    )


def refused(command: str, e: ShredcatError) -> int:
    """Print a read command's error as its one line; its exit status: 2 for what the user asked
    (a bad ``--table``, an unknown table or snapshot, a limit: a 4xx over REST), 1 for the
    catalog failing (unreachable, not migrated: a 5xx)."""
    print(f"shredcat {command}: {e.message}", file=sys.stderr)
    return 2 if e.http_status < 500 else 1


def split_table(name: str) -> tuple[str, str]:
    ns, dot, table = name.partition(".")
    if not dot or not ns or not table or "." in table:
        raise BadInputError(f"--table must be NAMESPACE.TABLE, got {name!r}")
    return ns, table


#: ``Settings.database_url``'s environment variable and default.
DATABASE_URL_VARIABLE = "SHREDCAT_DATABASE_URL"
DEFAULT_DATABASE_URL = "sqlite:///./shredcat.db"
#: The settings' defaults of :class:`~service.limits.Limits` (field name -> value).
DEFAULT_LIMITS = {
    "max_files_per_commit": limits.MAX_FILES_PER_COMMIT,
    "max_stats_rows_per_file": limits.MAX_STATS_ROWS_PER_FILE,
    "max_bound_chars": limits.MAX_BOUND_CHARS,
    "max_extra_stats_chars": limits.MAX_EXTRA_STATS_CHARS,
    "max_page_size": limits.MAX_PAGE_SIZE,
}


def defaults_only() -> bool:
    """True when no ``SHREDCAT_`` variable but the URL's is set: every other setting is its default."""
    names = [k for k in os.environ if k.upper().startswith("SHREDCAT_")]
    # pydantic-settings matches variable names case-insensitively: so does this check.
    return not names or (len(names) == 1 and names[0].upper() == DATABASE_URL_VARIABLE)


def predicate_limits() -> limits.PredicateLimits:
    """The predicate limits in force; pydantic-settings is imported only when a setting may
    differ from its default."""
    if defaults_only():
        return limits.PredicateLimits()
    from service.settings import get_settings

    return get_settings().predicate_limits


def _environment_url() -> str:
    return next((v for k, v in os.environ.items() if k.upper() == DATABASE_URL_VARIABLE), DEFAULT_DATABASE_URL)


def check_settings(args: argparse.Namespace) -> None:
    """SettingsError (the command's exit 2) for a bad ``SHREDCAT_*`` value or ``--database-url``,
    before the command runs: every setting through pydantic-settings when any may differ from its
    default, else (the fast path) the URL only."""
    from service.errors import SettingsError
    from service.urls import database_url_problem

    flag = getattr(args, "database_url", None)
    if flag is not None and (problem := database_url_problem(flag)) is not None:
        raise SettingsError(f"--database-url {problem}")
    if not defaults_only():
        from service.settings import get_settings

        get_settings()
    elif flag is None and (problem := database_url_problem(_environment_url())) is not None:
        raise SettingsError(f"invalid settings: {DATABASE_URL_VARIABLE}: {problem}")


def catalog_settings(database_url: str | None) -> tuple[str, limits.Limits]:
    """The catalog's URL (``database_url`` if given, else the settings') and the settings' limits.

    With no ``SHREDCAT_`` variable in the environment but the URL's, every setting is its default
    and pydantic-settings (a quarter of a second of start-up, more than a read command's own work)
    is not imported; otherwise :func:`service.settings.get_settings` reads and validates them all,
    as the server does. ``tests/cli/test_imports.py`` keeps the defaults here equal to the settings'.
    """
    if defaults_only():
        return database_url or _environment_url(), limits.Limits(**DEFAULT_LIMITS)
    from service.settings import get_settings

    settings = get_settings()
    return database_url or settings.database_url, settings.commit_limits


def open_catalog(args: argparse.Namespace) -> Catalog:
    """The catalog at --database-url or SHREDCAT_DATABASE_URL.

    The embedded SQLite default is created and migrated on first use, so the commands work with
    no set-up; a server database (PostgreSQL) is migrated only by ``shredcat migrate``. Otherwise
    the only schema check is a read of the revision (Alembic itself is imported only to migrate).
    The catalog owns its engine: closing it (``with``) closes the connections.
    """
    from service.catalog.db import current_revision, schema_revision_error, upgrade_to_head
    from service.catalog.service import Catalog

    url, limits = catalog_settings(args.database_url)
    catalog = Catalog(url, limits=limits)
    engine = catalog.engine
    try:
        revision = current_revision(engine)
        if engine.dialect.name == "sqlite" and revision is None:
            upgrade_to_head(engine)  # the embedded default, created on first use
        elif (error := schema_revision_error(revision)) is not None:
            raise error
    except BaseException:
        catalog.close()
        raise
    return catalog


def open_created_catalog(args: argparse.Namespace, opened: ExitStack) -> Catalog:
    """:func:`open_catalog` (in ``opened``) for an embedded SQLite catalog a writing command found
    missing: created and migrated now, and removed again (with its ``-wal``, ``-shm`` and
    ``-journal`` files) when the command then fails, so that a failed command leaves no state. Only
    a file this call creates, and only while none of its tables holds a row: another process may
    have created it, or committed to it, meanwhile."""
    from service.catalog.db import normalize_url

    url = normalize_url(catalog_settings(args.database_url)[0])
    path = url.database
    if url.get_backend_name() == "sqlite" and path not in (None, "", ":memory:") and not os.path.exists(path):

        def remove_on_failure(exc_type: type[BaseException] | None, *_: object) -> bool:
            if exc_type is not None:
                _remove_if_empty(str(path))
            return False  # the failure goes on

        # Pushed first: it runs after the catalog (entered next) has closed its connections.
        opened.push(remove_on_failure)
    return opened.enter_context(open_catalog(args))


def _remove_if_empty(path: str) -> None:
    """Remove the SQLite catalog at ``path`` and its side files when it holds nothing but its
    schema (the migrations' revision); a file that cannot be read now (locked by another process)
    is left as it is."""
    import sqlite3
    from contextlib import closing, suppress
    from pathlib import Path

    try:
        with closing(sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True)) as c:
            tables = c.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name != 'alembic_version'"
            ).fetchall()
            if any(c.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone() for (name,) in tables):
                return
    except sqlite3.Error:
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        with suppress(FileNotFoundError):
            os.remove(path + suffix)


@contextmanager
def read_catalog(args: argparse.Namespace) -> Iterator[Catalog]:
    """:func:`open_catalog` for a read-only command: its reads go to the hot standbys of
    ``SHREDCAT_READ_DATABASE_URLS`` as the server's do (:mod:`service.catalog.replicas`), unless
    ``--database-url`` names another database than the settings' (whose standbys those are). The
    schema check reads the primary."""
    catalog = open_catalog(args)
    if not defaults_only():
        from service.catalog.replicas import ReadRouter
        from service.settings import get_settings

        settings = get_settings()
        if settings.read_database_urls and args.database_url in (None, settings.database_url):
            catalog.reads = ReadRouter.from_settings(catalog.engine, settings, concurrency=1)
    try:
        yield catalog
    finally:
        catalog.reads.dispose()
        catalog.close()


def normalize_source(path: str) -> str:
    """The catalog's one form of a file's path (:func:`service.storage.objects.stored_path`), so
    that one file has one catalog path whichever way it is named."""
    from service.storage.objects import stored_path

    return stored_path(path)


class Progress:
    """A progress line on stderr: redrawn on a terminal, a line every 10 % otherwise."""

    def __init__(self, total: int, label: str) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.tty = sys.stderr.isatty()
        self._last_decile = -1

    def step(self, n: int = 1) -> None:
        self.done += n
        if self.total < 20:
            return
        if self.tty:
            sys.stderr.write(f"\r{self.label} {self.done}/{self.total}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        else:
            decile = self.done * 10 // self.total
            if decile != self._last_decile:
                self._last_decile = decile
                print(f"{self.label} {self.done}/{self.total}", file=sys.stderr)
