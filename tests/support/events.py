"""A small shredded events table written by DuckDB: five files with a type conflict and a path
shredded in one file only (the dashboard's pages and the catalog's admin reads test on it)."""

from __future__ import annotations

from pathlib import Path


def write_events(path: Path, n: int, offset: int, *, name_as_int: bool = False, extra: bool = False) -> Path:
    """A DuckDB-shredded file: v = {id: bigint, name: varchar (bigint with ``name_as_int``),
    score: double, ts: timestamp, day: date[, extra: int]}, ``n`` rows from ``offset``."""
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    name = "(r + 7)::BIGINT" if name_as_int else f"'n' || lpad((r + {offset})::VARCHAR, 6, '0')"
    more = ", 'extra': (r % 5)::INTEGER" if extra else ""
    con = duckdb.connect()
    try:
        con.execute(
            f"""COPY (SELECT {{'id': (r + {offset})::BIGINT, 'name': {name}, 'score': ((r + {offset}) * 0.5)::DOUBLE,
                               'ts': TIMESTAMP '2024-01-01 00:00:00' + to_hours(r + {offset}),
                               'day': DATE '2024-01-01' + ((r + {offset}) // 24)::INTEGER{more}}}::VARIANT AS v
                     FROM range({n}) t(r)) TO '{path}' (FORMAT parquet)"""
        )
    finally:
        con.close()
    return path


def write_event_files(root: Path) -> list[str]:
    """Five files of 100 rows under ``root``: ids 0..499 in order (well clustered); part-4 has
    ``name`` as bigint (a type conflict) and an ``extra`` path no other file has."""
    return [
        str(write_events(root / f"part-{i}.parquet", 100, i * 100, name_as_int=i == 4, extra=i == 4))
        for i in range(5)
    ]
