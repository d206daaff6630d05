"""``shredcat migrate [--database-url URL] [--revision REV | --downgrade REV]``: create or upgrade
the catalog schema (Alembic migrations in ``migrations/``), or take it back to an older revision.
Idempotent: an up-to-date database is left as it is."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--database-url", default=None, help="catalog database (default: SHREDCAT_DATABASE_URL)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--revision", default="head", help="upgrade to this revision (default: head)")
    how.add_argument(
        "--downgrade",
        default=None,
        metavar="REV",
        help="downgrade to this older revision (it may drop what newer revisions added: back up first)",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from alembic.util import CommandError

    from service.catalog.db import (
        current_revision,
        downgrade,
        known_revisions,
        schema_revision_error,
        upgrade_to_head,
    )
    from service.errors import ShredcatError
    from service.settings import get_settings

    def fail(message: str, status: int = 1) -> int:
        print(f"shredcat migrate: {message}", file=sys.stderr)
        return status

    url = args.database_url or get_settings().database_url
    known = known_revisions()
    target = args.downgrade if args.downgrade is not None else args.revision
    order = {rev: i for i, rev in enumerate(["base", *known])}
    if args.downgrade == "head":
        return fail("--downgrade takes an older revision, not head", 2)
    if target != "head" and target not in order:
        return fail(f"unknown revision {target!r}: this shredcat knows {', '.join(known)} (and head)", 2)
    try:
        current = current_revision(url)
        if current is not None and current not in order:
            newer = schema_revision_error(current)
            assert newer is not None
            return fail(newer.message)
        at = order["base"] if current is None else order[current]
        if args.downgrade is not None:
            if order[target] > at:
                return fail(f"the catalog is at revision {current or 'base'}, before {target}: nothing to downgrade")
            downgrade(url, target)
        else:
            if target != "head" and order[target] < at:
                return fail(
                    f"the catalog is already at revision {current}, past {target}: migrate only upgrades "
                    f"(to go back: shredcat migrate --downgrade {target}, after a backup)"
                )
            upgrade_to_head(url, target)
        rev = current_revision(url)
    except ShredcatError as e:
        return fail(e.message)
    except CommandError as e:
        return fail(str(e))
    print(f"catalog schema at revision {rev or 'base'}")
    return 0
