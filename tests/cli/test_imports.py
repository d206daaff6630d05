"""What each read-only catalog command imports: scripts run them in loops, so each imports only
what it needs (no server stack, no pydantic-settings, no Alembic, sqlglot only to parse SQL text).
The checks are on ``sys.modules`` after a real run in a fresh interpreter, never on time;
``bench/cli.py`` measures the time."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.cli._common import catalog_settings
from service.errors import SettingsError
from service.settings import Settings, get_settings
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType

#: Third-party packages a read-only command may import: SQLAlchemy (the catalog) and what it needs.
CATALOG_PACKAGES = {"sqlalchemy", "typing_extensions", "cython_runtime"}
#: What sqlglot also imports where it is installed (mypy_extensions comes with mypy, in the dev extra).
SQLGLOT_OPTIONAL = {"mypy_extensions"}
#: Named separately so that a failure says which heavy library came back.
HEAVY = {
    "alembic", "duckdb", "fastapi", "httpx", "numpy", "pandas", "psycopg", "pyarrow", "pydantic",
    "pydantic_core", "pydantic_settings", "pyspark", "sqlglot", "starlette", "uvicorn",
}  # fmt: skip
#: shredcat modules none of them needs: the settings (pydantic) and the other front ends.
NOT_SERVICE = (
    "service.settings",
    "service.api",
    "service.dashboard",
    "service.client",
    "service.spark",
    "service.parquet",
)

#: What only a write needs (issue 33 item 7): the commit pipeline and its encoding, idempotency
#: keys and their replay, the repository's write side (and the global stats' counters and
#: rebuild), the validator, table creation, partition typing, the stats comparison of verify and
#: restatement, the merge of global stats; the dashboard's reads; and SQLAlchemy's ORM (the
#: catalog's tables are Core tables, ``service.catalog.models``).
WRITE_SIDE = (
    "service.catalog.commit",
    "service.catalog.encode",
    "service.catalog.replay",
    "service.catalog.repository.commit",
    "service.catalog.repository.idempotency",
    "service.catalog.repository.path_stats",
    "service.catalog.validate",
    "service.catalog.creation",
    "service.catalog.partitions",
    "service.catalog.verify",
    "service.stats.merge",
    "service.stats.geo",
    "service.catalog.admin",
    "sqlalchemy.orm",
)

#: What a SQLite catalog never needs: SQLAlchemy's PostgreSQL dialect (the partial indexes'
#: ``postgresql_where`` loads it, so :func:`service.catalog.models.schema` builds them on demand).
OTHER_DIALECT = ("sqlalchemy.dialects.postgresql",)
#: What a read without ``--explain`` never needs: the evaluator (explain's reasons) and the
#: dashboard playground's listing.
NOT_PLANNING = ("service.pruning.evaluator", "service.catalog.planner.listing")
PARSERS = ("service.pruning.parse_json", "service.pruning.parse_sql")

SQL = "variant_get(v, '$.id', 'bigint') = 150"
JSON = (
    '{"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}, "value": 150}'
)

RUN = """
import contextlib, io, json, sys
from service.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    rc = main(json.loads(sys.argv[1]))
print(json.dumps({"rc": rc, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith("SHREDCAT_")}


@pytest.fixture(scope="module")
def catalog_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('imports') / 'c.db'}"
    upgrade_to_head(url)
    t = ShreddedType.parse("int64")
    files = [
        FileStats(
            path=f"/lake/f{i}.parquet",
            file_size_bytes=1000,
            record_count=100,
            footer_size=200,
            content_id=f"etag-{i}",
            variant_columns=("v",),
            paths=(
                PathStats(
                    column="v",
                    variant_path='"id"',
                    shredded_type=t,
                    column_size_bytes=500,
                    value_count=100,
                    null_count=0,
                    min_value=i * 100,
                    max_value=i * 100 + 99,
                    contains_nan=None,
                ),
            ),
        )
        for i in range(3)
    ]
    with Catalog(url) as cat:
        cat.create_table("lake", "ev", ["v"])
        cat.commit("lake", "ev", files)
    return url


def _run(argv: list[str]) -> tuple[str, set[str]]:
    r = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(argv)],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["rc"] == 0, result
    return result["out"], set(result["modules"])


def _third_party(modules: set[str]) -> set[str]:
    tops = {m.split(".")[0] for m in modules}
    return {m for m in tops if m != "service" and not m.startswith("_") and m not in sys.stdlib_module_names}


