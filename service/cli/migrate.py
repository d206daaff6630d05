"""``shredcat migrate [--database-url URL] [--revision REV]``: create or upgrade the catalog schema
(Alembic migrations in ``migrations/``). Idempotent: an up-to-date database is left as it is."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database-url", default=None, help="catalog database (default: SHREDCAT_DATABASE_URL)")
    p.add_argument("--revision", default="head", help="target revision (default: head)")


def run(args: argparse.Namespace) -> int:
    import sys

    from service.catalog.db import current_revision, upgrade_to_head
    from service.errors import ShredcatError
    from service.settings import get_settings

    url = args.database_url or get_settings().database_url
    try:
        upgrade_to_head(url, args.revision)
        rev = current_revision(url)
    except ShredcatError as e:
        print(f"shredcat migrate: {e.message}", file=sys.stderr)
        return 1
    print(f"catalog schema at revision {rev}")
    return 0
