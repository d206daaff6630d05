"""``shredcat serve [--host --port --workers]``: run the REST API with uvicorn.

Settings come from the environment (``SHREDCAT_*``, see the README). ``--workers`` > 1 runs that
many processes (each builds its own app and connection pool); the database must then be
PostgreSQL or a SQLite file (never ``:memory:``).

With authentication on and no ``SHREDCAT_SESSION_SECRETS``, one random session key is made here
and handed to every worker through the environment (so a dashboard session works on all of them);
sessions then end when the server restarts, which is logged as a warning.
``SHREDCAT_FORWARDED_ALLOW_IPS`` turns on uvicorn's proxy headers for the listed proxies only.

With more than one worker, ``/metrics`` sums every worker's counters (prometheus_client's
multiprocess mode, :mod:`service.api.metrics`): the workers share a directory made here (removed
at exit), or ``PROMETHEUS_MULTIPROC_DIR`` when it is set (its metric files are deleted at start,
so counters start at zero with the server).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8181, help="TCP port (default 8181)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument(
        "--log-level",
        default=None,
        type=str.lower,
        choices=["critical", "error", "warning", "info", "debug", "trace"],
        help="override SHREDCAT_LOG_LEVEL",
    )


def run(args: argparse.Namespace) -> int:
    import json
    import logging.config
    import os
    import secrets
    import sys

    from service.api.logging import logging_config
    from service.api.paths import parse_roots
    from service.settings import get_settings

    settings = get_settings()  # a SettingsError is exit 2 (service.cli.main)
    try:
        parse_roots(settings.warehouse_roots)
    except ValueError as e:
        print(f"shredcat serve: invalid settings: SHREDCAT_WAREHOUSE_ROOTS: {e}", file=sys.stderr)
        return 2
    if args.workers < 1 or not (0 <= args.port <= 65535):
        print("shredcat serve: --workers must be >= 1 and --port in 0..65535", file=sys.stderr)
        return 2
    level = (args.log_level or settings.log_level).lower()
    logging.config.dictConfig(logging_config(level, settings.log_format))
    if settings.auth == "on" and not settings.session_secrets:
        # Workers inherit the environment; the in-process app (one worker) re-reads the settings.
        os.environ["SHREDCAT_SESSION_SECRETS"] = json.dumps([secrets.token_urlsafe(32)])
        get_settings.cache_clear()
        logging.getLogger("service.api").warning(
            "no SHREDCAT_SESSION_SECRETS configured: dashboard sessions are signed with a key made at start "
            "(shared by the workers) and end when the server restarts"
        )
    trusted = settings.forwarded_allow_ips.strip()
    with _metrics_directory(args.workers):
        _serve(args, level, settings.log_format, trusted, settings.keepalive_timeout_seconds)
    return 0


@contextlib.contextmanager
def _metrics_directory(workers: int) -> Iterator[None]:
    """Multiprocess metrics for the workers: ``PROMETHEUS_MULTIPROC_DIR`` (emptied of metric
    files), else with several workers a fresh directory, removed at exit. Set before any worker
    imports prometheus_client, which reads it once."""
    import glob
    import os
    import shutil
    import tempfile

    from service.api.metrics import MULTIPROC_DIR_ENV

    given = os.environ.get(MULTIPROC_DIR_ENV)
    if given:
        for stale in glob.glob(os.path.join(given, "*.db")):
            os.remove(stale)
        yield
        return
    if workers == 1:
        yield
        return
    made = tempfile.mkdtemp(prefix="shredcat-metrics-")
    os.environ[MULTIPROC_DIR_ENV] = made
    logging.getLogger("service.api").info("metrics of the %d workers are summed through %s", workers, made)
    try:
        yield
    finally:
        del os.environ[MULTIPROC_DIR_ENV]
        shutil.rmtree(made, ignore_errors=True)


def _serve(args: argparse.Namespace, level: str, log_format: str, trusted: str, keepalive: int) -> None:
    import uvicorn

    from service.api.logging import logging_config

    uvicorn.run(
        "service.api:serve_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=level,
        # Applied by uvicorn in every worker process; one access line per request comes from the app.
        log_config=logging_config(level, log_format),
        access_log=False,
        # X-Forwarded-For/-Proto are believed from the configured proxies only (none by default).
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
        server_header=False,
        # TCP_NODELAY on every accepted connection, also in the workers, a header timeout and a
        # connection cap (SHREDCAT_HEADER_TIMEOUT_SECONDS, SHREDCAT_MAX_CONNECTIONS; see the module).
        http="service.api.transport:NoDelayHTTPProtocol",
        timeout_keep_alive=keepalive,
    )