@pytest.mark.parametrize(
    ("argv", "expected", "extra", "unneeded"),
    [
        (["tables"], "lake.ev\t3 files", set(), PARSERS),
        (["files", "--table", "lake.ev"], "/lake/f0.parquet", set(), PARSERS),
        (["global-stats", "--table", "lake.ev"], '"column": "v"', set(), PARSERS),
        # Each kind of predicate text loads its own parser only.
        (["prune", "--table", "lake.ev", SQL], "/lake/f1.parquet", {"sqlglot"}, ("service.pruning.parse_json",)),
        (["prune", "--table", "lake.ev", JSON], "/lake/f1.parquet", set(), ("service.pruning.parse_sql",)),
    ],
    ids=["tables", "files", "global-stats", "prune-sql", "prune-json"],
)
def test_read_commands_import_only_the_catalog(
    catalog_url: str, argv: list[str], expected: str, extra: set[str], unneeded: tuple[str, ...]
) -> None:
    out, modules = _run([*argv, "--database-url", catalog_url])
    assert expected in out
    third_party = _third_party(modules)
    assert third_party & HEAVY == extra
    assert third_party <= CATALOG_PACKAGES | extra | (SQLGLOT_OPTIONAL if "sqlglot" in extra else set())
    assert not [m for m in modules if m.startswith(NOT_SERVICE)]
    assert not [m for m in modules if m.startswith(WRITE_SIDE)]
    assert not [m for m in modules if m.startswith(OTHER_DIALECT)]
    assert not [m for m in modules if m.startswith(NOT_PLANNING + unneeded)]


def test_every_module_the_read_commands_must_not_load_exists() -> None:
    """A misspelt name would make the checks above pass whatever is imported."""
    for name in (*WRITE_SIDE, *OTHER_DIALECT, *NOT_PLANNING, *PARSERS):
        assert importlib.util.find_spec(name) is not None, name


def test_a_write_loads_what_the_read_commands_leave_out(catalog_url: str, tmp_path: Path) -> None:
    """The modules the read commands leave out are the ones a commit needs (so the check above
    names real modules): ``register`` of a file already live loads the commit pipeline."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"id": [1, 2]}), f)
    argv = ["register", "--table", "lake.plain", str(f), "--idempotency-key", "k1", "--database-url", catalog_url]
    _, modules = _run(argv)
    loaded = {w for w in WRITE_SIDE if any(m == w or m.startswith(w + ".") for m in modules)}
    assert loaded == set(WRITE_SIDE) - {"service.catalog.admin", "sqlalchemy.orm"}


def test_an_empty_embedded_catalog_is_still_created_on_first_use(tmp_path: Path) -> None:
    """The cheap revision read does not skip the migration the embedded default needs."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    out, modules = _run(["tables", "--database-url", url])
    assert out == ""
    assert "alembic" in {m.split(".")[0] for m in modules}
    _, modules = _run(["tables", "--database-url", url])
    assert "alembic" not in {m.split(".")[0] for m in modules}


@pytest.fixture
def no_shredcat_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in list(os.environ):
        if k.upper().startswith("SHREDCAT_"):
            monkeypatch.delenv(k)
    get_settings.cache_clear()


def test_the_cli_defaults_are_the_settings_defaults(no_shredcat_env: None) -> None:
    s = Settings()
    assert catalog_settings(None) == (s.database_url, s.commit_limits)
    assert catalog_settings("sqlite:///x.db") == ("sqlite:///x.db", s.commit_limits)


@pytest.mark.parametrize("name", ["SHREDCAT_DATABASE_URL", "shredcat_database_url"])
def test_the_cli_reads_the_url_as_the_settings_do(
    no_shredcat_env: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "sqlite:///from-env.db")
    assert Settings().database_url == "sqlite:///from-env.db"
    assert catalog_settings(None)[0] == "sqlite:///from-env.db"
    assert catalog_settings("sqlite:///flag.db")[0] == "sqlite:///flag.db"


def test_any_other_setting_is_read_and_validated_by_the_settings(
    no_shredcat_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHREDCAT_MAX_PAGE_SIZE", "500")
    try:
        assert catalog_settings(None) == ("sqlite:///./shredcat.db", Settings().commit_limits)
        assert catalog_settings(None)[1].max_page_size == 500
        monkeypatch.setenv("SHREDCAT_MAX_PAGE_SIZE", "0")
        get_settings.cache_clear()
        with pytest.raises(SettingsError, match="SHREDCAT_MAX_PAGE_SIZE"):
            catalog_settings(None)
    finally:
        get_settings.cache_clear()
