"""The REST API (FastAPI): ``create_app(settings)`` builds the app; ``shredcat serve`` runs it.

Importing this package connects to nothing: the catalog is opened by the app's lifespan.
"""

from service.api.app import create_app, serve_app

__all__ = ["create_app", "serve_app"]
