"""cost factors: the figures a cost of ownership counts beyond the accelerators

Revision ID: 0006_cost_factors
Revises: 0005_bench_setups
Create Date: 2026-11-28 08:00:00

One row per dated, sourced observation of a host server's price, a NIC's, a switch's and its port
count, a switch link's (cable and its two ends), and a facility's capex per kW of IT power
(gpudesk.core.estimate.tco). The table starts empty; the bundled catalogue fills it on load.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_cost_factors"
down_revision = "0005_bench_setups"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cost_factors",
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("updated_at", sa.String(length=32), nullable=False),
        sa.Column("added_by", sa.String(length=120), server_default="", nullable=False),
        sa.Column("added_at", sa.String(length=32), server_default="", nullable=False),
        sa.Column("updated_by", sa.String(length=120), server_default="", nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("id", sa.String(length=120), nullable=False),
        sa.Column("component", sa.Text(), nullable=True),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("applies_to", sa.Text(), nullable=True),
        sa.Column("date", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("field_sources", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("cost_factors")
