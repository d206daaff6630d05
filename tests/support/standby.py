"""A private PostgreSQL 15 primary and hot standby pair for the replication tests.

Streaming replication needs a ``replication`` entry in ``pg_hba.conf``, which the machine's
cluster (127.0.0.1:5432) lacks (``../shared/NOTES.md`` §8); rather than change that cluster, the
tests run their own: ``initdb`` a primary in a temporary directory, ``pg_basebackup -R`` a
standby of it (``-R`` writes ``standby.signal`` and ``primary_conninfo``), both on free loopback
ports, with their sockets in the same directory. PostgreSQL refuses to run as root, so as root
(CI) every server command runs as the ``postgres`` OS user (``runuser``), who owns the directory.

Nothing is installed: the binaries are PostgreSQL's own, found under ``/usr/lib/postgresql/*/bin``
(or ``SHREDCAT_TEST_PG_BIN``), the same package that provides the main test cluster.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

#: The OS user the servers run as when the tests run as root.
PG_OS_USER = "postgres"


class StandbyUnavailable(RuntimeError):
    """The pair could not be started here (no binaries, no ``postgres`` user, a server that
    would not start): the message says which and what the server logged."""


def pg_bin_dir() -> Path:
    """The directory of ``initdb``/``pg_ctl``/``pg_basebackup``: ``SHREDCAT_TEST_PG_BIN``, else the
    newest ``/usr/lib/postgresql/N/bin`` (Debian keeps them off ``PATH``), else ``PATH``'s."""
    explicit = os.environ.get("SHREDCAT_TEST_PG_BIN")
    if explicit:
        return Path(explicit)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    raise StandbyUnavailable("no PostgreSQL server binaries (initdb, pg_ctl): set SHREDCAT_TEST_PG_BIN")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", PG_OS_USER, "--", *argv]


