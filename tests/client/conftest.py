"""The client tests run against the in-process app of tests/api (same fixtures)."""

from tests.api.conftest import app_factory, client, warehouse  # noqa: F401
