"""Idempotency keys are scoped per principal as well as per table.

``shredcat_commit_key`` gains ``principal`` (who committed: a token's identity over REST, the
library caller's name otherwise) and its primary key becomes ``(table_id, principal,
idempotency_key)``, so two callers can never replay (or collide with) each other's keys. Keys
stored before this revision cannot be attributed; they are given to the library's default principal
``library``, so a CLI/library replay still finds them, and a REST replay runs the commit again
(which answers ``unchanged`` for files still live).

The downgrade keeps one key per ``(table_id, idempotency_key)`` (the earliest) and drops the others:
the old primary key cannot hold the same key of two principals.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The principal of keys stored before this revision (service.catalog.service.LIBRARY_PRINCIPAL then).
LEGACY_PRINCIPAL = "library"


def upgrade() -> None:
    with op.batch_alter_table("shredcat_commit_key", recreate="always") as batch:
        batch.add_column(sa.Column("principal", sa.String(), nullable=False, server_default=LEGACY_PRINCIPAL))
        batch.drop_constraint("pk_shredcat_commit_key", type_="primary")
        batch.create_primary_key("pk_shredcat_commit_key", ["table_id", "principal", "idempotency_key"])
    with op.batch_alter_table("shredcat_commit_key") as batch:
        batch.alter_column("principal", existing_type=sa.String(), server_default=None)


def downgrade() -> None:
    op.execute(
        "DELETE FROM shredcat_commit_key WHERE EXISTS (SELECT 1 FROM shredcat_commit_key o"
        " WHERE o.table_id = shredcat_commit_key.table_id"
        " AND o.idempotency_key = shredcat_commit_key.idempotency_key"
        " AND (o.created_at < shredcat_commit_key.created_at"
        "  OR (o.created_at = shredcat_commit_key.created_at AND o.principal < shredcat_commit_key.principal)))"
    )
    with op.batch_alter_table("shredcat_commit_key", recreate="always") as batch:
        batch.drop_constraint("pk_shredcat_commit_key", type_="primary")
        batch.create_primary_key("pk_shredcat_commit_key", ["table_id", "idempotency_key"])
        batch.drop_column("principal")
