"""imported benchmark results

Revision ID: 0002_benchmarks
Revises: 0001_initial
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = '0002_benchmarks'
down_revision = '0001_initial'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('bench_imports',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('file_hash', sa.String(length=64), nullable=False),
    sa.Column('source_file', sa.Text(), nullable=False),
    sa.Column('format', sa.String(length=40), nullable=False),
    sa.Column('imported_at', sa.String(length=32), nullable=False),
    sa.Column('size_bytes', sa.Integer(), nullable=False),
    sa.Column('records', sa.Integer(), nullable=False),
    sa.Column('stored', sa.Integer(), nullable=False),
    sa.Column('duplicates', sa.Integer(), nullable=False),
    sa.Column('problems', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('bench_imports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_imports_file_hash'), ['file_hash'], unique=True)

    op.create_table('bench_answers',
    sa.Column('key', sa.String(length=400), nullable=False),
    sa.Column('accelerator_id', sa.String(length=120), nullable=True),
    sa.Column('accelerator_count', sa.Integer(), nullable=True),
    sa.Column('model', sa.JSON(), nullable=False),
    sa.Column('updated_at', sa.String(length=32), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('bench_measurements',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('import_id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('format', sa.String(length=40), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('statistic', sa.String(length=40), nullable=False),
    sa.Column('value', sa.Float(), nullable=False),
    sa.Column('unit', sa.String(length=16), nullable=False),
    sa.Column('stddev', sa.Float(), nullable=True),
    sa.Column('hardware_text', sa.Text(), nullable=False),
    sa.Column('hardware_key', sa.Text(), nullable=False),
    sa.Column('accelerator_id', sa.String(length=120), nullable=True),
    sa.Column('accelerator_count', sa.Integer(), nullable=True),
    sa.Column('match_confidence', sa.String(length=8), nullable=False),
    sa.Column('match_reason', sa.Text(), nullable=False),
    sa.Column('cpu_only', sa.Boolean(), nullable=False),
    sa.Column('workload', sa.JSON(), nullable=False),
    sa.Column('conditions', sa.JSON(), nullable=False),
    sa.Column('source_file', sa.Text(), nullable=False),
    sa.Column('record_index', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['import_id'], ['bench_imports.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('bench_measurements', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_measurements_accelerator_id'), ['accelerator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_measurements_content_hash'), ['content_hash'], unique=True)
        batch_op.create_index(batch_op.f('ix_bench_measurements_hardware_key'), ['hardware_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_measurements_import_id'), ['import_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_measurements_metric'), ['metric'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('bench_measurements', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_measurements_metric'))
        batch_op.drop_index(batch_op.f('ix_bench_measurements_import_id'))
        batch_op.drop_index(batch_op.f('ix_bench_measurements_hardware_key'))
        batch_op.drop_index(batch_op.f('ix_bench_measurements_content_hash'))
        batch_op.drop_index(batch_op.f('ix_bench_measurements_accelerator_id'))
    op.drop_table('bench_measurements')
    op.drop_table('bench_answers')
    with op.batch_alter_table('bench_imports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_imports_file_hash'))
    op.drop_table('bench_imports')
