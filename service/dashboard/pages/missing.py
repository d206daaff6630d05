"""Any other ``GET /admin/...`` URL: the dashboard's HTML 404 page (after the admin check), not
the API's JSON. Included last, so every real page's route matches first."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.dashboard.auth import admin_page
from service.errors import NotFoundError

router = APIRouter()


@router.get("/{rest:path}")
async def missing_page(request: Request, rest: str) -> Response:
    return await admin_page(request, _missing)


def _missing(request: Request) -> Response:
    raise NotFoundError(f"There is no dashboard page at {request.url.path}.")
