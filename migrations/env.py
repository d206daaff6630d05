"""Alembic environment of the shredcat catalog.

The database is, in order of precedence: a connection passed by the caller in
``config.attributes["connection"]`` (``service.catalog.db.upgrade_to_head`` and the tests), ``-x
url=...`` on the command line, ``sqlalchemy.url`` in the config, else the settings'
``SHREDCAT_DATABASE_URL``. Engines always come from ``service.catalog.db.make_engine`` so SQLite gets
the same pragmas as at run time.
"""

from __future__ import annotations

import logging.config

from alembic import context

from service.catalog.db import make_engine, transaction
from service.catalog.models import schema

config = context.config
if config.config_file_name is not None and config.attributes.get("connection") is None:
    logging.config.fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = schema()


def _url() -> str:
    x = context.get_x_argument(as_dictionary=True)
    if x.get("url"):
        return x["url"]
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from service.settings import get_settings

    return get_settings().database_url


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=True,  # SQLite needs batch mode for ALTERs in later revisions
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url())
    try:
        with transaction(engine, write=True) as conn:
            _configure(connection=conn)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