@dataclass
class Server:
    """One PostgreSQL server of the pair."""

    name: str
    data: Path
    port: int
    bin: Path
    sockets: Path
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.data.parent / f"{self.name}.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def dsn(self, database: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = _as_server_user([str(self.bin / argv[0]), *argv[1:]])
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise StandbyUnavailable(
                f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}\n"
                f"{self.log_tail()}"
            )
        return done

    def start(self) -> None:
        self.run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
            "-o", f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1", "start",
        )

    def start_on_a_free_port(self, tries: int = 5) -> None:
        """:meth:`start`, on another free port when the one picked was taken meanwhile (a port
        free when probed can be any outgoing connection's local port by the time PostgreSQL binds
        it: seen once in a whole-suite run). For a first start only: a restart keeps its port,
        which the catalogs under test name."""
        for attempt in range(tries):
            try:
                self.start()
                return
            except StandbyUnavailable:
                if attempt == tries - 1 or "Address already in use" not in self.log_tail():
                    raise
            self.port = free_port()

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def promote(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-w", "promote")

    def running(self) -> bool:
        return self.run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    @contextmanager
    def frozen(self) -> Iterator[list[int]]:
        """The server's processes stopped (SIGSTOP) in the block, as a paused VM's would be: its
        sockets stay open and the kernel still accepts connections and acknowledges data, but
        nothing answers. Always continued (SIGCONT) when the block ends. Yields the pids."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        stopped: list[int] = []
        try:
            # The postmaster first: stopped, it forks no new backend while its children are listed.
            os.kill(postmaster, signal.SIGSTOP)
            stopped.append(postmaster)
            for pid in _children(postmaster):
                with suppress(ProcessLookupError):  # a backend that ended since it was listed
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
            yield stopped
        finally:
            for pid in stopped:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def execute(self, sql: str, database: str = "postgres") -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.dsn(database), autocommit=True, connect_timeout=10) as c:
            cur = c.execute(sql)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description else []


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a postmaster's backends and auxiliary processes)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # ended meanwhile
            continue
        # Fields after the command name (which may hold spaces and parentheses): state, ppid, ...
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry))
    return found


#: The primary's settings: streaming replication and a hot standby; durability is not needed in
#: a test (fsync off), and pg_stat_statements counts the statements each server runs.
PRIMARY_CONF = """
listen_addresses = '127.0.0.1'
wal_level = replica
max_wal_senders = 5
hot_standby = on
fsync = off
full_page_writes = off
shared_preload_libraries = 'pg_stat_statements'
max_connections = 100
shared_buffers = 32MB
"""

HBA = """
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
"""


@dataclass
class Pair:
    """A running primary and its hot standby (:func:`start_pair`); :meth:`close` removes both."""

    root: Path
    primary: Server
    standby: Server

    def wait_replayed(self, timeout: float = 30.0) -> None:
        """Until the standby has replayed everything the primary had written when called."""
        (lsn,) = self.primary.execute("SELECT pg_current_wal_insert_lsn()::text")[0]
        # The walsender ships flushed WAL only, and the insert position may lie past it for as long
        # as nothing forces a flush (after pg_basebackup's WAL switch it points past the new
        # segment's page header, unflushed for ~12 s until a background record is flushed): a
        # commit with a transaction id flushes everything before it, so nothing waits on chance.
        self.primary.execute("SELECT txid_current()")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.standby.execute(
                f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"
            )
            if rows and rows[0][0]:
                return
            time.sleep(0.05)
        raise AssertionError(f"the standby did not replay {lsn} within {timeout}s\n{self.standby.log_tail()}")

    def close(self) -> None:
        for s in (self.standby, self.primary):
            s.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


#: The initdb'd, configured (never started) primary of this process: every pair's primary is a
#: copy of it. initdb took 4-10 s on this 2-core machine under the suite's load, a copy 0.1 s.
_template: Path | None = None


def _primary_template(bin_dir: Path) -> Path:
    global _template
    if _template is not None and _template.exists():
        return _template
    _remove_stale_templates()
    root = Path(tempfile.mkdtemp(prefix=f"shredcat-standby-template-{os.getpid()}-"))
    _own(root)
    data = root / "primary"
    try:
        run = _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
        done = subprocess.run(run, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise StandbyUnavailable(f"initdb failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
        with open(data / "postgresql.conf", "a") as f:
            f.write(PRIMARY_CONF)
        (data / "pg_hba.conf").write_text(HBA)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    _template = data
    return data


def _remove_stale_templates() -> None:
    """Templates of processes that ended without their exit handlers (a killed run): removed."""
    for stale in Path(tempfile.gettempdir()).glob("shredcat-standby-template-*-*"):
        pid = stale.name.split("-")[3]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)


def _own(root: Path) -> None:
    """As root (CI), hand ``root`` to the OS user the servers run as."""
    if os.geteuid() != 0:
        return
    try:
        shutil.chown(root, user=PG_OS_USER, group=PG_OS_USER)
    except LookupError:
        raise StandbyUnavailable(f"running as root and there is no {PG_OS_USER!r} OS user to run PostgreSQL") from None


def start_pair() -> Pair:
    """Copy a primary from the process's initdb'd template, pg_basebackup a standby of it, start
    both; StandbyUnavailable if not."""
    bin_dir = pg_bin_dir()
    for tool in ("initdb", "pg_ctl", "pg_basebackup"):
        if not (bin_dir / tool).exists():
            raise StandbyUnavailable(f"{bin_dir / tool} is missing")
    template = _primary_template(bin_dir)
    root = Path(tempfile.mkdtemp(prefix="shredcat-standby-"))
    try:
        _own(root)
        primary = Server("primary", root / "primary", free_port(), bin_dir, root)
        standby = Server("standby", root / "standby", free_port(), bin_dir, root)
        # cp -a as the server user: the copy keeps the template's owner and its 0700 mode.
        copied = subprocess.run(_as_server_user(["cp", "-a", str(template), str(primary.data)]), capture_output=True, text=True, timeout=120)
        if copied.returncode != 0:
            raise StandbyUnavailable(f"copying the primary's template failed: {copied.stderr.strip()}")
        primary.start_on_a_free_port()
        # -c fast: the backup's checkpoint at once, not spread over the checkpoint interval.
        primary.run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
            "-D", str(standby.data), "-R", "-X", "stream", "-c", "fast", "--no-sync",
        )
        standby.start_on_a_free_port()
        pair = Pair(root, primary, standby)
        pair.wait_replayed()
        return pair
    except BaseException:
        for name in ("standby", "primary"):
            if (root / name / "postmaster.pid").exists():
                subprocess.run(
                    _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(root / name), "-m", "immediate", "stop"]),
                    capture_output=True, timeout=60,
                )
        shutil.rmtree(root, ignore_errors=True)
        raise
