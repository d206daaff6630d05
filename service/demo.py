"""``make demo``: write real shredded Parquet files, then extract their Variant statistics.

Runs on the embedded default (no server, no external database).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def write_files(out: Path, n_files: int = 8) -> list[Path]:
    import duckdb

    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    paths = []
    for i in range(n_files):
        p = out / f"events-{i:03d}.parquet"
        con.execute(
            f"""COPY (SELECT {{'user': {{'id': ({i} * 1000 + r)::BIGINT, 'country': ['fr','de','us'][r % 3 + 1]}},
                            'amount': (r * 0.5)::DOUBLE,
                            'at': TIMESTAMP '2024-01-01' + INTERVAL ({i}) DAY + INTERVAL (r) SECOND}}::VARIANT AS v
                    FROM range(1000) t(r)) TO '{p}' (FORMAT parquet)"""
        )
        paths.append(p)
    return paths


def main() -> int:
    from service.stats.extract import extract_file

    out = Path("demo-data")
    paths = write_files(out)
    print(f"wrote {len(paths)} shredded Parquet files with DuckDB into {out}/")
    for p in paths[:2]:
        fs = extract_file(str(p))
        print(f"\n{p}: {fs.record_count} rows, Variant columns {list(fs.variant_columns)}")
        for ps in fs.paths:
            print("  " + json.dumps({"column": ps.column, **ps.ducklake_row()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
