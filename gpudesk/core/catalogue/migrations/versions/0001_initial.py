"""initial catalogue schema

Revision ID: 0001_initial
Revises: 
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op

revision = '0001_initial'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('accelerators',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('vendor', sa.Text(), nullable=True),
    sa.Column('family', sa.Text(), nullable=True),
    sa.Column('architecture', sa.Text(), nullable=True),
    sa.Column('year', sa.Integer(), nullable=True),
    sa.Column('device_class', sa.Text(), nullable=True),
    sa.Column('kind', sa.Text(), nullable=True),
    sa.Column('form_factor', sa.Text(), nullable=True),
    sa.Column('memory_gb', sa.Float(), nullable=True),
    sa.Column('memory_type', sa.Text(), nullable=True),
    sa.Column('mem_bandwidth_gbs', sa.Float(), nullable=True),
    sa.Column('memory_shared', sa.Boolean(), nullable=True),
    sa.Column('tdp_w', sa.Float(), nullable=True),
    sa.Column('fp64_tflops', sa.Float(), nullable=True),
    sa.Column('fp64_tensor_tflops', sa.Float(), nullable=True),
    sa.Column('fp32_tflops', sa.Float(), nullable=True),
    sa.Column('tf32_tflops', sa.Float(), nullable=True),
    sa.Column('fp16_tflops', sa.Float(), nullable=True),
    sa.Column('bf16_tflops', sa.Float(), nullable=True),
    sa.Column('fp8_tflops', sa.Float(), nullable=True),
    sa.Column('int8_tops', sa.Float(), nullable=True),
    sa.Column('fp4_tflops', sa.Float(), nullable=True),
    sa.Column('cuda_cores', sa.Integer(), nullable=True),
    sa.Column('tensor_cores', sa.Integer(), nullable=True),
    sa.Column('intra_link', sa.Text(), nullable=True),
    sa.Column('intra_link_gbs', sa.Float(), nullable=True),
    sa.Column('pcie_gen', sa.Integer(), nullable=True),
    sa.Column('ecc', sa.Boolean(), nullable=True),
    sa.Column('mig', sa.Integer(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('date', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('catalogue_meta',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('cloud_offerings',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('provider', sa.Text(), nullable=True),
    sa.Column('instance_type', sa.Text(), nullable=True),
    sa.Column('accelerator', sa.Text(), nullable=True),
    sa.Column('accelerator_count', sa.Integer(), nullable=True),
    sa.Column('vcpus', sa.Integer(), nullable=True),
    sa.Column('memory_gb', sa.Float(), nullable=True),
    sa.Column('region', sa.Text(), nullable=True),
    sa.Column('usd_per_hour', sa.Float(), nullable=True),
    sa.Column('usd_per_hour_spot', sa.Float(), nullable=True),
    sa.Column('usd_per_hour_reserved', sa.Float(), nullable=True),
    sa.Column('reserved_term', sa.Text(), nullable=True),
    sa.Column('intra_link', sa.Text(), nullable=True),
    sa.Column('inter_link', sa.Text(), nullable=True),
    sa.Column('date', sa.Text(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('grid_regions',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('country', sa.Text(), nullable=True),
    sa.Column('grid_gco2e_per_kwh', sa.Float(), nullable=True),
    sa.Column('grid_year', sa.Integer(), nullable=True),
    sa.Column('grid_source', sa.Text(), nullable=True),
    sa.Column('electricity_usd_per_kwh', sa.Float(), nullable=True),
    sa.Column('electricity_year', sa.Integer(), nullable=True),
    sa.Column('electricity_source', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('interconnects',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('family', sa.Text(), nullable=True),
    sa.Column('generation', sa.Text(), nullable=True),
    sa.Column('unidirectional_gbs', sa.Float(), nullable=True),
    sa.Column('bidirectional_gbs', sa.Float(), nullable=True),
    sa.Column('lanes_or_ports', sa.Text(), nullable=True),
    sa.Column('year', sa.Integer(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('date', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('price_observations',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('item', sa.Text(), nullable=True),
    sa.Column('kind', sa.Text(), nullable=True),
    sa.Column('usd', sa.Float(), nullable=True),
    sa.Column('date', sa.Text(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('sources',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('title', sa.Text(), nullable=True),
    sa.Column('publisher', sa.Text(), nullable=True),
    sa.Column('url', sa.Text(), nullable=True),
    sa.Column('kind', sa.Text(), nullable=True),
    sa.Column('published', sa.Text(), nullable=True),
    sa.Column('accessed', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('systems',
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('vendor', sa.Text(), nullable=True),
    sa.Column('kind', sa.Text(), nullable=True),
    sa.Column('accelerator', sa.Text(), nullable=True),
    sa.Column('accelerator_count', sa.Integer(), nullable=True),
    sa.Column('cpu', sa.Text(), nullable=True),
    sa.Column('system_memory_gb', sa.Float(), nullable=True),
    sa.Column('system_power_w', sa.Float(), nullable=True),
    sa.Column('intra_link', sa.Text(), nullable=True),
    sa.Column('nic', sa.Text(), nullable=True),
    sa.Column('nic_count', sa.Integer(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('date', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('field_sources', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('workload_presets',
    sa.Column('id', sa.String(length=120), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('spec', sa.JSON(), nullable=False),
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )


def downgrade() -> None:
    op.drop_table('workload_presets')
    op.drop_table('systems')
    op.drop_table('sources')
    op.drop_table('price_observations')
    op.drop_table('interconnects')
    op.drop_table('grid_regions')
    op.drop_table('cloud_offerings')
    op.drop_table('catalogue_meta')
    op.drop_table('accelerators')
