"""The catalog's storage layer: with :mod:`service.catalog.planner` (a compiled stats condition of
:mod:`service.pruning` translated to SQL) the only code that writes SQL. Every function takes a
Connection inside a transaction opened (and retried) by :mod:`service.catalog.service`; nothing
here commits.

- :mod:`.common`: table aliases, chunking, timestamps, the live-at filter, :func:`keyset_page`.
- :mod:`.tables`: snapshots, namespaces and tables, and the per-table writer lock.
- :mod:`.commit`: inserting files and stats rows (COPY on PostgreSQL), ending files and tables.
- :mod:`.path_stats`: the path dictionary's counters and widths, global stats' writes and rebuild.
- :mod:`.objects`: each file's fully shredded objects (absent fields), as shapes.
- :mod:`.reads`: files, stats, snapshots, coverage, global stats and the admin pages' reads.
- :mod:`.idempotency`: commit idempotency keys.
- :mod:`.sessions`: signed-out dashboard sessions.

The write side (:mod:`.commit`, :mod:`.idempotency`, :mod:`.path_stats`) is imported on first use of one of its
names here (:func:`__getattr__`): the read-only commands never load it.
"""

from typing import TYPE_CHECKING

from service.catalog.repository.common import chunks, keyset_page, utcnow
from service.catalog.repository.logins import lock_login_failures, newest_login_failures, record_login_failure
from service.catalog.repository.objects import file_objects, objects_for_files
from service.catalog.repository.reads import (
    FileSort,
    count_files,
    file_bounds,
    file_bounds_at_min_keys,
    file_bounds_without_min_key,
    file_ids_by_path,
    file_stats,
    files_by_path,
    files_removed_at,
    files_without_column_rows,
    iter_file_stats,
    list_files,
    list_files_sorted,
    list_snapshots,
    live_file,
    live_path_rows,
    path_coverage_rows,
    path_types,
    read_global_json,
    recent_snapshots,
    sample_file_bounds,
    shredded_paths,
    shredded_types,
    snapshot_exists,
    snapshot_info,
    sorted_keys,
    stats_for_files,
)
from service.catalog.repository.sessions import revoke_session, session_revoked
from service.catalog.repository.tables import (
    ColumnRow,
    TableCache,
    TableRow,
    add_file_columns,
    add_variant_columns,
    columns_at,
    count_live_tables,
    drop_namespace,
    end_columns,
    find_namespace,
    find_table,
    insert_namespace,
    insert_table,
    list_namespaces,
    new_snapshot,
    order_columns_as_created,
    partition_types_at,
    partition_types_of,
    require_table,
    table_infos,
)
from service.lazy import lazy_exports

__all__ = [
    "ColumnRow",
    "FileSort",
    "LiveFile",
    "TableCache",
    "TableRow",
    "add_column_rows",
    "add_file_columns",
    "add_files",
    "add_variant_columns",
    "chunks",
    "columns_at",
    "count_files",
    "count_live_tables",
    "drop_namespace",
    "drop_table",
    "end_columns",
    "end_files",
    "expire_commit_keys",
    "file_bounds",
    "file_bounds_at_min_keys",
    "file_bounds_without_min_key",
    "file_ids_by_path",
    "file_objects",
    "file_stats",
    "files_by_path",
    "files_removed_at",
    "files_without_column_rows",
    "find_namespace",
    "find_table",
    "get_commit_key",
    "insert_namespace",
    "insert_table",
    "iter_file_stats",
    "keyset_page",
    "list_files",
    "list_files_sorted",
    "list_namespaces",
    "list_snapshots",
    "live_file",
    "live_files_by_path",
    "live_path_rows",
    "lock_login_failures",
    "new_snapshot",
    "newest_login_failures",
    "objects_for_files",
    "order_columns_as_created",
    "partition_types_at",
    "partition_types_of",
    "path_coverage_rows",
    "path_types",
    "put_commit_key",
    "read_global_json",
    "rebuild_global",
    "recent_snapshots",
    "record_login_failure",
    "require_table",
    "revoke_session",
    "sample_file_bounds",
    "session_revoked",
    "shredded_paths",
    "shredded_types",
    "snapshot_exists",
    "snapshot_info",
    "sorted_keys",
    "stats_for_files",
    "table_infos",
    "utcnow",
    "write_global_json",
]

#: The write side's names, by the module that defines them.
_WRITE_SIDE = {
    **dict.fromkeys(("LiveFile", "add_column_rows", "add_files", "drop_table", "end_files", "live_files_by_path"), "commit"),
    **dict.fromkeys(("expire_commit_keys", "get_commit_key", "put_commit_key"), "idempotency"),
    **dict.fromkeys(("rebuild_global", "write_global_json"), "path_stats"),
}

if TYPE_CHECKING:
    from service.catalog.repository.commit import (
        LiveFile,
        add_column_rows,
        add_files,
        drop_table,
        end_files,
        live_files_by_path,
    )
    from service.catalog.repository.idempotency import expire_commit_keys, get_commit_key, put_commit_key
    from service.catalog.repository.path_stats import rebuild_global, write_global_json


__getattr__ = lazy_exports(__name__, _WRITE_SIDE)
