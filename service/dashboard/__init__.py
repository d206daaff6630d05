"""The admin dashboard: server-rendered HTML pages under ``/admin`` (admin role), included in the
API app by :func:`service.api.create_app`. See :mod:`service.dashboard.routes`."""

from service.dashboard.routes import router

__all__ = ["router"]
