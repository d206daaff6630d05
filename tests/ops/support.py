"""What the operations tests (and ``bench/load.py``) share: a real ``shredcat serve`` subprocess,
throw-away PostgreSQL databases, a private PostgreSQL server that can be restarted, and commit
payloads with client-side statistics (no data files needed)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from service.api.auth import hash_token
from tests.support.pg import psycopg_dsn
from tests.support.server import free_port

REPO = Path(__file__).resolve().parents[2]
PG_BIN = Path(os.environ.get("SHREDCAT_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
DEFAULT_PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"

TOKENS = {"admin": "ops-admin-token", "writer": "ops-writer-token", "reader": "ops-reader-token"}
#: Where the client-statistics payloads of these tests claim their files live (nothing is read there).
LAKE_ROOT = "s3://ops-lake/warehouse/"


# --- PostgreSQL -------------------------------------------------------------------------------------


def with_database(url: str, name: str) -> str:
    from sqlalchemy import make_url

    return make_url(url).set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)


def admin_execute(admin_url: str, *sql: str) -> list[Any]:
    """Run statements with autocommit; returns the rows of the last one (if it has any)."""
    import psycopg

    rows: list[Any] = []
    with psycopg.connect(psycopg_dsn(admin_url), autocommit=True, connect_timeout=10) as c:
        for s in sql:
            cur = c.execute(s)  # type: ignore[arg-type]
            rows = cur.fetchall() if cur.description else []
    return rows


#: PostgreSQL backends report their statistics (pg_stat_database.sessions) at most once a second,
#: a new one at its first idle moment.
PG_STATS_FLUSH_S = 1.1


def server_backends(url: str) -> set[int]:
    """The pids of the sessions a shredcat server (``application_name`` shredcat) has open on this
    URL's database now."""
    from sqlalchemy import make_url

    db = make_url(url).database
    rows = admin_execute(
        with_database(url, "postgres"),
        f"SELECT pid FROM pg_stat_activity WHERE datname = '{db}' AND application_name = 'shredcat'",
    )
    return {int(r[0]) for r in rows}


def sessions_opened(url: str) -> int:
    """Sessions ever opened on this URL's database (``pg_stat_database.sessions``, PostgreSQL 14+;
    see :data:`PG_STATS_FLUSH_S`)."""
    from sqlalchemy import make_url

    db = make_url(url).database
    rows = admin_execute(with_database(url, "postgres"), f"SELECT sessions FROM pg_stat_database WHERE datname = '{db}'")
    return int(rows[0][0])


@contextlib.contextmanager
def fresh_database(admin_url: str = DEFAULT_PG_ADMIN, prefix: str = "shredcat_ops") -> Iterator[str]:
    """An empty database (not migrated) with a unique name; dropped (forcefully) afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin_execute(admin_url, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(admin_url, name)
    finally:
        admin_execute(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def terminate_backends(url: str, application_name: str = "shredcat") -> int:
    """``pg_terminate_backend`` every connection of the service to this URL's database (only that
    database: other tests' databases on the same server are left alone). Returns how many."""
    from sqlalchemy import make_url

    db = make_url(url).database
    rows = admin_execute(
        with_database(url, "postgres"),
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
        f"WHERE datname = '{db}' AND application_name = '{application_name}' AND pid <> pg_backend_pid()",
    )
    return int(rows[0][0]) if rows else 0


def service_backends(url: str, application_name: str = "shredcat") -> list[tuple[int, str | None, bool]]:
    """(pid, state, in a transaction) of the service's connections to this URL's database."""
    from sqlalchemy import make_url

    db = make_url(url).database
    return [
        (int(r[0]), r[1], bool(r[2]))
        for r in admin_execute(
            with_database(url, "postgres"),
            "SELECT pid, state, xact_start IS NOT NULL FROM pg_stat_activity "
            f"WHERE datname = '{db}' AND application_name = '{application_name}'",
        )
    ]


