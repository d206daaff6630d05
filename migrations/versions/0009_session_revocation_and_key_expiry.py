"""Signed-out dashboard sessions, and idempotency keys found by age.

``shredcat_revoked_session`` holds the sha256 of each signed-out session cookie until the cookie's
own expiry: every server process (and replica) sharing the catalog refuses it from then on, also
after a restart. ``shredcat_commit_key.created_at`` gets an index, so expired keys are found and
deleted without a scan.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shredcat_revoked_session",
        sa.Column("session_digest", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_digest", name="pk_shredcat_revoked_session"),
    )
    op.create_index("ix_shredcat_commit_key_created_at", "shredcat_commit_key", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_shredcat_commit_key_created_at", table_name="shredcat_commit_key")
    op.drop_table("shredcat_revoked_session")
