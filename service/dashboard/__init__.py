"""The admin dashboard: server-rendered HTML pages under ``/admin`` (admin role), included in the
API app by :func:`service.api.create_app`.

Pages read through the catalog library (:class:`service.catalog.Catalog`: its reads and its
planner); no SQL or database access here or in the templates. Forms, links and an SVG drawn
on the server; one small script of our own (``static/dashboard.js``: click-to-insert in the
playground, short predicates run by GET, Ctrl+Enter, recent predicates, completion, copy buttons,
arrow keys across a chart's bars) that no page needs to work. Every page answers HTML; only an unauthenticated request
that is not from a browser (no ``text/html`` in ``Accept``) gets the API's JSON 401.

* :mod:`.web`: templates, static files, URLs, rendering and error pages;
* :mod:`.auth` (with :mod:`.session`): the admin check, login/logout, CSRF;
* :mod:`.pages`: one module per page; :mod:`.chart` and :mod:`.format` draw and word values.

=====================================================  =============================================
``GET  /admin``                                        overview: tables and their paths' health, recent commits
``GET  /admin/tables/{ns}/{table}``                    columns, global stats, coverage, files, history
``GET  /admin/tables/{ns}/{table}/path``               one path's per-file [min, max] chart
``GET  /admin/tables/{ns}/{table}/coverage``           the files behind one coverage status of a path
``GET  /admin/tables/{ns}/{table}/file``               one file's metadata and per-path stats
``GET|POST /admin/tables/{ns}/{table}/prune``          prune playground (SQL predicate)
``GET|POST /admin/tables/{ns}/{table}/prune/export``  candidate files as CSV, JSON or a Spark read (streamed)
``GET|POST /admin/tables/{ns}/{table}/prune/duckdb``  the DuckDB query over the candidates
``GET  /admin/tables/{ns}/{table}/complete``          columns and paths for the predicate box's completion (JSON)
``GET|POST /admin/login``, ``POST /admin/logout``      browser sessions (see :mod:`.session`)
``GET  /admin/static/{name}``                          the stylesheet, the script and the icon (no auth)
``GET  /admin/...`` (any other)                       the HTML 404 page
=====================================================  =============================================
"""

from fastapi import APIRouter

from service.dashboard import auth
from service.dashboard.pages import coverage, export, file, missing, overview, path, playground, table
from service.dashboard.session import DASHBOARD_PREFIX
from service.dashboard.web import static_route

router = APIRouter(include_in_schema=False)
router.add_api_route(DASHBOARD_PREFIX + "/static/{name}", static_route, methods=["GET"])
for _module in (auth, overview, table, path, coverage, file, playground, export, missing):  # missing: last
    router.include_router(_module.router, prefix=DASHBOARD_PREFIX)

__all__ = ["router"]
