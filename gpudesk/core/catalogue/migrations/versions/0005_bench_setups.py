"""benchmark measurements share their setup: one bench_setups row per setup of an import

Revision ID: 0005_bench_setups
Revises: 0004_team_audit
Create Date: 2026-11-27 10:30:00

Until now every measurement row repeated its setup: the hardware as named and as matched (with
the sentence saying why), the whole workload and the whole conditions, about 1 KB a row. A
llama-bench file of 100,000 records has a handful of setups, so its import spent most of its
time writing the same texts again. The setup now has its own row, and a measurement keeps only
its figure and what it adds to the setup's workload and conditions. Reading a measurement back
joins the two and gives the same values as before (the upgrade test checks each row).

The upgrade moves the rows over keeping their ids: rows of one import with the same hardware,
workload and conditions share a setup; for llama-bench rows the per-test fields (token counts,
depth, test name, repetitions, test time) are what a row adds, as the importer now writes them.
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0005_bench_setups"
down_revision = "0004_team_audit"
branch_labels = None
depends_on = None

# frozen here (not read from the code) so this script keeps doing what it did
LLAMA_BENCH = "llama-bench"
LLAMA_ROW_WORKLOAD = ("prompt_tokens", "gen_tokens", "depth", "test")
LLAMA_ROW_CONDITIONS = ("repetitions", "test_time")
SETUP_FIELDS = ("format", "hardware_text", "hardware_key", "accelerator_id", "accelerator_count", "match_confidence",
                "match_reason", "cpu_only")
ROW_FIELDS = ("content_hash", "metric", "statistic", "value", "unit", "stddev", "record_index")
CHUNK = 5000

_OLD_INDEXES = ("accelerator_id", "content_hash", "hardware_key", "import_id", "metric")


def _setups_table() -> None:
    op.create_table(
        "bench_setups",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.Column("hardware_text", sa.Text(), nullable=False),
        sa.Column("hardware_key", sa.Text(), nullable=False),
        sa.Column("accelerator_id", sa.String(length=120), nullable=True),
        sa.Column("accelerator_count", sa.Integer(), nullable=True),
        sa.Column("match_confidence", sa.String(length=8), nullable=False),
        sa.Column("match_reason", sa.Text(), nullable=False),
        sa.Column("cpu_only", sa.Boolean(), nullable=False),
        sa.Column("workload", sa.JSON(), nullable=False),
        sa.Column("conditions", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["import_id"], ["bench_imports.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_bench_setups_import_id", "bench_setups", ["import_id"])
    op.create_index("ix_bench_setups_hardware_key", "bench_setups", ["hardware_key"])
    op.create_index("ix_bench_setups_accelerator_id", "bench_setups", ["accelerator_id"])


def _measurements_table() -> None:
    op.create_table(
        "bench_measurements",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("setup_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("statistic", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("unit", sa.String(length=16), nullable=False),
        sa.Column("stddev", sa.Float(), nullable=True),
        sa.Column("workload", sa.JSON(), nullable=False),
        sa.Column("conditions", sa.JSON(), nullable=False),
        sa.Column("record_index", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["setup_id"], ["bench_setups.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_bench_measurements_content_hash", "bench_measurements", ["content_hash"], unique=True)
    op.create_index("ix_bench_measurements_setup_id", "bench_measurements", ["setup_id"])


def _json(value) -> dict:
    """A JSON column's value as read by plain SQL: text on SQLite, already decoded on PostgreSQL."""
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


def _split(row) -> tuple[tuple, dict, dict, dict, dict]:
    """(setup key, setup workload, setup conditions, row workload, row conditions) of an old row."""
    workload, conditions = _json(row.workload), _json(row.conditions)
    own_workload: dict = {}
    own_conditions: dict = {}
    if row.format == LLAMA_BENCH:
        own_workload = {k: workload.pop(k) for k in LLAMA_ROW_WORKLOAD if k in workload}
        own_conditions = {k: conditions.pop(k) for k in LLAMA_ROW_CONDITIONS if k in conditions}
    key = (row.import_id, *(getattr(row, f) for f in SETUP_FIELDS), json.dumps(workload, sort_keys=True),
           json.dumps(conditions, sort_keys=True))
    return key, workload, conditions, own_workload, own_conditions


