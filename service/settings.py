"""Process-wide settings, read from the environment (prefix ``SHREDCAT_``).

Keep this module small and import-cheap: settings are built lazily by :func:`get_settings`, never at
import time, so a test or a CLI flag can set the environment first. Call
``get_settings.cache_clear()`` after changing the environment in a test.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHREDCAT_", extra="ignore")

    #: SQLAlchemy URL of the catalog database. The embedded default is a SQLite file in the working
    #: directory; production uses PostgreSQL (``postgresql://...`` is read as psycopg 3).
    database_url: str = "sqlite:///./shredcat.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
