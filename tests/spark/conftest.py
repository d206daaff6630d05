"""A real local SparkSession (local[2], UI off, UTC, no adaptive execution), shared by every Spark test of a worker.

All Spark tests carry ``xdist_group("spark")`` so that one pytest worker runs them and only one
JVM is started.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.skip("no Java runtime for Spark")
    import os
    import sys

    from service.spark import local_session

    # Executors run shredcat's extractor: they need this interpreter (with pyarrow), not python3.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = local_session("shredcat-tests", driver_memory="1g")
    # The tests' tables hold at most a few thousand rows: adaptive execution re-plans each job's
    # later stages from its shuffle statistics, a cost with nothing to gain on such data.
    session.conf.set("spark.sql.adaptive.enabled", "false")
    yield session
    session.stop()
