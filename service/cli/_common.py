"""Shared helpers of the catalog commands (imported only when one of them runs)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from service.errors import BadInputError

if TYPE_CHECKING:
    from service.catalog.service import Catalog


def add_database_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database-url", default=None, help="catalog database (default: SHREDCAT_DATABASE_URL, a SQLite file)")


def split_table(name: str) -> tuple[str, str]:
    ns, dot, table = name.partition(".")
    if not dot or not ns or not table or "." in table:
        raise BadInputError(f"--table must be NAMESPACE.TABLE, got {name!r}")
    return ns, table


def open_catalog(args: argparse.Namespace) -> Catalog:
    """The catalog at --database-url or SHREDCAT_DATABASE_URL.

    The embedded SQLite default is created and migrated on first use, so the commands work with
    no set-up; a server database (PostgreSQL) is migrated only by ``shredcat migrate``.
    """
    from service.catalog.db import current_revision, make_engine, upgrade_to_head
    from service.catalog.service import Catalog
    from service.settings import get_settings

    url = args.database_url or get_settings().database_url
    engine = make_engine(url)
    if engine.dialect.name == "sqlite" and current_revision(engine) is None:
        upgrade_to_head(engine)
    return Catalog(engine)


def normalize_source(path: str) -> str:
    """Local paths are stored absolute (URIs as given), so one file has one catalog path."""
    if "://" in path:
        return path
    return os.path.abspath(path)


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
