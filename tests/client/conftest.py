"""The client tests run against the in-process app of tests/api (same fixtures)."""

from tests.api.conftest import _template_db, app_factory, client, sqlite_url, warehouse  # noqa: F401
