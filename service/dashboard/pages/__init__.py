"""The dashboard's pages, one module each; every handler authenticates through
:func:`service.dashboard.auth.admin_page` and reads through :class:`service.catalog.Catalog`."""
