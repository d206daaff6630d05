"""The REST API (FastAPI): ``create_app(settings)`` builds the app; ``shredcat serve`` runs it.

Importing this package connects to nothing: the catalog is opened by the app's lifespan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.lazy import lazy_exports

if TYPE_CHECKING:
    from service.api.app import create_app, serve_app

__all__ = ["create_app", "serve_app"]


# Loaded on first use, not with the package: importing any service.api module runs this file
# first, and the app imports the dashboard, whose modules import service.api.auth (an import
# circle through this package when a dashboard module was imported first).
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "app"))