class PrivatePostgres:
    """A PostgreSQL server of our own (``initdb`` in a temporary directory, a free loopback port),
    so a test can restart it without disturbing the shared server other tests use. ``initdb``
    refuses root: as root the server runs as the ``postgres`` user (``runuser``)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="shredcat-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.log = self.dir / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    @staticmethod
    def available() -> str | None:
        """None when a private server can be made here, else why not."""
        if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
            return f"no initdb/pg_ctl in {PG_BIN}"
        if os.geteuid() == 0:
            try:
                import pwd

                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and there is no postgres user to run initdb as"
            if shutil.which("runuser") is None:
                return "running as root without runuser"
        return None

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=timeout)

    def _ctl(self, action: str, *extra: str) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30",
                  *extra, "-o", opts, action)

    def start(self) -> PrivatePostgres:
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8")
        self._ctl("start")
        return self

    def restart(self) -> None:
        """A fast restart: every connection is dropped, in-flight transactions are rolled back."""
        self._ctl("restart", "-m", "fast")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-t", "30", "-m", "immediate", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def admin_url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def __enter__(self) -> PrivatePostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- the server ---------------------------------------------------------------------------------------


def server_env(database_url: str, *, roots: list[str] | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    env.update(
        {
            "SHREDCAT_DATABASE_URL": database_url,
            "SHREDCAT_AUTH": "on",
            "SHREDCAT_TOKENS": json.dumps({hash_token(t): role for role, t in TOKENS.items()}),
            "SHREDCAT_WAREHOUSE_ROOTS": json.dumps(roots if roots is not None else [LAKE_ROOT]),
            "SHREDCAT_LOG_FORMAT": "json",
        }
    )
    env.update(extra)
    return env


def run_migrate(env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``shredcat migrate`` with ``env``, a set-up step of the servers' tests: run by the same
    ``main`` in this process (a process spends seconds importing Alembic and the catalog). The
    real process is tests/api/test_e2e.py's, test_deploy's and the browser server's."""
    from tests.support.cli import shredcat

    return shredcat(["migrate"], env, real=False, timeout=timeout)


# --- payloads -----------------------------------------------------------------------------------------


def file_payload(path: str, i: int, *, records: int = 1000, paths: int = 3) -> dict[str, Any]:
    """Client-side statistics of a made-up file ``i``: ``"id"`` int64 in [i*records, (i+1)*records),
    ``"name"`` varchar, ``"score"`` float64 (and more int64 paths ``"k<j>"`` up to ``paths``)."""
    lo = i * records
    rows = [
        {"column": "v", "variant_path": '"id"', "shredded_type": "int64", "column_size_bytes": 8 * records,
         "value_count": records, "null_count": 0, "min_value": str(lo), "max_value": str(lo + records - 1),
         "contains_nan": None, "extra_stats": None},
        {"column": "v", "variant_path": '"name"', "shredded_type": "varchar", "column_size_bytes": 6 * records,
         "value_count": records - 10, "null_count": 10, "min_value": f"n{i:08d}", "max_value": f"n{i:08d}z",
         "contains_nan": None, "extra_stats": None},
        {"column": "v", "variant_path": '"score"', "shredded_type": "float64", "column_size_bytes": 8 * records,
         "value_count": records, "null_count": 0, "min_value": str(float(-i)), "max_value": str(float(i) + 0.5),
         "contains_nan": i % 7 == 0, "extra_stats": None},
    ]
    for j in range(3, paths):
        rows.append(
            {"column": "v", "variant_path": f'"k{j}"', "shredded_type": "int64", "column_size_bytes": 4 * records,
             "value_count": records, "null_count": 0, "min_value": str(j), "max_value": str(j + i),
             "contains_nan": None, "extra_stats": None}
        )
    return {
        "path": path,
        "file-size-bytes": 30 * records + 4096,
        "record-count": records,
        "footer-size": 2048,
        "content-id": f"etag-{i}",
        "variant-columns": ["v"],
        "variant-stats": rows[:paths],
    }


def check_table_consistent(database_url: str, namespace: str, table: str) -> Any:
    """Stored global stats == a recomputation and every counter == a recount (through the library);
    returns the table's :class:`~service.catalog.results.TableInfo`."""
    from service.catalog import Catalog
    from tests.catalog.factories import assert_consistent

    with Catalog(database_url) as cat:
        assert_consistent(cat, namespace, table)
        return cat.get_table(namespace, table)


def live_files(database_url: str, namespace: str, table: str) -> list[Any]:
    """Every live file of the table (the library, page by page)."""
    from service.catalog import Catalog

    out: list[Any] = []
    with Catalog(database_url) as cat:
        after = None
        while True:
            page = cat.list_files(namespace, table, after=after, limit=10_000)
            out.extend(page)
            if len(page) < 10_000:
                return out
            after = page[-1].path
