"""A shredcat service in this process, and a local SparkSession, for the demo, benchmarks and tests.

``with LocalService("sqlite:///./demo-data/catalog.db", ["./demo-data"]) as svc:`` migrates the
database, runs the REST API with uvicorn in a background thread on a free port of 127.0.0.1, and
stops it afterwards; ``svc.url`` and ``svc.client()`` reach it. Spark executors (other
processes) can reach it too, which an in-process httpx transport could not.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.client import ShredcatClient

__all__ = ["LocalService", "local_session"]


def local_session(app_name: str, *, driver_memory: str | None = None) -> Any:
    """A ``local[2]`` SparkSession: UI off, UTC, 2 shuffle partitions, warnings silenced.

    Executors run shredcat's extractor, so unless the caller chose otherwise they run this
    interpreter (the one with pyarrow), not whatever ``python3`` is on the PATH.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
    )
    if driver_memory is not None:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class LocalService:
    def __init__(
        self,
        database_url: str,
        warehouse_roots: Sequence[str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        auth: str = "off",
        tokens: dict[str, str] | None = None,
        migrate: bool = True,
        log_level: str = "warning",
        **settings: Any,
    ) -> None:
        self.database_url = database_url
        self.warehouse_roots = [str(r) for r in warehouse_roots]
        self.host = host
        self.port = port
        self.auth = auth
        self.tokens = tokens or {}
        self.migrate = migrate
        self.log_level = log_level
        self.settings = settings
        self.url = ""
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LocalService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        import uvicorn

        from service.api import create_app
        from service.settings import Settings

        if self.migrate:
            from service.catalog.db import upgrade_to_head

            upgrade_to_head(self.database_url)
        settings = Settings(
            database_url=self.database_url,
            warehouse_roots=self.warehouse_roots,
            auth=self.auth,
            tokens=self.tokens,
            **self.settings,
        )
        app = create_app(settings)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level=self.log_level, lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="shredcat-local-service", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the local shredcat service did not start")
            time.sleep(0.02)
        self.url = f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._server = None
        self._thread = None

    def client(self, **kwargs: Any) -> ShredcatClient:
        from service.client import ShredcatClient

        return ShredcatClient(self.url, **kwargs)
