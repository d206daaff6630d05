"""``shredcat stats PATH... [--json]``: the extractor's rows, one JSON object per line.

Contract (other tools rely on it): one line per fully shredded path with keys file, column,
variant_path, shredded_type, column_size_bytes, value_count, null_count, min_value, max_value,
contains_nan, extra_stats; absent values are JSON null. A directory or prefix stands for its data
files (:func:`service.storage.list_data_files`), each printed under its own path. Exit 0 on
success; otherwise non-zero with one line on stderr per bad file or listing, the good files still
printed.

``--columns``: instead, one line per plain column (top-level primitive columns and struct leaves,
dotted ``a.b``) with keys file, column, column_size_bytes, value_count, null_count, min_value,
max_value, contains_nan, extra_stats: DuckLake's ``ducklake_file_column_stats`` row.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="Parquet files, directories or prefixes (local paths or object-store URIs such as s3://bucket/lake/; a URI ending in / "
        "or not in .parquet is a prefix): a directory means its data files, listed as Spark does",
    )
    p.add_argument("--json", action="store_true", help="JSON lines output (the default and only format)")
    p.add_argument(
        "--columns",
        action="store_true",
        help="print the plain columns' statistics (DuckLake's ducklake_file_column_stats rows) "
        "instead of the Variant paths'",
    )


def run(args: argparse.Namespace) -> int:
    from service.errors import ShredcatError
    from service.settings import get_settings
    from service.stats.batch import extract_many
    from service.storage import expand_sources

    settings = get_settings()
    failed = 0
    out = sys.stdout
    paths: list[str] = []
    for given in args.paths:
        try:
            paths.extend(expand_sources([given]))
        except ShredcatError as e:
            failed += 1
            print(f"shredcat: {e.message}", file=sys.stderr)
    # Remote files are read concurrently (SHREDCAT_OBJECT_STORE_CONCURRENCY), printed in order.
    for path, fs in extract_many(
        dict.fromkeys(paths), max_footer_bytes=settings.max_footer_bytes, limits=settings.file_limits
    ):
        if isinstance(fs, ShredcatError):
            failed += 1
            print(f"shredcat: {fs.message}", file=sys.stderr)
            continue
        rows = fs.columns if args.columns else fs.paths
        for ps in rows:
            row = {"file": path, "column": ps.column, **ps.ducklake_row()}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
    return 1 if failed else 0
