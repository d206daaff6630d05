"""The dashboard reads through the catalog library only: no SQLAlchemy, no catalog internals."""

from __future__ import annotations

from tests.support.imports import offending, package_imports


def test_dashboard_has_no_sql() -> None:
    modules = package_imports("dashboard")
    assert "dashboard/web.py" in modules and "dashboard/pages/playground.py" in modules
    forbidden = ("sqlalchemy", "service.catalog.repository", "service.catalog.db", "service.catalog.models")
    bad = {path: sorted(found) for path, imports in modules.items() if (found := offending(imports, forbidden))}
    assert bad == {}, f"the dashboard must read through service.catalog.Catalog: {bad}"
