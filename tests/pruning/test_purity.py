"""service/pruning/ is pure logic: it never reaches the database, neither through SQLAlchemy nor
through the catalog (planning against the catalog is the catalog's job)."""

from __future__ import annotations

from tests.support.imports import imported_modules, offending, package_imports

FORBIDDEN = ("sqlalchemy", "service.catalog")


def test_pruning_imports_neither_sqlalchemy_nor_the_catalog() -> None:
    modules = package_imports("pruning")
    assert "pruning/conditions/compile.py" in modules and "pruning/evaluator.py" in modules
    bad = {path: sorted(found) for path, imports in modules.items() if (found := offending(imports, FORBIDDEN))}
    assert bad == {}, f"service/pruning/ must stay pure logic: {bad}"


def test_the_import_walk_sees_every_form_of_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from service.catalog import Catalog\n"
        "def f():\n    import sqlalchemy.orm\n    from .. import catalog\n    from ..catalog.db import x\n"
        "import sqlalchemyish\n"
    )
    found = offending(imported_modules(source, "service.pruning.probe"), FORBIDDEN)
    assert found == {"service.catalog", "service.catalog.Catalog", "sqlalchemy.orm", "service.catalog.db", "service.catalog.db.x"}
