"""Creating a table, by ``Catalog.create_table`` or by a commit that creates its missing table in
its own transaction, and the one policy of the latter (:func:`create_columns`): which commits
create a table, with which Variant columns, and who may."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from service.catalog import repository as repo
from service.catalog.validate import check_name, check_object_name
from service.errors import AlreadyExistsError, BadInputError, ConflictError, ForbiddenError, NotFoundError
from service.stats.model import FileStats, union_variant_columns


def create_columns(files: Sequence[FileStats], create_table: bool | Sequence[str]) -> Sequence[str] | None:
    """The Variant columns a commit of ``files`` creates its missing table with, or None when it
    creates none: only a commit that adds files creates a table (a removal has nothing to create
    it for); ``create_table`` True takes the union of the files' Variant columns, a sequence
    declares them, False never creates."""
    if not files or create_table is False:
        return None
    return union_variant_columns(files) if create_table is True else tuple(create_table)


def check_variant_columns(variant_columns: Sequence[str]) -> tuple[str, ...]:
    cols = tuple(variant_columns)
    for c in cols:
        check_name("column", c)
    if len(set(cols)) != len(cols):
        raise BadInputError(f"duplicate Variant column in {list(cols)}")
    return cols


def creation_forbidden(namespace: str, table: str) -> ForbiddenError:
    """A commit asked to create its missing table by a caller that may not create tables."""
    return ForbiddenError(
        f"table {namespace}.{table} does not exist, and creating it (create-if-missing) needs the admin role",
        details={"table": f"{namespace}.{table}"},
    )


def table_for_commit(
    conn: Connection, namespace: str, table: str, creating: Sequence[str], *, may_create: bool
) -> repo.TableRow:
    """The table a commit with ``create_with`` goes into, locked: created when missing (if
    ``may_create``, else ForbiddenError)."""
    for _ in range(3):
        if repo.find_table(conn, namespace, table) is None:
            if not may_create:
                raise creation_forbidden(namespace, table)
            # Only when missing: creating locks the namespace row, which would serialize every
            # registration into the namespace's tables for the length of its commit (and the
            # names are checked as a new table's: an existing table keeps the name it has).
            check_object_name("namespace", namespace)
            check_object_name("table", table)
            insert_table(conn, namespace, table, creating, (), None, if_not_exists=True)
        t = repo.find_table(conn, namespace, table, lock=True)
        if t is not None:
            return t
        # Dropped while this commit waited for its lock: create it again (a new statement sees
        # the drop, which has committed).
    raise ConflictError(
        f"table {namespace}.{table} was dropped again and again while this commit created it; retry",
        details={"table": f"{namespace}.{table}"},
    )


def insert_table(
    conn: Connection,
    namespace: str,
    name: str,
    cols: Sequence[str],
    parts: Sequence[tuple[str, str]],
    location: str | None,
    *,
    if_not_exists: bool,
    create_namespace: bool = True,
) -> int:
    """Create the table (and its namespace, unless ``create_namespace=False``) in ``conn``'s
    transaction; its id. An existing table is AlreadyExistsError unless ``if_not_exists``."""
    ns = repo.find_namespace(conn, namespace, lock=True)  # serializes with drop_namespace
    if ns is None:
        if not create_namespace:
            raise NotFoundError(f"namespace {namespace} does not exist")
        ns = repo.insert_namespace(conn, namespace)
    existing = repo.find_table(conn, namespace, name)
    if existing is not None:
        if if_not_exists:
            return existing.table_id
        raise AlreadyExistsError(f"table {namespace}.{name} already exists")
    return repo.insert_table(conn, ns, name, cols, partition_columns=parts, location=location)
