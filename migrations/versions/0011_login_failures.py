"""Failed dashboard sign-ins counted in the catalog, so every worker and replica shares one limit.

``shredcat_login_failure`` holds one row per failed sign-in of the last minute: the sha256 of the
client's address (the catalog keeps no client address), and when. Rows are written only while the
limits are not reached and older ones are deleted by each new one, so the table holds at most
``SHREDCAT_LOGIN_FAILURES_TOTAL`` rows.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "shredcat_login_failure",
        sa.Column("failure_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("address_digest", sa.String(64), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("failure_id", name="pk_shredcat_login_failure"),
    )
    op.create_index("ix_shredcat_login_failure_failed_at", "shredcat_login_failure", ["failed_at"])
    op.create_index(
        "ix_shredcat_login_failure_address", "shredcat_login_failure", ["address_digest", "failed_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_shredcat_login_failure_address", table_name="shredcat_login_failure")
    op.drop_index("ix_shredcat_login_failure_failed_at", table_name="shredcat_login_failure")
    op.drop_table("shredcat_login_failure")
