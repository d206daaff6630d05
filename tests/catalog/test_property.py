"""Property: any sequence of commits and removals keeps the stored global stats equal to a
recomputation (from the catalog's rows, and from a pure in-memory model), on both backends."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.catalog import Catalog
from service.stats.merge import recompute
from service.stats.model import FileStats, PathStats
from tests.catalog.factories import assert_consistent, committable, fs
from tests.catalog.test_merge import file_paths

_tables = itertools.count()


@st.composite
def files_and_ops(draw: st.DrawFn) -> tuple[list[FileStats], list[tuple[str, list[int]]]]:
    n = draw(st.integers(1, 8))
    files = []
    for i in range(n):
        paths: list[PathStats] = draw(file_paths())
        cols = sorted({p.column for p in paths} | set(draw(st.sampled_from([(), ("v",), ("v", "w")]))))
        files.append(fs(f"f{i}", *map(committable, paths), columns=tuple(cols)))
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["commit", "commit", "remove"]), st.lists(st.integers(0, n - 1), max_size=5)
            ),
            min_size=1,
            max_size=10,
        )
    )
    return files, ops


def check_sequence(cat: Catalog, files: list[FileStats], ops: list[tuple[str, list[int]]]) -> None:
    table = f"t{next(_tables)}"
    cat.create_table("p", table, ["v", "w"])
    live: dict[str, FileStats] = {}
    for op, idx in ops:
        batch = [files[i] for i in idx]
        if op == "commit":
            cat.commit("p", table, batch)
            for f in batch:
                live[f.path] = f
        else:
            cat.remove("p", table, [f.path for f in batch], missing_ok=True)
            for f in batch:
                live.pop(f.path, None)
        stored = cat.global_stats("p", table)
        model = recompute(f.paths for f in live.values())
        assert stored.file_count == len(live)
        assert (
            stored.columns == model.by_column(["v", "w"])
            if live
            else all(not p for p in stored.columns.values())
        )
        assert cat.global_stats_json("p", table) == (
            model.column_json(["v", "w"]) if live else {"v": None, "w": None}
        )
    assert_consistent(cat, "p", table)


def test_commit_remove_sequences_keep_global_stats_exact(catalog: Catalog) -> None:
    n = 50 if catalog.backend == "sqlite" else 20

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(files_and_ops())
    def run(case: tuple[list[FileStats], list[tuple[str, list[int]]]]) -> None:
        check_sequence(catalog, *case)

    run()
