"""The REST API (FastAPI): ``create_app(settings)`` builds the app; ``shredcat serve`` runs it.

Importing this package connects to nothing: the catalog is opened by the app's lifespan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.api.app import create_app, serve_app

__all__ = ["create_app", "serve_app"]


def __getattr__(name: str) -> Any:
    # Loaded on first use, not with the package: importing any service.api module runs this file
    # first, and the app imports the dashboard, whose modules import service.api.auth (an import
    # circle through this package when a dashboard module was imported first).
    if name in __all__:
        from service.api import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
