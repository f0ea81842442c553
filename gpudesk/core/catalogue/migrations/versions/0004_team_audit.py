"""who added or changed each row and when, and a version per catalogue row (shared databases)

Revision ID: 0004_team_audit
Revises: 0003_models_and_catalogue
Create Date: 2026-11-25 13:10:00

Every catalogue row gets added_by/added_at/updated_by (the name of the person, from gpudesk's
settings or the computer's login) and a version that each write raises by one, so that two people
editing the same row at once are told instead of one overwriting the other. Imported benchmark
files record who imported them; answers about a file's hardware record who gave them.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_team_audit"
down_revision = "0003_models_and_catalogue"
branch_labels = None
depends_on = None

# frozen here (not read from the code) so this script keeps doing what it did
CATALOGUE_TABLES = ("accelerators", "systems", "cloud_offerings", "price_observations", "grid_regions",
                    "interconnects", "cloud_price_history", "embodied_carbon", "models", "sources")


def upgrade() -> None:
    for table in CATALOGUE_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("added_by", sa.String(length=120), nullable=False, server_default=""))
            batch.add_column(sa.Column("added_at", sa.String(length=32), nullable=False, server_default=""))
            batch.add_column(sa.Column("updated_by", sa.String(length=120), nullable=False, server_default=""))
            batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
    with op.batch_alter_table("bench_imports") as batch:
        batch.add_column(sa.Column("imported_by", sa.String(length=120), nullable=False, server_default=""))
    with op.batch_alter_table("bench_answers") as batch:
        batch.add_column(sa.Column("updated_by", sa.String(length=120), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("bench_answers") as batch:
        batch.drop_column("updated_by")
    with op.batch_alter_table("bench_imports") as batch:
        batch.drop_column("imported_by")
    for table in CATALOGUE_TABLES:
        with op.batch_alter_table(table) as batch:
            for column in ("version", "updated_by", "added_at", "added_by"):
                batch.drop_column(column)
