"""The Spark tests' SparkSession (one JVM per worker: these tests share the ``spark`` xdist group)."""

from tests.spark.conftest import spark

__all__ = ["spark"]