def upgrade() -> None:
    for column in _OLD_INDEXES:
        op.drop_index(f"ix_bench_measurements_{column}", table_name="bench_measurements")
    op.rename_table("bench_measurements", "bench_measurements_0004")
    _setups_table()
    _measurements_table()
    bind = op.get_bind()
    setups = sa.table("bench_setups", *(sa.column(c) for c in ("id", "import_id", *SETUP_FIELDS)),
                      sa.column("workload", sa.JSON()), sa.column("conditions", sa.JSON()))
    rows = sa.table("bench_measurements", *(sa.column(c) for c in ("id", "setup_id", *ROW_FIELDS)),
                    sa.column("workload", sa.JSON()), sa.column("conditions", sa.JSON()))
    ids: dict[tuple, int] = {}
    last = 0
    while True:
        chunk = bind.execute(sa.text("SELECT * FROM bench_measurements_0004 WHERE id > :last ORDER BY id LIMIT :n"),
                             {"last": last, "n": CHUNK}).all()
        if not chunk:
            break
        new_setups, new_rows = [], []
        for row in chunk:
            key, workload, conditions, own_workload, own_conditions = _split(row)
            if key not in ids:
                ids[key] = len(ids) + 1
                new_setups.append({"id": ids[key], "import_id": row.import_id, "workload": workload,
                                   "conditions": conditions, **{f: getattr(row, f) for f in SETUP_FIELDS}})
            new_rows.append({"id": row.id, "setup_id": ids[key], "workload": own_workload,
                             "conditions": own_conditions, **{f: getattr(row, f) for f in ROW_FIELDS}})
        if new_setups:
            bind.execute(setups.insert(), new_setups)
        bind.execute(rows.insert(), new_rows)
        last = chunk[-1].id
    op.drop_table("bench_measurements_0004")
    if bind.dialect.name == "postgresql":  # explicit ids leave the sequences behind: start them after the last
        for table in ("bench_setups", "bench_measurements"):
            bind.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                                 f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"))


def downgrade() -> None:
    bind = op.get_bind()
    old = bind.execute(sa.text(
        "SELECT m.id, s.import_id, m.content_hash, s.format, m.metric, m.statistic, m.value, m.unit, m.stddev, "
        "s.hardware_text, s.hardware_key, s.accelerator_id, s.accelerator_count, s.match_confidence, "
        "s.match_reason, s.cpu_only, s.workload AS setup_workload, m.workload, s.conditions AS setup_conditions, "
        "m.conditions, i.source_file, m.record_index FROM bench_measurements m "
        "JOIN bench_setups s ON s.id = m.setup_id JOIN bench_imports i ON i.id = s.import_id ORDER BY m.id")).all()
    op.drop_table("bench_measurements")
    op.drop_table("bench_setups")
    op.create_table(
        "bench_measurements",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("statistic", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("unit", sa.String(length=16), nullable=False),
        sa.Column("stddev", sa.Float(), nullable=True),
        sa.Column("hardware_text", sa.Text(), nullable=False),
        sa.Column("hardware_key", sa.Text(), nullable=False),
        sa.Column("accelerator_id", sa.String(length=120), nullable=True),
        sa.Column("accelerator_count", sa.Integer(), nullable=True),
        sa.Column("match_confidence", sa.String(length=8), nullable=False),
        sa.Column("match_reason", sa.Text(), nullable=False),
        sa.Column("cpu_only", sa.Boolean(), nullable=False),
        sa.Column("workload", sa.JSON(), nullable=False),
        sa.Column("conditions", sa.JSON(), nullable=False),
        sa.Column("source_file", sa.Text(), nullable=False),
        sa.Column("record_index", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["import_id"], ["bench_imports.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    for column in _OLD_INDEXES:
        op.create_index(f"ix_bench_measurements_{column}", "bench_measurements", [column],
                        unique=column == "content_hash")
    table = sa.table("bench_measurements", *(sa.column(c) for c in (
        "id", "import_id", "content_hash", "format", "metric", "statistic", "value", "unit", "stddev",
        "hardware_text", "hardware_key", "accelerator_id", "accelerator_count", "match_confidence", "match_reason",
        "cpu_only", "source_file", "record_index")), sa.column("workload", sa.JSON()), sa.column("conditions", sa.JSON()))
    values = []
    for r in old:
        row = dict(r._mapping)
        row["workload"] = {**_json(row.pop("setup_workload")), **_json(row["workload"])}
        row["conditions"] = {**_json(row.pop("setup_conditions")), **_json(row["conditions"])}
        values.append(row)
    if values:
        bind.execute(table.insert(), values)
